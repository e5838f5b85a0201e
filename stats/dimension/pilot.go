package dimension

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/threadlab/threadlab/measure/metric"
	tstats "github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/stats/steady"
	"github.com/threadlab/threadlab/store/record"
)

// PilotForks is the fewest forks per cell a pilot runs: with fewer, the
// variance between forks rests on one or two differences.
const PilotForks = 3

// Pilot is what dimensioning reads from a pilot's run directory: each
// cell's steady iterations per fork with their variance components, and
// the measured cost of a fork and of an iteration.
type Pilot struct {
	Dir, Experiment, Profile, Metric, Group string
	HigherIsBetter                          bool
	ForkColumns                             bool // trials.csv has fork and iteration columns
	Cells                                   []PilotCell
	Costs                                   Costs
	StartS, WarmupS, WindowS, CoolS         float64 // medians behind Costs
	Notes                                   []string
}

// PilotCell is one variant x point of the pilot.
type PilotCell struct {
	Name       string
	Forks      [][]float64 // steady iterations per fork, in iteration order
	Excluded   int         // iterations dropped before a fork's steady state
	Unsettled  int         // forks with no steady state (kept whole)
	Components Components
}

// ReadPilot reads run.json, trials.csv and warmup.csv of dir through
// store/record and estimates each cell's variance components from the
// valid trials of the measured group, metric name ("" for the run's
// primary metric). A run recorded before trials.csv had fork and iteration
// columns counts each trial as one fork of one iteration, and says so.
func ReadPilot(dir, name string) (*Pilot, error) {
	var meta record.Meta
	if err := record.ReadJSON(dir, record.RunFile, &meta); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a threadlab run directory (no %s): pass data/<experiment>/<run-id>", dir, record.RunFile)
		}
		return nil, err
	}
	if name == "" {
		name = meta.Primary
	}
	trialsPath := filepath.Join(dir, record.TrialsFile)
	def, ok := metric.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%s: %q is not a metric of %s (give --metric, e.g. wall_ms, rps, p99_ms)", dir, name, record.TrialsFile)
	}
	p := &Pilot{Dir: dir, Experiment: meta.Experiment, Profile: meta.Profile, Metric: name, Group: meta.Measured,
		HigherIsBetter: def.HigherIsBetter}
	cols, err := record.ReadHeader(dir, record.TrialsFile)
	if err != nil {
		return nil, err
	}
	trials, err := record.ReadCSV[record.Trial](dir, record.TrialsFile)
	if err != nil {
		return nil, err
	}
	if len(trials) == 0 {
		return nil, fmt.Errorf("%s has no trials: run the pilot to completion first", trialsPath)
	}
	if !slices.Contains(cols, def.Name) { // a metric's name is its trials.csv column
		return nil, fmt.Errorf("%s has no %s column: it was recorded before threadlab measured it (dimension another --metric)", trialsPath, def.Name)
	}
	p.ForkColumns = slices.Contains(cols, "fork") && slices.Contains(cols, "iteration")
	if !p.ForkColumns {
		p.Notes = append(p.Notes, "trials.csv has no fork and iteration columns: each trial is treated as one fork with one iteration")
	}
	type forkKey struct {
		cell string
		fork int // the fork, or the trial of a run without fork columns
	}
	type iter struct {
		n int
		v float64
	}
	values := map[forkKey][]iter{}
	var order []string // cells in first-seen order
	var starts, windows, cools []float64
	for _, t := range trials {
		if t.Group != p.Group || !t.Valid {
			continue
		}
		cell := cellName(t)
		fk := forkKey{cell, t.Trial}
		it := iter{n: 1, v: def.Value(t)}
		if p.ForkColumns {
			fk.fork, it.n = t.Fork, t.Iteration
		}
		if !slices.Contains(order, cell) {
			order = append(order, cell)
		}
		values[fk] = append(values[fk], it)
		if t.StartupMs > 0 {
			starts = append(starts, t.StartupMs/1000)
		}
		windows = append(windows, windowS(t))
		cools = append(cools, t.CoolDownMs/1000)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%s has no valid trials of group %q: nothing to dimension", trialsPath, p.Group)
	}
	warm, err := warmupSeconds(dir, p.Group, p.ForkColumns)
	if err != nil {
		return nil, err
	}
	p.StartS, p.WarmupS, p.WindowS, p.CoolS = medianOf(starts), medianOf(warm), medianOf(windows), medianOf(cools)
	if len(starts) == 0 {
		p.Notes = append(p.Notes, "no trial recorded a start-up time (startup_ms 0: trials reused one JVM), so the fork cost holds no start")
	}
	p.Costs = Costs{ForkS: p.StartS + p.WarmupS, IterationS: p.WindowS + p.CoolS, WindowS: p.WindowS}

	for _, cell := range order {
		pc := PilotCell{Name: cell}
		var keys []forkKey
		for k := range values {
			if k.cell == cell {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, func(a, b forkKey) int { return a.fork - b.fork })
		for _, k := range keys {
			its := values[k]
			slices.SortStableFunc(its, func(a, b iter) int { return a.n - b.n })
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
		c, err := Estimate(pc.Forks)
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", cell, err)
		}
		pc.Components = c
		p.Cells = append(p.Cells, pc)
	}
	return p, nil
}

