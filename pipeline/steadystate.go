package pipeline

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/pipeline/record"
	"github.com/threadlab/threadlab/pipeline/stats"
	"github.com/threadlab/threadlab/pipeline/steady"
)

// Steady state in aggregation (issue 10). Each fork's iteration sequence
// of the primary metric is classified (steady.Classify: PELT changepoints,
// as Barrett et al.'s warmup_stats); the iterations before its steady
// state are left out of the fork's median, and the cell's forks are
// summarised as consistent or not. Each measured window's per-second
// throughput is classified too, as evidence of what happened inside a
// window. Everything lands in steady.json.

// FlagUnsettled is the summary.csv flag of a cell's primary metric when
// some fork never reached a steady state: its median mixes levels.
const FlagUnsettled = "unsettled-fork"

const (
	// minIterations is the shortest iteration sequence worth classifying:
	// with fewer, one odd iteration is indistinguishable from a changepoint.
	minIterations = 3
	// minSeconds is the shortest per-second series of a window that is
	// classified.
	minSeconds = 5
	// firstMinForks and firstAlpha gate the across-forks first-iteration
	// test: at least this many forks with a decided comparison, and a
	// one-sided sign test at this level (a strict one: dropping an
	// iteration from every fork of the run is not done on a hunch).
	firstMinForks = 6
	firstAlpha    = 0.01
)

// firstIteration tests, across every fork of every cell, whether the first
// measured iteration is worse than the median of its fork's later
// iterations more often than chance allows (the one-sided sign test). A
// fixed warm-up that is too short shows up here before any one fork's
// sequence is long enough for a changepoint.
func firstIteration(cells map[record.CellKey][]record.Trial, metric string) *record.FirstIteration {
	higher := stats.HigherIsBetter(metric)
	fi := &record.FirstIteration{}
	for _, ts := range cells {
		var order []int
		byFork := map[int][]float64{}
		for _, t := range ts {
			if t.Fork == 0 {
				continue
			}
			x, ok := Metric(t, metric)
			if !ok || math.IsNaN(x) || spoiled(t, metric) {
				continue
			}
			if _, seen := byFork[t.Fork]; !seen {
				order = append(order, t.Fork)
			}
			byFork[t.Fork] = append(byFork[t.Fork], x)
		}
		for _, f := range order {
			xs := byFork[f]
			if len(xs) < 2 {
				continue
			}
			rest := stats.Median(xs[1:])
			switch {
			case (!higher && xs[0] > rest) || (higher && xs[0] < rest):
				fi.Worse++
			case xs[0] != rest:
				fi.Better++
			}
		}
	}
	n := fi.Worse + fi.Better
	if n == 0 {
		return nil
	}
	fi.P = stats.SignUpper(n, fi.Worse)
	fi.Excluded = n >= firstMinForks && fi.P <= firstAlpha
	return fi
}

// steadyCell classifies the forks of one cell on metric and returns the
// trials left once each fork's pre-steady iterations are dropped, with the
// record of what was classified and dropped. A fork with no steady state
// keeps all its iterations (dropping them would drop the fork) and is
// counted as unsettled, which the report flags.
func steadyCell(k record.CellKey, ts []record.Trial, metric string) ([]record.Trial, record.SteadyCell) {
	return steadyCellWith(k, ts, metric, false)
}

// steadyCellWith is steadyCell that, with dropFirst (the run's
// first-iteration test was significant), also leaves out the first
// iteration of every fork with two or more that the changepoints left
// whole.
func steadyCellWith(k record.CellKey, ts []record.Trial, metric string, dropFirst bool) ([]record.Trial, record.SteadyCell) {
	higher := stats.HigherIsBetter(metric)
	out := record.SteadyCell{Variant: k.Variant, Point: k.Point, Group: k.Group, Counts: map[string]int{}}
	// Positions in ts of each fork's trials, in execution order (trials.csv
	// order). Positions, not seq: every iteration of a fork shares the
	// fork's seq (one job per fork), so a seq names a whole fork.
	var order []int
	byFork := map[int][]int{}
	for i, t := range ts {
		if t.Fork == 0 {
			continue // legacy row, one fork per trial: nothing to classify
		}
		if _, ok := byFork[t.Fork]; !ok {
			order = append(order, t.Fork)
		}
		byFork[t.Fork] = append(byFork[t.Fork], i)
	}
	drop := map[int]bool{} // positions in ts of dropped trials
	var classes []steady.Class
	for _, f := range order {
		var xs []float64
		var pos []int
		for _, i := range byFork[f] {
			if x, ok := Metric(ts[i], metric); ok && !math.IsNaN(x) && !spoiled(ts[i], metric) {
				xs, pos = append(xs, x), append(pos, i)
			}
		}
		sf := record.SteadyFork{Fork: f, Iterations: len(xs), SteadyFrom: 0}
		if len(xs) >= minIterations {
			res := steady.Classify(xs, steady.Options{HigherIsBetter: higher})
			sf.Class, sf.SteadyFrom = string(res.Class), res.SteadyFrom
			classes = append(classes, res.Class)
			out.Counts[sf.Class]++
			if res.SteadyFrom > 0 {
				sf.Excluded = res.SteadyFrom
				for _, i := range pos[:res.SteadyFrom] {
					drop[i] = true
				}
			}
		}
		if dropFirst && len(xs) >= 2 && sf.SteadyFrom == 0 {
			sf.SteadyFrom, sf.Excluded = 1, 1
			drop[pos[0]] = true
		}
		out.Excluded += sf.Excluded
		out.Forks = append(out.Forks, sf)
	}
	c := steady.Forks(classes)
	out.Consistency, out.Unsettled = c.Label, c.Unsettled
	if len(drop) == 0 {
		return ts, out
	}
	kept := make([]record.Trial, 0, len(ts)-len(drop))
	for i, t := range ts {
		if !drop[i] {
			kept = append(kept, t)
		}
	}
	return kept, out
}

