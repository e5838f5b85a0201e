package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline"
	"github.com/threadlab/threadlab/render/console"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/stats/dimension"
)

func init() {
	register("dimension", "choose forks x iterations from a pilot's variance (Kalibera & Jones)", runDimension)
}

func runDimension(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dimension", flag.ContinueOnError)
	from := fs.String("from", "", "analyse this run directory (data/<experiment>/<run-id>) instead of running a pilot")
	profile := fs.String("profile", "smoke", "manifest profile the pilot runs with")
	target := fs.Float64("target", 0.05, "wanted CI half-width as a fraction of the median (0.05 = ±5%)")
	metric := fs.String("metric", "", "trials.csv metric to dimension (default: the run's primary metric)")
	dataDir := fs.String("data", "data", "where the pilot's run directory goes")
	targetsDir := fs.String("targets", "env/targets", "the Maven project of the built-in Spring targets")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: threadlab dimension [--profile P] [--target 0.05] experiments/<name>.yaml\n       threadlab dimension [--target 0.05] --from data/<name>/<run-id>")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args, stderr); help || err != nil {
		return err
	}
	if !(*target > 0 && *target < 1) { // NaN fails too
		return usagef("--target %v: give the half-width as a fraction of the median between 0 and 1, e.g. 0.05 for ±5%%", *target)
	}
	if *metric != "" && !stats.KnownMetric(*metric) {
		return usagef("--metric %q is not a metric of trials.csv (e.g. wall_ms, rps, p99_ms)", *metric)
	}
	dir := *from
	switch {
	case dir != "" && fs.NArg() == 0:
	case dir == "" && fs.NArg() == 1:
		var err error
		if dir, err = runPilot(ctx, fs.Arg(0), *profile, *dataDir, *targetsDir, stdout, stderr); err != nil {
			return err
		}
	default:
		fs.Usage()
		return usagef("dimension takes one manifest, or --from with a run directory")
	}
	p, err := dimension.ReadPilot(dir, *metric)
	if err != nil {
		return err
	}
	return p.Write(stdout, dimension.Target{HalfWidth: *target})
}

// runPilot runs the manifest with the pilot profile through the ordinary
// pipeline and returns its run directory. The pilot is only as rich as the
// pipeline: until trials.csv carries fork and iteration columns (the forks x
// iterations pipeline of issue 10), each trial is one fork with one
// iteration, and the plan says it cannot dimension iterations.
func runPilot(ctx context.Context, manifest, profile, dataDir, targetsDir string, stdout, stderr io.Writer) (string, error) {
	m, err := experiments.Load(manifest, profile)
	if err != nil {
		return "", counted("the manifest", err)
	}
	// Variance between forks needs forks: a smoke profile of one or two
	// gives an estimate of nothing or of one difference.
	if m.Forks.Min < dimension.PilotForks {
		fmt.Fprintf(stdout, "pilot: %d fork(s) per cell in profile %s; the pilot runs %d to estimate the variance between forks\n", m.Forks.Min, profile, dimension.PilotForks)
		m.Forks = experiments.Rounds{Min: dimension.PilotForks, Max: dimension.PilotForks}
	}
	id := "pilot-" + time.Now().UTC().Format("20060102T150405Z")
	fmt.Fprintf(stdout, "pilot: %s with profile %s -> %s\n", manifest, profile, filepath.Join(dataDir, m.Name, id))
	// A pilot is for its numbers, not for the site: its report goes to a
	// temporary directory that is removed (the data stay in dataDir).
	reports, err := os.MkdirTemp("", "threadlab-pilot-reports-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(reports)
	s, err := pipeline.Run(ctx, m, pipeline.Options{
		DataDir: dataDir, ReportsDir: reports, TargetsDir: targetsDir,
		RunID: id, Command: "threadlab dimension --profile " + profile + " " + manifest, Log: stderr,
		Progress: pipeline.Show(&console.Lines{W: stderr}),
	})
	if err != nil {
		return "", fmt.Errorf("pilot run: %w", err)
	}
	return s.Dir, nil
}
