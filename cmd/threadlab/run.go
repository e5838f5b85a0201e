package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/env/hosts"
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/internal/yamlpos"
	"github.com/threadlab/threadlab/pipeline"
	"github.com/threadlab/threadlab/pipeline/cost"
	"github.com/threadlab/threadlab/render/console"
	"github.com/threadlab/threadlab/store/record"
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
	hostsFile := fs.String("hosts", "", "a host inventory (hosts.yaml): run the target, services and load generators on those hosts over ssh")
	dryRun := fs.Bool("dry-run", false, "print the cells, forks x iterations and the estimated wall time (from the last run under --data), and run nothing")
	generators := fs.Int("generators", 0, "with --dry-run: also print how the load splits over this many generator hosts and whether each share fits its ports and descriptors")
	repeat := fs.Int("repeat", 1, "run the manifest this many times in a row, each a run directory of its own: the run-to-run level, which the experiment page combines across comparable runs")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: threadlab run [flags] experiments/<name>.yaml\n       threadlab run --hosts hosts.yaml [flags] experiments/<name>.yaml\n       threadlab run --dry-run [--profile P] experiments/<name>.yaml\n       threadlab run --resume data/<name>/<run-id>")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args, stderr); help || err != nil {
		return err
	}
	*reportsDir = reportsBeside(fs, *dataDir, *reportsDir)
	var m *experiments.Manifest
	switch {
	case *resume != "" && fs.NArg() == 0:
	case *resume == "" && fs.NArg() == 1:
		var err error
		m, err = experiments.Load(fs.Arg(0), *profile)
		if err != nil && *dryRun && *generators != 0 && experiments.HostOnly(err) {
			// Planned for other hosts: this machine's limits are a note.
			fmt.Fprintf(stderr, "note: not on this machine, which the plan below is not for:\n%v\n", err)
			err = nil
		}
		if err != nil {
			return counted("the manifest", err)
		}
		for _, w := range experiments.Lint(m) {
			fmt.Fprintln(stderr, w)
		}
	default:
		fs.Usage()
		return usagef("run takes one manifest, or --resume with a run directory")
	}
	switch {
	case *repeat < 1:
		return usagef("--repeat %d: give 1 or more runs", *repeat)
	case *repeat > 1 && (*resume != "" || *runID != "" || *dryRun):
		return usagef("--repeat names each run by its start time: not with --resume, --run-id or --dry-run")
	}
	if *dryRun {
		if m == nil {
			return usagef("--dry-run plans a manifest: give experiments/<name>.yaml, not --resume")
		}
		if err := readDataDir(fs, *dataDir); err != nil {
			return err
		}
		if *hostsFile != "" {
			// The inventory is checked here too: a dry run that ignored it
			// left a real run over ssh the only way to find its mistakes.
			inv, err := hosts.Load(*hostsFile)
			if err != nil {
				return counted("the host inventory", err)
			}
			if *generators == 0 {
				*generators = len(inv.Load)
			}
			fmt.Fprintf(stdout, "hosts (%s): %s, %d load generator host(s)\n", *hostsFile, inv.Target.Name(), len(inv.Load))
		}
		e, err := cost.PredictOn(m, *dataDir, env.CPUModel())
		if err != nil {
			return err
		}
		e.Write(stdout)
		if *generators != 0 {
			return writeCapacity(stdout, m, *generators)
		}
		return nil
	}
	printOwnCommands(stderr, m, *resume)
	opt := pipeline.Options{
		DataDir: *dataDir, ReportsDir: *reportsDir, TargetsDir: *targetsDir, RunID: *runID, Resume: *resume,
		Command: reproduce(m, *profile, *resume), Log: stderr,
	}
	if *hostsFile != "" {
		inv, err := hosts.Load(*hostsFile)
		if err != nil {
			return counted("the host inventory", err)
		}
		opt.Hosts = inv
		opt.Command += " (on the hosts of " + *hostsFile + ": threadlab run --hosts " + *hostsFile + ")"
	}
	if exe, err := os.Executable(); err == nil {
		// With pinning.services the downstream service runs as this
		// binary's own subcommand, pinned apart from the load generator.
		opt.Downstream = []string{exe, "downstream", "--port", "{port}", "--delay", "{delay}"}
	}
	// The progress ETA starts from the plan's estimate (the costs the last
	// run measured, else the manifest's) and is refined by the forks
	// measured as the run goes; a resumed run has no manifest here, so
	// its ETA starts from what it measures.
	eta := pipeline.NewETA(nil)
	if m != nil {
		if e, err := cost.PredictOn(m, *dataDir, env.CPUModel()); err == nil {
			eta = pipeline.NewETA(&e)
		}
	}
	if !*quiet {
		if f, ok := stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			opt.Progress = pipeline.Show(&console.Bar{W: stderr, ETA: eta})
			opt.Log = io.Discard
			if f, ok := stderr.(*os.File); ok && !term.IsTerminal(int(f.Fd())) {
				opt.Log = stderr
			}
		} else {
			opt.Progress = pipeline.Show(&console.Lines{W: stdout, ETA: eta})
		}
	}
	var dirs []string
	for i := 1; i <= *repeat; i++ {
		if *repeat > 1 {
			fmt.Fprintf(stdout, "== run %d of %d\n", i, *repeat)
		}
		s, err := pipeline.Run(ctx, m, opt)
		if s != nil {
			if serr := console.Summary(stdout, s.Dir); serr != nil {
				fmt.Fprintf(stderr, "summary: %v\n", serr)
			}
			fmt.Fprintf(stdout, "\ndata:   %s\n", s.Dir)
			if s.ReportPath != "" {
				fmt.Fprintf(stdout, "report: %s\n", s.ReportPath)
			}
			dirs = append(dirs, s.Dir)
		}
		if err != nil && ctx.Err() != nil && s != nil {
			return fmt.Errorf("interrupted: the finished trials are kept in %s; continue with: threadlab run --resume %s%s", s.Dir, s.Dir, repeatLeft(*repeat, i))
		}
		if err != nil {
			return fmt.Errorf("%w%s", err, repeatLeft(*repeat, i))
		}
	}
	if len(dirs) > 1 {
		fmt.Fprintf(stdout, "\n%d runs: %s\ncompare them with: threadlab diff %s %s (the experiment page combines comparable runs)\n", len(dirs), strings.Join(dirs, " "), dirs[0], dirs[len(dirs)-1])
	}
	return nil
}

