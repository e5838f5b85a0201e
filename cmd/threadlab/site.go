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
	register("site", "render the whole static site from data/: every run (oldest first, each linked to its comparison with the previous run) and the index", runSite)
}

// runSite renders every run of every experiment under --data into
// --reports, oldest first within an experiment so that each run page can
// link the comparison with the run before it, then the index. It prints
// the pages written, one per line; a run that cannot be rendered is
// reported and the others still are.
func runSite(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("site", flag.ContinueOnError)
	dataDir := fs.String("data", "data", "the data directory holding <experiment>/<run-id>/")
	reportsDir := fs.String("reports", "reports", "where the static site goes")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: threadlab site [--data DIR] [--reports DIR]")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args, stderr); help || err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return usagef("site takes no arguments (got %q): it renders everything under --data", fs.Args())
	}
	entries, err := os.ReadDir(*dataDir)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("data directory %s does not exist: pass --data with the directory that holds <experiment>/<run-id>/", *dataDir)
	}
	if err != nil {
		return fmt.Errorf("read --data %s: %w", *dataDir, err)
	}
	var failed []string
	pageOf := map[string]string{} // experiment/run id -> the run directory whose page it is
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dirs, err := record.Runs(*dataDir, e.Name())
		if err != nil {
			return fmt.Errorf("list runs of %s: %w", filepath.Join(*dataDir, e.Name()), err)
		}
		for _, dir := range dirs {
			if err := ctx.Err(); err != nil {
				return err
			}
			r, err := record.Read(dir)
			if err == nil {
				// Pages are named by run.json's experiment and id: a copied
				// run (or an edited id) would silently replace another's.
				key := pageKey(r)
				if other, ok := pageOf[key]; ok {
					err = fmt.Errorf("its page %s is %s's already (the same experiment and run id in run.json): give one of them its own id in its %s", key, other, record.RunFile)
				} else {
					pageOf[key] = dir
				}
			}
			if err == nil {
				var path string
				if path, err = report.Run(r, *reportsDir); err == nil {
					fmt.Fprintln(stdout, path)
					continue
				}
			}
			fmt.Fprintf(stderr, "threadlab site: %s: %v\n", dir, err)
			failed = append(failed, dir)
		}
	}
	path, err := report.Index(*dataDir, *reportsDir)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, path)
	if len(failed) > 0 {
		return fmt.Errorf("%d run(s) could not be rendered (see above); the rest of the site was", len(failed))
	}
	return nil
}

// pageKey is the page a run renders to, reports/<experiment>/<run-id>, as
// the report names it: run.json's fields, else the directory's names.
func pageKey(r *record.Run) string {
	exp, id := r.Meta.Experiment, r.Meta.ID
	if exp == "" {
		exp = filepath.Base(filepath.Dir(filepath.Clean(r.Dir)))
	}
	if id == "" {
		id = filepath.Base(filepath.Clean(r.Dir))
	}
	return exp + "/" + id
}

// pageTakenBy returns another run directory under dataDir whose page is r's
// (the same experiment and run id in run.json), or "" when there is none:
// `threadlab report` renders one run at a time, and a copied run (or an
// edited id) would otherwise silently replace another's page, as `site`
// refuses to let it.
func pageTakenBy(r *record.Run, dataDir string) string {
	key, self := pageKey(r), absPath(r.Dir)
	exps, err := os.ReadDir(dataDir)
	if err != nil {
		return ""
	}
	for _, e := range exps {
		if !e.IsDir() {
			continue
		}
		dirs, err := record.Runs(dataDir, e.Name())
		if err != nil {
			continue
		}
		for _, dir := range dirs {
			if absPath(dir) == self {
				continue
			}
			var meta record.Meta
			if record.ReadJSON(dir, record.RunFile, &meta) != nil {
				continue
			}
			if pageKey(&record.Run{Dir: dir, Meta: meta}) == key {
				return dir
			}
		}
	}
	return ""
}

// absPath is path made absolute (cleaned), or path cleaned if it cannot be.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}