// cellName is a trial's cell as the plan prints it: "variant" or
// "variant point".
func cellName(t record.Trial) string {
	if t.Point != "" {
		return t.Variant + " " + t.Point
	}
	return t.Variant
}

// windowS is how long the measured load ran: requests/rps (a timed
// window's duration, a burst's wall time), else wall_ms.
func windowS(t record.Trial) float64 {
	if t.Requests > 0 && t.RPS > 0 {
		return float64(t.Requests) / t.RPS
	}
	return t.WallMs / 1000
}

// warmupSeconds sums each fork's warm-up rounds in warmup.csv, in the
// order the forks first appear.
func warmupSeconds(dir, group string, forkColumns bool) ([]float64, error) {
	rows, err := record.ReadCSV[record.Trial](dir, record.WarmupFile)
	if err != nil {
		return nil, err
	}
	type key struct {
		variant, point string
		fork           int // the fork, or the trial without fork columns
	}
	sum := map[key]float64{}
	var keys []key
	for _, r := range rows {
		if r.Group != group {
			continue
		}
		k := key{r.Variant, r.Point, r.Trial}
		if forkColumns {
			k.fork = r.Fork
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

// medianOf is the median of v, 0 for none (a cost nothing measured).
func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return tstats.Median(v)
}

// Write prints the pilot's cells, the plan that reaches t in the least
// time, and the profile to paste into the manifest.
func (p *Pilot) Write(w io.Writer, t Target) error {
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
	var comps []Components
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
	plan, err := Choose(comps, p.Costs, t)
	if err != nil {
		return fmt.Errorf("dimension %s: %w", p.Dir, err)
	}
	fmt.Fprintln(w)
	verb := "reaches"
	if !plan.Reached {
		verb = "does NOT reach"
	}
	fmt.Fprintf(w, "plan:    %d forks x %d iterations %s ±%.1f%% of the median at 95%% in every cell (predicted worst ±%.1f%%), %.0f s per cell, %.0f s for %d cells, %.0f%% dead\n",
		plan.Forks, plan.Iterations, verb, 100*t.HalfWidth, 100*plan.HalfWidth, plan.WallS, plan.WallS*float64(len(p.Cells)), len(p.Cells), 100*plan.DeadShare)
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
	if median == 0 {
		return fmt.Sprintf("%.4g (of a median of 0: no percentage)", sd) // an all-zero cell was "0 (NaN%)"
	}
	return fmt.Sprintf("%.4g (%.1f%%)", sd, 100*sd/median)
}
