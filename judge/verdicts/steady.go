package verdicts

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/stats/steady"
	"github.com/threadlab/threadlab/store/record"
)

// Steady state in aggregation and in the claims (issues 10 and 20). Each
// fork is classified on its own measured points (steady.Classify, Barrett
// et al.'s classes): its iterations when it has MinSteadyPoints or more
// (bursts), else the per-second series of its windows (timed loads). The
// fork's replicate value then uses only its steady iterations; a fork with
// no steady state is excluded from the cell and named; a variant with
// measure: cold keeps everything. summary.csv, comparisons.csv and the
// claims all read the cells through the same selection, and a claim that
// reads a cell left with fewer than stats.MinReplicates steady forks is
// inconclusive "not in steady state" (notSteady). Steady returns what the
// aggregate stage writes to steady.json, with each fork's warm-up from
// warmup.csv.

// SteadyRule names the rules of this file for steady.json and the report.
const SteadyRule = "per-fork selection on >= 10 points (iterations, or seconds of a timed window) of the primary metric, applied to every metric that warms up; metrics that do not warm up (steady.json every_iteration) read every valid measured iteration; PELT change in mean, penalty 6 log n; warm-up until steady: last 4 rounds fluctuate and no longer improve on the 4 before, and Sen's 90% bound of the Theil-Sen slope over the last <= 20 rounds improves by at most max(5%, 1 noise unit) over 10 more; in the primary metric and, when a claim reads it or warmup.also names it, in the target's CPU, each once; and the JIT's compile time at most 5% of the target's CPU, or of one core for the round's length when the target used less, in 4 rounds in a row, when the target has the counter"

// stricterWarmups are earlier warm-up clauses that held every fork at
// least as long as today's would: a fork they stopped, today's rule would
// have stopped at the same round or before (it asks the same of the same
// rounds and less of the JIT), and one they ran to max it might have
// stopped sooner. Forks warmed up by them measured the same steady state,
// later in the JVM's life, so a run warmed by one still answers today's
// manifest (CurrentWarmup); only its warm-ups cost more than today's
// would (pipeline/cost plans from them, a conservative plan).
var stricterWarmups = []string{
	// Before the JIT's share was also held to one core for a target that
	// used less (wave 3 session 34): 4 quiet rounds in a row almost never
	// came for targets that mostly wait.
	"last 4 rounds fluctuate and no longer improve on the 4 before, and Sen's 90% bound of the Theil-Sen slope over the last <= 20 rounds improves by at most max(5%, 1 noise unit) over 10 more; in the primary metric and, when a claim reads it or warmup.also names it, in the target's CPU, each once; and the JIT's compile time at most 5% of the target's CPU in 4 rounds in a row, when the target has the counter",
}

// warmupMark starts the warm-up clause of a steady.json rule: the rule the
// run's forks were warmed up by, which the run itself applied.
const warmupMark = "; warm-up until steady: "

// WarmupClause is the warm-up part of a steady.json rule ("last 4 rounds
// fluctuate ..."), "" when the rule has none.
func WarmupClause(rule string) string {
	_, after, ok := strings.Cut(rule, warmupMark)
	if !ok {
		return ""
	}
	return after
}

// CurrentWarmup reports whether a steady.json rule's warm-up clause is
// today's (SteadyRule's): whether forks warmed up until steady by that run
// were warmed up as a run today would warm them. A run warmed up by an
// older clause answers another question than today's manifest asks, even
// when the manifest is unchanged: its warm-ups stopped elsewhere.
func CurrentWarmup(rule string) bool {
	c := WarmupClause(rule)
	return c == WarmupClause(SteadyRule) || (c != "" && slices.Contains(stricterWarmups, c))
}

// SameWarmup reports whether a steady.json rule's warm-up clause is
// today's exactly: its warm-ups cost what today's would (pipeline/cost).
func SameWarmup(rule string) bool {
	return WarmupClause(rule) == WarmupClause(SteadyRule)
}

// KeepWarmup returns rule with its warm-up clause replaced by the one an
// earlier steady.json of the same run recorded. Re-evaluating a run
// re-selects its steady iterations by today's rule, but its forks were
// warmed up, once, by the rule of the binary that ran them: steady.json
// must keep saying which.
func KeepWarmup(rule, earlier string) string {
	old := WarmupClause(earlier)
	head, _, ok := strings.Cut(rule, warmupMark)
	if old == "" || !ok {
		return rule
	}
	return head + warmupMark + old
}