// repeatLeft says how many of --repeat's runs did not start.
func repeatLeft(repeat, done int) string {
	if repeat <= 1 || done >= repeat {
		return ""
	}
	return fmt.Sprintf(" (run %d of --repeat %d; the %d after it did not start)", done, repeat, repeat-done)
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

// reportsBeside keeps a scratch run's pages with its data: given --data but
// not --reports, the site goes to a "reports" folder beside the data folder
// (as data/ and reports/ sit side by side in the repository), so
// `run --data /tmp/x/data` never writes pages into the repository's
// published reports/ for data that is not there.
func reportsBeside(fs *flag.FlagSet, data, reports string) string {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["data"] && !set["reports"] {
		return filepath.Join(filepath.Dir(filepath.Clean(data)), "reports")
	}
	return reports
}

// counted heads a loader's Problems (a manifest's, a host inventory's:
// internal/yamlpos) with how many there are: "the manifest has 3
// problem(s):", then one per line. Any other error is returned as it is.
func counted(what string, err error) error {
	var ps yamlpos.Problems
	if errors.As(err, &ps) {
		return fmt.Errorf("%s has %d problem(s):\n%w", what, len(ps), err)
	}
	return err
}

// printOwnCommands prints, before the run starts anything, each program of
// the manifest's own that it will start (a command variant's argv, as
// `threadlab lint` prints it); the risky JVM options and environment of
// built-in targets are lint warnings, printed with the manifest's other
// warnings. A resumed run's manifest.yaml came with its data directory and
// was never linted here, so its warnings are printed too; one that does not
// load is left to pipeline.Run, which refuses it with the reason.
func printOwnCommands(w io.Writer, m *experiments.Manifest, resume string) {
	src := ""
	if m != nil {
		src = m.File
	} else {
		src = filepath.Join(resume, record.ManifestFile)
		var err error
		if m, err = experiments.Load(src, ""); err != nil {
			return
		}
		for _, lw := range experiments.Lint(m) {
			fmt.Fprintln(w, lw)
		}
	}
	for _, c := range experiments.Commands(m) {
		if strings.HasSuffix(c.Field, ".command") {
			fmt.Fprintf(w, "%s: %s: runs: %s\n", src, c.Field, c)
		}
	}
}
