package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline"
	"golang.org/x/term"
)

func init() {
	register("run", "run an experiment manifest: trials, data/ and reports/", runRun)
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	profile := fs.String("profile", "", "manifest profile to apply (smoke, full, ...; default none)")
	dataDir := fs.String("data", "data", "where run directories go")
	reportsDir := fs.String("reports", "reports", "where the static site goes")
	targetsDir := fs.String("targets", "env/targets", "the Maven project of the built-in Spring targets")
	runID := fs.String("run-id", "", "name of the run directory (default: UTC time stamp)")
	resume := fs.String("resume", "", "continue an interrupted run directory instead of starting one")
	quiet := fs.Bool("quiet", false, "no progress display")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: threadlab run [flags] experiments/<name>.yaml\n       threadlab run --resume data/<name>/<run-id>")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args, stderr); help || err != nil {
		return err
	}
	var m *experiments.Manifest
	switch {
	case *resume != "" && fs.NArg() == 0:
	case *resume == "" && fs.NArg() == 1:
		var err error
		if m, err = experiments.Load(fs.Arg(0), *profile); err != nil {
			var ps experiments.Problems
			if errors.As(err, &ps) {
				return fmt.Errorf("the manifest has %d problem(s):\n%w", len(ps), err)
			}
			return err
		}
		for _, w := range experiments.Lint(m) {
			fmt.Fprintln(stderr, w)
		}
	default:
		fs.Usage()
		return usagef("run takes one manifest, or --resume with a run directory")
	}
	opt := pipeline.Options{
		DataDir: *dataDir, ReportsDir: *reportsDir, TargetsDir: *targetsDir, RunID: *runID, Resume: *resume,
		Command: reproduce(m, *profile, *resume), Log: stderr,
	}
	if !*quiet {
		if f, ok := stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			opt.Progress = &pipeline.Bar{W: stderr}
			opt.Log = io.Discard
			if f, ok := stderr.(*os.File); ok && !term.IsTerminal(int(f.Fd())) {
				opt.Log = stderr
			}
		} else {
			opt.Progress = &pipeline.Lines{W: stdout}
		}
	}
	s, err := pipeline.Run(ctx, m, opt)
	if s != nil {
		if serr := pipeline.Summary(stdout, s.Dir); serr != nil {
			fmt.Fprintf(stderr, "summary: %v\n", serr)
		}
		fmt.Fprintf(stdout, "\ndata:   %s\n", s.Dir)
		if s.ReportPath != "" {
			fmt.Fprintf(stdout, "report: %s\n", s.ReportPath)
		}
	}
	if err != nil && ctx.Err() != nil && s != nil {
		return fmt.Errorf("interrupted: the finished trials are kept in %s; continue with: threadlab run --resume %s", s.Dir, s.Dir)
	}
	return err
}

// reproduce is the command a reader runs to repeat the run.
func reproduce(m *experiments.Manifest, profile, resume string) string {
	if m == nil {
		return "threadlab run --resume " + resume
	}
	name := strings.TrimSuffix(m.Name, ".yaml")
	if profile == "" || profile == "default" {
		return "make experiment EXP=" + name
	}
	return "make experiment EXP=" + name + " PROFILE=" + profile
}
