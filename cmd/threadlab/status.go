package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/cost"
	"github.com/threadlab/threadlab/render/report"
	"github.com/threadlab/threadlab/stats/dimension"
)

func init() {
	register("status", "list the catalog's experiments with the run each page shows, whether today's manifest changed since it (a new run, or only a re-evaluation, is due), its dead time and the planned time of a new run", runStatus)
}

// runStatus prints, per manifest (default experiments/*.yaml), the run its
// page headlines, whether the catalog's manifest has changed since that run
// (report.HeadlineOf), and the planned wall time of a new run
// (cost.Predict, as run --dry-run), then the publish line for the
// experiments that need a new run and the re-evaluation lines for those
// whose claims alone changed.
func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	dataDir := fs.String("data", "data", "the data directory holding <experiment>/<run-id>/")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: threadlab status [--data DIR] [experiments/X.yaml ...]   (default: every experiments/*.yaml)")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args, stderr); help || err != nil {
		return err
	}
	if err := readDataDir(fs, *dataDir); err != nil {
		return err
	}
	files := fs.Args()
	if len(files) == 0 {
		var err error
		if files, err = filepath.Glob("experiments/*.yaml"); err != nil || len(files) == 0 {
			return usagef("no manifests under experiments/: run it from the checkout, or name the manifests")
		}
		sort.Strings(files)
	}
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "experiment\theadline run\tmade by\tsince then\tdead\tnew run planned")
	var publish, reevaluate []string // experiment names; "manifest run-dir" argument pairs
	var overDead []string            // headline runs over the dead-time goal
	var total float64
	failed := 0
	cpu := env.CPUModel()
	otherCPU := map[string]bool{} // processor models of borrowed costs
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, err := experiments.Load(f, "")
		if m == nil {
			fmt.Fprintf(stderr, "threadlab status: %s\n", firstErrLine(err))
			failed++
			continue
		}
		h, err := report.HeadlineOf(*dataDir, m.Name)
		if err != nil {
			fmt.Fprintf(stderr, "threadlab status: %s: %v\n", m.Name, err)
			failed++
			continue
		}
		plan := "-"
		if e, err := cost.PredictOn(m, *dataDir, cpu); err == nil {
			plan = fmt.Sprintf("%.0f min", math.Ceil(e.WallS/60))
			if e.OtherCPU() {
				plan += " *"
				otherCPU[e.CPU] = true
			}
			if h.Run == "" || h.NewRun {
				total += e.WallS
			}
		}
		run, by, since := h.Run, h.Version, h.Drift
		switch {
		case h.Run == "":
			run, by, since = "-", "-", "no run yet"
			publish = append(publish, m.Name)
		case h.NewRun:
			publish = append(publish, m.Name)
		case h.Reevaluate:
			reevaluate = append(reevaluate, h.Manifest+" "+h.Dir)
		default:
			since = "current"
		}
		dead := "-"
		if h.Dead >= 0 {
			dead = fmt.Sprintf("%.0f%%", 100*h.Dead)
			if h.Dead > dimension.DefaultMaxDead {
				dead += " !"
				overDead = append(overDead, fmt.Sprintf("%s %.0f%%", m.Name, 100*h.Dead))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, run, by, since, dead, plan)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(otherCPU) > 0 {
		models := make([]string, 0, len(otherCPU))
		for k := range otherCPU {
			models = append(models, k)
		}
		sort.Strings(models)
		fmt.Fprintf(stdout, "\n* planned on costs measured on %s, not this host's %s: starts and warm-ups may differ (run --dry-run says which run)\n",
			strings.Join(models, ", "), cpu)
	}
	if len(overDead) > 0 {
		fmt.Fprintf(stdout, "\n! dead time (wall time outside measurement, run.json time) over the catalog's %.0f%% goal: %s; pipeline/cost's TestCatalogDeadTime names each exception's reason, and run --dry-run the iterations that meet the goal\n",
			100*dimension.DefaultMaxDead, strings.Join(overDead, ", "))
	}
	if len(publish) > 0 {
		fmt.Fprintf(stdout, "\n%d experiment(s) need a new run, about %.0f min planned on a quiet machine:\n  make publish EXPS=%q\n",
			len(publish), math.Ceil(total/60), strings.Join(publish, " "))
	}
	for _, d := range reevaluate {
		fmt.Fprintf(stdout, "claims changed since the run; judge it by today's: threadlab report --reevaluate --claims %s\n", d)
	}
	if failed > 0 {
		return fmt.Errorf("%d manifest(s) could not be read (above); `threadlab lint` says how to fix them", failed)
	}
	return nil
}

// firstErrLine is an error's first line: a loader error lists every
// problem, and lint is where to read them all.
func firstErrLine(err error) string {
	s, _, _ := strings.Cut(fmt.Sprint(err), "\n")
	return s
}