// edgeSeconds is how far into a window a per-second steady start may lie
// and the window still count as steady: its first seconds are left out of
// the series already (partial), and a level reached within the next two
// is the window's ramp, not a warm-up the verdicts must avoid.
const edgeSeconds = 2

// selection is how a run's cells are reduced to their steady iterations.
type selection struct {
	metric string
	cold   map[string]bool   // variants with measure: cold
	models map[string]string // group -> load model
	series map[trialKey][]record.Sample
}

func newSelection(m *experiments.Manifest, series []record.Sample) selection {
	sel := selection{metric: m.Primary(), cold: map[string]bool{}, models: map[string]string{}, series: seriesByTrial(series)}
	for _, v := range m.Variants {
		sel.cold[v.Name] = v.Measure == experiments.MeasureCold
	}
	for _, g := range m.Load.Groups {
		sel.models[g.Name] = g.Model
	}
	return sel
}

// forkTrials lists the positions in ts of each fork's trials, forks in
// execution order (trials.csv order). Positions, not seq: every iteration
// of a fork shares the fork's seq.
func forkTrials(ts []record.Trial) (order []int, byFork map[int][]int) {
	byFork = map[int][]int{}
	for i, t := range ts {
		if t.Fork == 0 {
			continue // legacy row, one fork per trial: nothing to classify
		}
		if _, ok := byFork[t.Fork]; !ok {
			order = append(order, t.Fork)
		}
		byFork[t.Fork] = append(byFork[t.Fork], i)
	}
	return order, byFork
}

