package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline"
	"github.com/threadlab/threadlab/pipeline/dimension"
	"github.com/threadlab/threadlab/pipeline/record"
	"github.com/threadlab/threadlab/pipeline/stats"
	"github.com/threadlab/threadlab/pipeline/steady"
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
	if *target <= 0 || *target >= 1 {
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
	p, err := readPilot(dir, *metric)
	if err != nil {
		return err
	}
	return printDimension(stdout, p, dimension.Target{HalfWidth: *target})
}

// runPilot runs the manifest with the pilot profile through the ordinary
// pipeline and returns its run directory. The pilot is only as rich as the
// pipeline: until trials.csv carries fork and iteration columns (the forks x
// iterations pipeline of issue 10), each trial is one fork with one
// iteration, and the plan says it cannot dimension iterations.
func runPilot(ctx context.Context, manifest, profile, dataDir, targetsDir string, stdout, stderr io.Writer) (string, error) {
	m, err := experiments.Load(manifest, profile)
	if err != nil {
		var ps experiments.Problems
		if errors.As(err, &ps) {
			return "", fmt.Errorf("the manifest has %d problem(s):\n%w", len(ps), err)
		}
		return "", err
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
		Progress: &pipeline.Lines{W: stderr},
	})
	if err != nil {
		return "", fmt.Errorf("pilot run: %w", err)
	}
	return s.Dir, nil
}

// pilot is what dimensioning needs from a run directory.
type pilot struct {
	Dir, Experiment, Profile, Metric, Group string
	HigherIsBetter                          bool
	ForkColumns                             bool // trials.csv has fork and iteration columns
	Cells                                   []pilotCell
	Costs                                   dimension.Costs
	StartS, WarmupS, WindowS, CoolS         float64 // medians behind Costs
	Notes                                   []string
}

type pilotCell struct {
	Name       string
	Forks      [][]float64 // steady iterations per fork, in iteration order
	Excluded   int         // iterations dropped before a fork's steady state
	Unsettled  int         // forks with no steady state (kept whole)
	Components dimension.Components
}

type forkKey struct{ cell, fork string }

