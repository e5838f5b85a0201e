package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/threadlab/threadlab/render/report"
	"github.com/threadlab/threadlab/store/record"
)

func init() {
	register("report", "render reports/ from data/<experiment>/<run-id> (no rerun needed)", runReport)
}

// runReport renders the page of each run directory given, then the site
// index from the data directory they live in (a run's grandparent), so a
// report can always be rebuilt from data/ alone. An experiment directory
// (data/<experiment>) stands for all of its runs. It prints the paths
// written, one per line.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	reportsDir := fs.String("reports", "reports", "where the static site goes")
	reevaluate := fs.Bool("reevaluate", false, "recompute each run's claim verdicts with today's rules first, keeping the old ones in "+record.PreviousVerdictsFile)
	claimsFrom := fs.String("claims", "", "with --reevaluate: judge the run with the claims of this manifest (e.g. experiments/<name>.yaml edited in a pull request); "+
		"refused unless it describes the same measurement as the run; the run's manifest is kept as "+record.PreviousManifestFile)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: threadlab report [--reports DIR] [--reevaluate [--claims experiments/<name>.yaml]] data/<experiment>/<run-id> ...")
		fmt.Fprintln(stderr, "       threadlab report [--reports DIR] data/<experiment>   (every run of it)")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args, stderr); help || err != nil {
		return err
	}
	if *claimsFrom != "" && !*reevaluate {
		return usagef("--claims %s only applies with --reevaluate (the claims are judged when verdicts are recomputed)", *claimsFrom)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usagef("report needs a run directory, e.g. data/io-bound/<run-id> (threadlab run prints it)")
	}
	var runs []string
	for _, arg := range fs.Args() {
		dirs, err := runDirs(arg)
		if err != nil {
			return err
		}
		runs = append(runs, dirs...)
	}
	dataDir := ""
	for _, dir := range runs {
		d, err := dataDirOf(dir)
		if err != nil {
			return err
		}
		if dataDir != "" && d != dataDir {
			return usagef("runs from two data directories (%s and %s) would overwrite each other's index: render each with its own --reports", dataDir, d)
		}
		dataDir = d
	}
	for _, dir := range runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if *reevaluate {
			if err := reevaluateRun(dir, *claimsFrom, stdout); err != nil {
				return err
			}
		}
		r, err := record.Read(dir)
		if err != nil {
			return err
		}
		warnProblems(stderr, r)
		if other := pageTakenBy(r, dataDir); other != "" {
			return fmt.Errorf("%s: its page %s is %s's too (the same experiment and run id in %s): give one of them its own id in its %s", dir, pageKey(r), other, record.RunFile, record.RunFile)
		}
		page, err := report.Run(r, *reportsDir)
		if err != nil {
			return fmt.Errorf("render %s: %w", dir, err)
		}
		fmt.Fprintln(stdout, page)
	}
	index, err := report.Index(dataDir, *reportsDir)
	if err != nil {
		return fmt.Errorf("render the index of %s: %w", dataDir, err)
	}
	fmt.Fprintln(stdout, index)
	return nil
}

// runDirs resolves one argument: a run directory, or an experiment
// directory standing for its runs (oldest first, so the newest is rendered
// last, as it would have been).
func runDirs(arg string) ([]string, error) {
	dir := filepath.Clean(arg)
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist: pass a run directory, data/<experiment>/<run-id>, as threadlab run prints it", arg)
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is a file: pass its run directory, data/<experiment>/<run-id>", arg)
	}
	if _, err := os.Stat(filepath.Join(dir, record.RunFile)); err == nil {
		return []string{dir}, nil
	}
	runs, err := record.Runs(filepath.Dir(dir), filepath.Base(dir))
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s is not a threadlab run directory (no %s) and holds no runs: pass data/<experiment>/<run-id> or data/<experiment>", arg, record.RunFile)
	}
	return runs, nil
}

// dataDirOf is the data directory a run lives in: data/<experiment>/<run-id>
// -> data. The absolute path keeps "." or "run-id" arguments working.
func dataDirOf(run string) (string, error) {
	abs, err := filepath.Abs(run)
	if err != nil {
		return "", err
	}
	d := filepath.Dir(filepath.Dir(abs))
	if rel, err := filepath.Rel(mustGetwd(), d); err == nil && filepath.IsLocal(rel) {
		return rel, nil
	}
	return d, nil
}

func mustGetwd() string {
	wd, err := os.Getwd()
	if err != nil {
		return "/"
	}
	return wd
}