// cell classifies the forks of one cell and returns the trials left once
// each fork's pre-steady iterations, and each fork without a steady state,
// are dropped, with the record of it.
func (sel selection) cell(k record.CellKey, ts []record.Trial) ([]record.Trial, record.SteadyCell) {
	out := record.SteadyCell{Variant: k.Variant, Point: k.Point, Group: k.Group, Counts: map[string]int{}, Cold: sel.cold[k.Variant]}
	order, byFork := forkTrials(ts)
	drop := map[int]bool{} // positions in ts of dropped trials
	var classes []steady.Class
	legacy := len(ts)
	for _, f := range order {
		legacy -= len(byFork[f])
		var pos []int
		for _, i := range byFork[f] {
			if _, ok := metric.Measured(ts[i], sel.metric); ok {
				pos = append(pos, i)
			}
		}
		sf := sel.fork(k, ts, f, pos)
		if sf.Class != "" {
			classes = append(classes, steady.Class(sf.Class))
			out.Counts[sf.Class]++
		}
		switch {
		case sf.Dropped:
			for _, i := range byFork[f] {
				drop[i] = true
			}
			out.ExcludedForks = append(out.ExcludedForks, f)
		default:
			for _, i := range pos[:sf.Excluded] {
				drop[i] = true
			}
			out.SteadyForks++
		}
		out.Excluded += sf.Excluded
		out.Forks = append(out.Forks, sf)
	}
	out.SteadyForks += legacy // rows without a fork id are each a fork of their own, unclassified
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

// fork classifies one fork whose usable iterations are ts[pos...].
func (sel selection) fork(k record.CellKey, ts []record.Trial, f int, pos []int) record.SteadyFork {
	sf := record.SteadyFork{Fork: f, Iterations: len(pos), SteadyPoint: -1}
	if sel.cold[k.Variant] {
		sf.Basis, sf.SteadyPoint = "cold", 0
		return sf
	}
	higher := metric.HigherIsBetter(sel.metric)
	xs := make([]float64, len(pos))
	for j, i := range pos {
		xs[j], _ = metric.Value(ts[i], sel.metric)
	}
	iterOf := make([]int, len(xs)) // point -> index into pos
	for j := range iterOf {
		iterOf[j] = j
	}
	sf.Basis = "iterations"
	if len(xs) < experiments.MinSteadyPoints && sel.timed(k.Group) {
		if sx, it, h := sel.seconds(k, ts, pos); len(sx) >= experiments.MinSteadyPoints {
			xs, iterOf, higher, sf.Basis = sx, it, h, "seconds"
		}
	}
	sf.Points = len(xs)
	if len(xs) < experiments.MinSteadyPoints {
		sf.Basis, sf.SteadyPoint = "too few points", 0
		return sf
	}
	res := steady.Classify(xs, steady.Options{HigherIsBetter: higher})
	sf.Class, sf.SteadyPoint, sf.Values = string(res.Class), res.SteadyFrom, xs
	if res.SteadyFrom < 0 {
		sf.Dropped, sf.SteadyFrom, sf.Excluded = true, -1, len(pos)
		return sf
	}
	first := iterOf[res.SteadyFrom]
	if sf.Basis == "seconds" {
		start := slices.Index(iterOf, first) // the window's first point
		if res.SteadyFrom-start > edgeSeconds {
			first++ // steady only from inside this window: it is not steady as a whole
		}
		if first >= len(pos) {
			sf.Dropped, sf.SteadyFrom, sf.Excluded = true, -1, len(pos)
			return sf
		}
	}
	sf.SteadyFrom, sf.Excluded = first, first
	return sf
}

// timed: the group's load runs for a time (closed, open), so its windows
// have per-second series worth classifying. A ramp changes its load by
// design and a burst lasts about a second: neither is.
func (sel selection) timed(group string) bool {
	switch sel.models[group] {
	case "closed", "open":
		return true
	}
	return false
}

// seconds is the per-second series of a fork's windows, in order, each
// window's first and last second left out (partial by construction:
// connections opening, the last answers draining), with the iteration
// (index into pos) of each point and whether higher is better. The series
// is the metric's per-second counterpart: p50/p99 for those latencies,
// the target's CPU for a CPU metric (metric.OwnSteady), else throughput;
// a second whose gauge was not read is left out.
func (sel selection) seconds(k record.CellKey, ts []record.Trial, pos []int) (xs []float64, iterOf []int, higher bool) {
	higher = true
	pick := func(s record.Sample) float64 { return float64(s.Requests) }
	switch {
	case sel.metric == "p99_ms":
		pick, higher = func(s record.Sample) float64 { return s.P99Ms }, false
	case sel.metric == "p50_ms":
		pick, higher = func(s record.Sample) float64 { return s.P50Ms }, false
	case metric.OwnSteady(sel.metric):
		// The target's CPU in the second, for every CPU metric: the one
		// per-second reading of what the server spends.
		pick, higher = func(s record.Sample) float64 { return float64(s.TargetCPUPct) }, false
	}
	for j, i := range pos {
		t := ts[i]
		ss := sel.series[trialKey{t.Variant, t.Point, t.Group, t.Trial}]
		if len(ss) >= 3 {
			ss = ss[1 : len(ss)-1]
		}
		for _, s := range ss {
			if x := pick(s); !math.IsNaN(x) {
				xs = append(xs, x)
				iterOf = append(iterOf, j)
			}
		}
	}
	return xs, iterOf, higher
}

// apply reduces every cell to its steady trials, without writing anything:
// what summary.csv, the claims and any other reader of the trials
// evaluate, so they all see the same iterations.
func (sel selection) apply(cells map[record.CellKey][]record.Trial) (map[record.CellKey][]record.Trial, map[record.CellKey]record.SteadyCell) {
	out := make(map[record.CellKey][]record.Trial, len(cells))
	info := make(map[record.CellKey]record.SteadyCell, len(cells))
	for k, ts := range cells {
		out[k], info[k] = sel.cell(k, ts)
	}
	return out, info
}

// everyIteration says, in the evidence of a claim on a metric that does
// not warm up, which trials it read that the steady selection of the
// primary metric left out: the pre-steady iterations and the forks with
// no steady state of each cell it reads. Nothing when the selection left
// nothing out.
func everyIteration(v *stats.Verdict, k stats.Check, info map[record.CellKey]record.SteadyCell, group, primary string) {
	what := leftOut(k, info, group, "%d iteration(s) outside the steady segments", ", fork %s never steady in "+primary)
	if what == "" {
		return
	}
	v.Evidence = append(v.Evidence, fmt.Sprintf("%s does not warm up: every valid measured iteration of each fork counts, including those the steady selection of %s leaves out (%s)",
		k.Metric, primary, what))
}

// leftOut lists, cell by cell, what a selection (info) left out of the
// cells of group that check k reads: each cell's name, then perCell with
// its count of iterations left out, then perFork with its forks that
// never settled, if any; "" when it left nothing out.
func leftOut(k stats.Check, info map[record.CellKey]record.SteadyCell, group, perCell, perFork string) string {
	var what []string
	for key, c := range info {
		point := record.ParsePoint(key.Point)
		if key.Group != group || c.Excluded == 0 || !DependsOn(k, key.Variant, point) {
			continue
		}
		s := CellName(key.Variant, record.FormatPoint(point)) + ": " + fmt.Sprintf(perCell, c.Excluded)
		if len(c.ExcludedForks) > 0 {
			s += fmt.Sprintf(perFork, ForkList(c.ExcludedForks))
		}
		what = append(what, s)
	}
	slices.Sort(what)
	return strings.Join(what, "; ")
}

// steadyOnly is apply for a manifest and a run's series.csv rows.
func steadyOnly(m *experiments.Manifest, cells map[record.CellKey][]record.Trial, series []record.Sample) (map[record.CellKey][]record.Trial, map[record.CellKey]record.SteadyCell) {
	return newSelection(m, series).apply(cells)
}

// NotSteadyPrefix starts the reason of a verdict notSteady held back (the
// run page names it as the reason a claim is open).
const NotSteadyPrefix = "not in steady state"

// notSteady makes a verdict inconclusive, with the reason "not in steady
// state", when a cell it reads lost forks that never reached a steady
// state in metric name (the primary, or a metric with its own steady
// state) and has fewer than stats.MinReplicates steady forks left: the
// data that would decide it are warm-up. Open: a longer warmup max or
// more forks can decide it.
func notSteady(v *stats.Verdict, k stats.Check, info map[record.CellKey]record.SteadyCell, group, name string) {
	var why []string
	for key, c := range info {
		point := record.ParsePoint(key.Point)
		if key.Group != group || len(c.ExcludedForks) == 0 || c.SteadyForks >= stats.MinReplicates || !DependsOn(k, key.Variant, point) {
			continue
		}
		why = append(why, fmt.Sprintf("%s: %d of %d fork(s) never reached a steady state (fork %s), %d steady left, fewer than %d",
			CellName(key.Variant, record.FormatPoint(point)), len(c.ExcludedForks), len(c.ExcludedForks)+c.SteadyForks, ForkList(c.ExcludedForks), c.SteadyForks, stats.MinReplicates))
	}
	if len(why) == 0 {
		return
	}
	slices.Sort(why)
	reason := NotSteadyPrefix + ": " + strings.Join(why, "; ") + " (raise load.warmup's max, or add forks)"
	if name != "" {
		reason = NotSteadyPrefix + " in " + name + ": " + strings.Join(why, "; ") + " (raise load.warmup's max, or add forks)"
	}
	if v.Status != stats.Inconclusive {
		v.Leans = v.Status
	}
	v.Status, v.Reason, v.Open = stats.Inconclusive, reason, true
	v.Evidence = append(v.Evidence, reason)
}

// ForkList names fork ids as a sentence lists them: "2, 4".
func ForkList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
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

// warmupOf fills each fork's warm-up from the cell's warmup.csv rows
// ("warm-up round N[; stop: steady|max]"): rounds, summed length, why it
// stopped and the stopping rule's evidence on those rounds (for a fixed
// warm-up too: what the rule would have said). A warm-up that found name
// steady at round N and went on waiting (for another metric, or for the
// JIT to go quiet) has its evidence read on rounds 1..N, where the rule
// decided, and says what it then waited for: the rule read on all its
// rounds could say "still move one way" of a fork that stopped steady.
//
// own: name is a metric with its own steady state, read for steady.json's
// own cells; a warm-up that stopped "steady" without naming it (the round
// it settled from) did not wait for it, and says so (NotWaited).
func warmupOf(c *record.SteadyCell, rounds []record.Trial, name string, own bool) {
	type forkWarm struct {
		xs     []float64
		rounds int
		ms     float64
		stop   string
		said   string // the last round's stop reason, after "stop: "
		from   int    // the round name was found steady in (0: not said)
		gaps   bool   // a round without a value of name
	}
	by := map[int]*forkWarm{}
	for _, r := range rounds {
		if _, ok := steady.ParseRound(r.Reason); !ok {
			continue
		}
		w := by[r.Fork]
		if w == nil {
			w = &forkWarm{stop: "fixed"}
			by[r.Fork] = w
		}
		w.ms += r.WallMs
		w.rounds++
		// a CPU figure of 0 is a round whose target CPU was not read (runs
		// before the warm-up sampled its rounds), as the warm-up reads it
		if x, ok := metric.Value(r, name); ok && !math.IsNaN(x) && (x > 0 || !metric.OwnSteady(name)) {
			w.xs = append(w.xs, x)
		} else {
			w.gaps = true
		}
		if _, said, ok := strings.Cut(r.Reason, "stop: "); ok {
			w.said = said
			w.from = roundFrom(said, name)
		}
		switch {
		case strings.Contains(r.Reason, "stop: steady") && own && w.from == 0:
			w.stop = NotWaited // a warm-up that stopped on the primary alone
		case strings.Contains(r.Reason, "stop: steady"):
			w.stop = "steady"
		case strings.Contains(r.Reason, "stop: max"):
			w.stop = "max"
		}
	}
	for i := range c.Forks {
		f := &c.Forks[i]
		w := by[f.Fork]
		if w == nil {
			continue
		}
		f.WarmupRounds, f.WarmupMs, f.WarmupStop = w.rounds, w.ms, w.stop
		if len(w.xs) > 0 {
			// rounds 1..from are xs[:from] only when every round had a value
			decided := w.from > 0 && w.from < len(w.xs) && !w.gaps
			xs := w.xs
			if decided {
				xs = xs[:w.from]
			}
			f.WarmupEvidence = steady.Settled(xs, steady.Settle{HigherIsBetter: metric.HigherIsBetter(name)}).Why
			if decided {
				f.WarmupEvidence = fmt.Sprintf("at round %d: %s; stopped %s", w.from, f.WarmupEvidence, w.said)
			}
		}
	}
}

// roundFrom reads "name from round N" in a warm-up's stop reason
// ("steady (wall_ms from round 26, JIT quiet from round 208)"); 0 when
// the reason does not name it.
func roundFrom(said, name string) int {
	var rest string
	ok := false
	for _, before := range []string{"(", ", "} { // not "p99_wall_ms from round" for wall_ms
		if _, rest, ok = strings.Cut(said, before+name+" from round "); ok {
			break
		}
	}
	if !ok {
		return 0
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	n, err := strconv.Atoi(rest[:end])
	if err != nil {
		return 0
	}
	return n
}

// NotWaited is the warm-up stop, in steady.json's own cells, of a warm-up
// that stopped steady in the primary without waiting for the metric.
const NotWaited = "not waited"

// byCell groups warm-up rounds by cell, in schedule order.
func byCell(warm []record.Trial) map[record.CellKey][]record.Trial {
	out := map[record.CellKey][]record.Trial{}
	warm = slices.Clone(warm)
	slices.SortStableFunc(warm, func(a, b record.Trial) int { return a.Seq - b.Seq })
	for _, w := range warm {
		out[w.Key()] = append(out[w.Key()], w)
	}
	return out
}

// Steady classifies the cells of order, replaces each cell's trials in
// cells by the steady ones and returns the record of it for steady.json.
// series (series.csv) and warm (warmup.csv) may be nil.
func Steady(m *experiments.Manifest, order []record.CellKey, cells map[record.CellKey][]record.Trial,
	series []record.Sample, warm []record.Trial) record.Steady {
	st := record.Steady{Metric: m.Primary(), Rule: SteadyRule}
	for _, d := range metric.Defs {
		if d.NoWarmup {
			st.EveryIteration = append(st.EveryIteration, d.Name)
		}
	}
	sel := newSelection(m, series)
	warmByCell := byCell(warm)
	for _, k := range order {
		kept, c := sel.cell(k, cells[k])
		warmupOf(&c, warmByCell[k], st.Metric, false)
		cells[k] = kept
		st.Cells = append(st.Cells, c)
	}
	return st
}