// steadyWindows classifies the per-second throughput of each measured
// window of a cell (series.csv rows of the cell's group), in trial order.
func steadyWindows(ts []record.Trial, series map[trialKey][]record.Sample) []record.SteadyWindow {
	var out []record.SteadyWindow
	for _, t := range ts {
		ss := series[trialKey{t.Variant, t.Point, t.Group, t.Trial}]
		if len(ss) < minSeconds {
			continue
		}
		xs := make([]float64, len(ss))
		for i, s := range ss {
			xs[i] = float64(s.Requests)
		}
		res := steady.Classify(xs, steady.Options{HigherIsBetter: true})
		out = append(out, record.SteadyWindow{Trial: t.Trial, Fork: t.Fork, Iteration: t.Iteration,
			Seconds: len(xs), Class: string(res.Class), SteadyFrom: res.SteadyFrom})
	}
	return out
}

// trialKey names one trial's rows of one group in series.csv.
type trialKey struct {
	Variant, Point, Group string
	Trial                 int
}

// seriesByTrial indexes series.csv by trial and group, each in time order.
func seriesByTrial(rows []record.Sample) map[trialKey][]record.Sample {
	out := map[trialKey][]record.Sample{}
	for _, r := range rows {
		k := trialKey{r.Variant, r.Point, r.Group, r.Trial}
		out[k] = append(out[k], r)
	}
	for _, ss := range out {
		slices.SortStableFunc(ss, func(a, b record.Sample) int { return cmpFloat(a.T, b.T) })
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// warmupRecommendation reads a cell's warm-up rounds (warmup.csv rows of
// the cell, "warm-up round N") per fork and says after how much warm-up
// the metric was steady.
func warmupRecommendation(c *record.SteadyCell, rounds []record.Trial, metric string) {
	var order []int
	byFork := map[int][]steady.Round{}
	for _, r := range rounds {
		x, ok := Metric(r, metric)
		if _, isRound := steady.ParseRound(r.Reason); !ok || !isRound || math.IsNaN(x) {
			continue
		}
		if _, seen := byFork[r.Fork]; !seen {
			order = append(order, r.Fork)
		}
		byFork[r.Fork] = append(byFork[r.Fork], steady.Round{WallMs: r.WallMs, Value: x})
	}
	var forks [][]steady.Round
	for _, f := range order {
		if len(byFork[f]) >= minIterations {
			forks = append(forks, byFork[f])
		}
	}
	if len(forks) == 0 {
		if len(order) > 0 {
			c.WarmupNote = fmt.Sprintf("fewer than %d warm-up rounds per fork: too few to tell when %s settled", minIterations, metric)
		}
		return
	}
	ms, ok, per := steady.RecommendCell(forks, steady.Options{HigherIsBetter: stats.HigherIsBetter(metric)})
	c.WarmupMs, c.WarmupOK = ms, ok
	if ok {
		c.WarmupNote = fmt.Sprintf("%s steady after %.1f s of warm-up in every fork (%d forks)", metric, ms/1000, len(forks))
		return
	}
	for _, r := range per {
		if r.SteadyAfterMs < 0 {
			c.WarmupNote = r.Note
			break
		}
	}
}

// applySteady classifies every cell, replaces each cell's trials by the
// steady ones and writes steady.json. series and warm-up rows may be nil.
func applySteady(dir, metric string, order []record.CellKey, cells map[record.CellKey][]record.Trial,
	series []record.Sample, warm []record.Trial) (record.Steady, error) {
	st := record.Steady{Metric: metric}
	byTrial := seriesByTrial(series)
	warmByCell := map[record.CellKey][]record.Trial{}
	slices.SortStableFunc(warm, func(a, b record.Trial) int { return a.Seq - b.Seq })
	for _, w := range warm {
		warmByCell[w.Key()] = append(warmByCell[w.Key()], w)
	}
	st.FirstIteration = firstIteration(cells, metric)
	dropFirst := st.FirstIteration != nil && st.FirstIteration.Excluded
	for _, k := range order {
		kept, c := steadyCellWith(k, cells[k], metric, dropFirst)
		c.Windows = steadyWindows(cells[k], byTrial)
		warmupRecommendation(&c, warmByCell[k], metric)
		cells[k] = kept
		st.Cells = append(st.Cells, c)
	}
	return st, record.WriteJSON(dir, record.SteadyFile, st)
}

// logSteady logs each cell of the measured group whose forks were not all
// flat, as the run goes.
func (s *State) logSteady(st record.Steady) {
	if fi := st.FirstIteration; fi != nil && fi.Excluded {
		s.Logf("steady state: %s", firstIterationLine(st.Metric, fi))
	}
	for _, c := range st.Cells {
		if line := steadyLine(c); line != "" && c.Group == s.M.Load.Measure {
			s.Logf("steady state: %s", line)
		}
	}
}

// steadyLines prints, in the terminal summary, one line per measured cell
// whose forks or windows were not all flat. A run without steady.json
// prints nothing.
func steadyLines(w io.Writer, dir string, m record.Meta) error {
	st, ok, err := record.ReadSteady(dir)
	if err != nil || !ok {
		return err
	}
	head := false
	if fi := st.FirstIteration; fi != nil && fi.Excluded {
		fmt.Fprintf(w, "%s\n", firstIterationLine(st.Metric, fi))
	}
	for _, c := range st.Cells {
		line := steadyLine(c)
		if line == "" || c.Group != m.Measured {
			continue
		}
		if !head {
			fmt.Fprintf(w, "steady state of %s (iterations before a fork's steady state are left out):\n", st.Metric)
			head = true
		}
		fmt.Fprintf(w, "  %s\n", line)
	}
	return nil
}

// steadyLine describes a cell that is not all flat; "" when it is.
func steadyLine(c record.SteadyCell) string {
	classified := 0
	for _, n := range c.Counts {
		classified += n
	}
	unsteadyWin := 0
	for _, w := range c.Windows {
		if w.Class != string(steady.Flat) {
			unsteadyWin++
		}
	}
	if c.Counts[string(steady.Flat)] == classified && unsteadyWin == 0 {
		return ""
	}
	cell := c.Variant
	if c.Point != "" {
		cell += " " + c.Point
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", cell)
	if classified > 0 {
		fmt.Fprintf(&b, "forks %s (%s), %d iteration(s) excluded", countsText(c.Counts), c.Consistency, c.Excluded)
		if c.Unsettled > 0 {
			fmt.Fprintf(&b, "; %d fork(s) never settled: lengthen load.warmup or add iterations", c.Unsettled)
		}
	}
	if unsteadyWin > 0 {
		if classified > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%d of %d window(s) not flat per second", unsteadyWin, len(c.Windows))
	}
	return b.String()
}

// countsText renders class counts in a fixed order: "2 flat, 1 warmup".
func countsText(counts map[string]int) string {
	var parts []string
	for _, k := range []steady.Class{steady.Flat, steady.Warmup, steady.Slowdown, steady.NoSteadyState} {
		if n := counts[string(k)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	return strings.Join(parts, ", ")
}

// steadyOnly returns the cells with each fork's pre-steady iterations of
// metric dropped, without writing anything: what the claims and any other
// reader of the trials should evaluate, so they see the same iterations as
// summary.csv.
func steadyOnly(cells map[record.CellKey][]record.Trial, metric string) map[record.CellKey][]record.Trial {
	fi := firstIteration(cells, metric)
	dropFirst := fi != nil && fi.Excluded
	out := make(map[record.CellKey][]record.Trial, len(cells))
	for k, ts := range cells {
		out[k], _ = steadyCellWith(k, ts, metric, dropFirst)
	}
	return out
}

// firstIterationLine says, for the summary and the report, that the first
// measured iteration was a warm-up and was left out.
func firstIterationLine(metric string, fi *record.FirstIteration) string {
	return fmt.Sprintf("warm-up too short: the first measured iteration's %s was worse than its fork's later ones in %d of %d forks "+
		"(one-sided sign test p=%s), so the first iteration of every fork was left out; lengthen load.warmup",
		metric, fi.Worse, fi.Worse+fi.Better, fmt.Sprintf("%.2g", fi.P))
}