// readPilot reads run.json, trials.csv and warmup.csv of dir. trials.csv is
// read by header, so it takes both the current layout and one with fork
// and iteration columns.
func readPilot(dir, metric string) (*pilot, error) {
	var meta record.Meta
	if err := record.ReadJSON(dir, record.RunFile, &meta); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a threadlab run directory (no %s): pass data/<experiment>/<run-id>", dir, record.RunFile)
		}
		return nil, err
	}
	if metric == "" {
		metric = meta.Primary
	}
	p := &pilot{Dir: dir, Experiment: meta.Experiment, Profile: meta.Profile, Metric: metric, Group: meta.Measured,
		HigherIsBetter: stats.HigherIsBetter(metric)}
	rows, err := readRows(dir, record.TrialsFile)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s has no trials: run the pilot to completion first", filepath.Join(dir, record.TrialsFile))
	}
	_, p.ForkColumns = rows[0]["fork"]
	_, hasIter := rows[0]["iteration"]
	p.ForkColumns = p.ForkColumns && hasIter
	if !p.ForkColumns {
		p.Notes = append(p.Notes, "trials.csv has no fork and iteration columns: each trial is treated as one fork with one iteration")
	}
	type iter struct {
		n int
		v float64
	}
	values := map[forkKey][]iter{}
	var order []string // cells in first-seen order
	var starts, windows, cools []float64
	for i, r := range rows {
		if r["group"] != p.Group || r["valid"] != "true" {
			continue
		}
		cell := r["variant"]
		if r["point"] != "" {
			cell += " " + r["point"]
		}
		v, err := num(r, metric)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", filepath.Join(dir, record.TrialsFile), i+2, err)
		}
		fk := forkKey{cell, r["trial"]}
		it := iter{n: 1, v: v}
		if p.ForkColumns {
			fk.fork = r["fork"]
			if it.n, err = strconv.Atoi(r["iteration"]); err != nil {
				return nil, fmt.Errorf("%s line %d: iteration %q is not a number", filepath.Join(dir, record.TrialsFile), i+2, r["iteration"])
			}
		}
		if !slices.Contains(order, cell) {
			order = append(order, cell)
		}
		values[fk] = append(values[fk], it)
		if s, _ := num(r, "startup_ms"); s > 0 {
			starts = append(starts, s/1000)
		}
		windows = append(windows, windowS(r))
		c, _ := num(r, "cooldown_ms")
		cools = append(cools, c/1000)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%s has no valid trials of group %q: nothing to dimension", filepath.Join(dir, record.TrialsFile), p.Group)
	}
	warm, err := warmupSeconds(dir, p.Group, p.ForkColumns)
	if err != nil {
		return nil, err
	}
	p.StartS, p.WarmupS, p.WindowS, p.CoolS = medianOf(starts), medianOf(warm), medianOf(windows), medianOf(cools)
	if len(starts) == 0 {
		p.Notes = append(p.Notes, "no trial recorded a start-up time (startup_ms 0: trials reused one JVM), so the fork cost holds no start")
	}
	p.Costs = dimension.Costs{ForkS: p.StartS + p.WarmupS, IterationS: p.WindowS + p.CoolS}

	for _, cell := range order {
		pc := pilotCell{Name: cell}
		var keys []forkKey
		for k := range values {
			if k.cell == cell {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, func(a, b forkKey) int { return cmpNumeric(a.fork+"/"+a.cell, b.fork+"/"+b.cell) })
		for _, k := range keys {
			its := values[k]
			slices.SortFunc(its, func(a, b iter) int { return a.n - b.n })
			x := make([]float64, len(its))
			for i, it := range its {
				x[i] = it.v
			}
			// Iterations before a fork's steady state are not the steady
			// state the plan is for (Barrett et al.): drop them, but keep a
			// fork that never settled whole and say so.
			res := steady.Classify(x, steady.Options{HigherIsBetter: p.HigherIsBetter})
			switch {
			case res.SteadyFrom < 0:
				pc.Unsettled++
			default:
				pc.Excluded += res.SteadyFrom
				x = x[res.SteadyFrom:]
			}
			pc.Forks = append(pc.Forks, x)
		}
		c, err := dimension.Estimate(pc.Forks)
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", cell, err)
		}
		pc.Components = c
		p.Cells = append(p.Cells, pc)
	}
	return p, nil
}

// windowS is how long the measured load ran: requests/rps (a timed
// window's duration, a burst's wall time), else wall_ms.
func windowS(r map[string]string) float64 {
	req, _ := num(r, "requests")
	rps, _ := num(r, "rps")
	if req > 0 && rps > 0 {
		return req / rps
	}
	w, _ := num(r, "wall_ms")
	return w / 1000
}

// warmupSeconds sums each fork's warm-up rounds in warmup.csv.
func warmupSeconds(dir, group string, forkColumns bool) ([]float64, error) {
	rows, err := readRows(dir, record.WarmupFile)
	if err != nil {
		return nil, err
	}
	sum := map[string]float64{}
	var keys []string
	for _, r := range rows {
		if r["group"] != group {
			continue
		}
		k := r["variant"] + "|" + r["point"] + "|" + r["trial"]
		if forkColumns {
			k = r["variant"] + "|" + r["point"] + "|" + r["fork"]
		}
		if _, ok := sum[k]; !ok {
			keys = append(keys, k)
		}
		sum[k] += windowS(r)
	}
	out := make([]float64, 0, len(keys))
	for _, k := range keys {
		out = append(out, sum[k])
	}
	return out, nil
}

// readRows reads a CSV of the run directory into maps keyed by header. A
// missing file is no rows; a torn last line (a crash mid-append) is dropped
// as record.ReadCSV does.
func readRows(dir, name string) ([]map[string]string, error) {
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	head := recs[0]
	var out []map[string]string
	for _, rec := range recs[1:] {
		if len(rec) != len(head) {
			continue // torn line
		}
		m := make(map[string]string, len(head))
		for i, h := range head {
			m[h] = rec[i]
		}
		out = append(out, m)
	}
	return out, nil
}

func num(r map[string]string, col string) (float64, error) {
	s, ok := r[col]
	if !ok {
		return 0, fmt.Errorf("no column %q", col)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("column %s: %q is not a number", col, s)
	}
	return v, nil
}

func cmpNumeric(a, b string) int {
	x, errA := strconv.Atoi(strings.SplitN(a, "/", 2)[0])
	y, errB := strconv.Atoi(strings.SplitN(b, "/", 2)[0])
	if errA == nil && errB == nil && x != y {
		return x - y
	}
	return strings.Compare(a, b)
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func printDimension(w io.Writer, p *pilot, t dimension.Target) error {
	dir := "lower"
	if p.HigherIsBetter {
		dir = "higher"
	}
	fmt.Fprintf(w, "pilot:   %s (%s, profile %s)\n", p.Dir, p.Experiment, p.Profile)
	fmt.Fprintf(w, "metric:  %s of group %s (%s is better)\n", p.Metric, p.Group, dir)
	fmt.Fprintf(w, "costs:   fork %.1f s (start %.1f s + warm-up %.1f s), iteration %.1f s (window %.1f s + cool-down %.1f s), medians\n",
		p.Costs.ForkS, p.StartS, p.WarmupS, p.Costs.IterationS, p.WindowS, p.CoolS)
	for _, n := range p.Notes {
		fmt.Fprintf(w, "note:    %s\n", n)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-24s %5s %6s %10s %19s %19s %s\n", "cell", "forks", "iters", "median", "sd within", "sd between", "steady state")
	var comps []dimension.Components
	for _, c := range p.Cells {
		k := c.Components
		comps = append(comps, k)
		within := "-"
		if !k.SingleIteration {
			within = sdPct(k.Within, k.Median)
		}
		ss := "all iterations"
		if c.Excluded > 0 {
			ss = fmt.Sprintf("%d warm-up iteration(s) excluded", c.Excluded)
		}
		if c.Unsettled > 0 {
			ss = fmt.Sprintf("%d fork(s) never settled", c.Unsettled)
		}
		fmt.Fprintf(w, "%-24s %5d %6.1f %10.4g %19s %19s %s\n", c.Name, k.Forks, k.Iterations, k.Median, within, sdPct(k.Between, k.Median), ss)
	}
	plan, err := dimension.Choose(comps, p.Costs, t)
	if err != nil {
		return fmt.Errorf("dimension %s: %w", p.Dir, err)
	}
	fmt.Fprintln(w)
	verb := "reaches"
	if !plan.Reached {
		verb = "does NOT reach"
	}
	fmt.Fprintf(w, "plan:    %d forks x %d iterations %s ±%.1f%% of the median at 95%% in every cell (predicted worst ±%.1f%%), %.0f s per cell, %.0f s for %d cells\n",
		plan.Forks, plan.Iterations, verb, 100*t.HalfWidth, 100*plan.HalfWidth, plan.WallS, plan.WallS*float64(len(p.Cells)), len(p.Cells))
	if !math.IsInf(plan.OptimalIterations, 1) {
		fmt.Fprintf(w, "         Kalibera & Jones' optimal iterations per fork r* = sqrt(c_fork·var_within / (c_iter·var_between)) = %.1f for the widest cell\n", plan.OptimalIterations)
	}
	if plan.Note != "" {
		fmt.Fprintf(w, "note:    %s\n", plan.Note)
	}
	fmt.Fprintf(w, "\npaste into the manifest:\nprofiles:\n  dimensioned:\n    # threadlab dimension --target %g --from %s\n    forks: %d\n    iterations: %d\n",
		t.HalfWidth, p.Dir, plan.Forks, plan.Iterations)
	return nil
}

// sdPct formats a variance as its standard deviation and as a percentage
// of the median.
func sdPct(variance, median float64) string {
	sd := math.Sqrt(variance)
	return fmt.Sprintf("%.4g (%.1f%%)", sd, 100*sd/median)
}
