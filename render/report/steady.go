package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/judge/verdicts"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/store/record"
)

// The steady-state table (issues 10 and 20): per cell of the measured
// group, how its forks were classified (flat, warm-up, slowdown, no steady
// state) and on what (iterations or seconds), whether the forks agree, how
// many iterations were left out before their steady state, which forks were
// excluded for never reaching one, and how each fork's warm-up ended; then
// each fork's series with its steady start marked (charts_steady.go). It is
// read from steady.json, which runs made before it existed lack: the
// section is then left out.

// steadyView is the template data of the "steady" block.
type steadyView struct {
	Metric string
	Sweep  bool
	Rows   []steadyRow
	First  *firstView // the run-wide first-iteration test of a run made before issue 20; nil without one
	Rule   string     // steady.json's rule ("" before issue 20)
	// Warmup is the rule the run's until-steady warm-ups stopped by, from
	// steady.json's rule (verdicts.WarmupClause).
	Warmup string
	// Every names the metrics that read every valid iteration because they
	// do not warm up ("" for runs judged before per-metric selection).
	Every  string
	Charts []*chart // each cell's forks, steady start marked
	// JIT is true when the run measured the JIT's compile time (series.csv
	// has jit_ms), so the table has its column.
	JIT bool
	// Spin is true when the run probed the host's speed before its windows
	// (trials.csv host_spin_ns), so the table has its column.
	Spin bool
	// Own are the metrics with their own steady state that the run's
	// claims read (steady.json own: the target's CPU), each classified
	// again on its own series.
	Own []ownSteadyView
}

// ownSteadyView is one metric's own classification (steady.json own).
type ownSteadyView struct {
	Metric, Label string
	Rule          string // as steadyView's, for the shared table
	Sweep         bool
	Rows          []steadyRow
	JIT, Spin     bool // no JIT or spin column: the primary's table has them
}

// firstView is steady.json's first_iteration for the template.
type firstView struct {
	record.FirstIteration
}

// PText renders the sign test's p-value.
func (f firstView) PText() string { return fmt.Sprintf("%.2g", f.P) }

type steadyRow struct {
	Variant, Point                   string
	Flat, Warmup, Slowdown, Unsteady int
	Consistency                      string
	Sweep                            bool // the run has sweep points: show the point column
	Bad                              bool // a fork never settled or slowed down
	Excluded                         int
	Windows                          string // "3 of 4 flat", "" without windows
	WarmupNote                       string
	Basis                            string // what the forks were classified on: "iterations", "seconds", ...
	Steady                           int    // forks the verdicts use
	Dropped                          string // forks excluded for never reaching a steady state, "2, 5"
	JIT                              string // how often the JIT compiled in the cell's measured windows (jitNote); "" when not measured
	Spin                             string // the host speed probe over the cell's measured windows (spinNote); "" when not probed
}

// Steady returns the steady-state table, or nil when the run has no
// steady.json (or it cannot be read: the report says nothing rather than
// fail the page; the data stay on disk).
func (v *runView) Steady() *steadyView {
	if v.run == nil || v.run.Dir == "" {
		return nil
	}
	st, ok, err := record.ReadSteady(v.run.Dir)
	if err != nil || !ok {
		return nil
	}
	out := &steadyView{Metric: st.Metric, Rule: st.Rule, Warmup: verdicts.WarmupClause(st.Rule)}
	if out.Warmup == "" {
		out.Warmup = "last 4 no longer improve on the 4 before"
	}
	// Name only the counts this run summarised: the full list (asked rate,
	// cool-down, ...) buries the two or three a reader cares about.
	inRun := map[string]bool{}
	for _, s := range v.run.Summary {
		inRun[s.Metric] = true
	}
	var every []string
	for _, name := range st.EveryIteration {
		if inRun[name] {
			every = append(every, metric.Label(name))
		}
	}
	out.Every = strings.Join(every, ", ")
	if st.FirstIteration != nil {
		out.First = &firstView{*st.FirstIteration}
	}
	out.Rows = v.steadyRows(st.Cells, st.Rule)
	if len(out.Rows) == 0 {
		return nil
	}
	if out.JIT = v.jitMeasured(); out.JIT {
		for i, r := range out.Rows {
			out.Rows[i].JIT = v.jitNote(r.Variant, r.Point)
		}
	}
	for i, r := range out.Rows {
		out.Rows[i].Spin = v.spinNote(r.Variant, r.Point)
		out.Spin = out.Spin || out.Rows[i].Spin != ""
	}
	for _, o := range st.Own {
		if rows := v.steadyRows(o.Cells, st.Rule); len(rows) > 0 {
			out.Own = append(out.Own, ownSteadyView{Metric: o.Metric, Label: metric.Label(o.Metric), Rule: st.Rule, Sweep: rows[0].Sweep, Rows: rows})
		}
	}
	out.Sweep = slices.ContainsFunc(out.Rows, func(r steadyRow) bool { return r.Sweep })
	out.Charts = v.forkCharts(st)
	return out
}

// steadyRows are the table rows of the measured group's cells.
func (v *runView) steadyRows(cells []record.SteadyCell, rule string) []steadyRow {
	var rows []steadyRow
	sweep := false
	for _, c := range cells {
		if c.Group != v.run.Meta.Measured && v.run.Meta.Measured != "" {
			continue
		}
		r := steadyRow{Variant: c.Variant, Point: c.Point, Consistency: orDash(c.Consistency), Excluded: c.Excluded,
			Flat: c.Counts["flat"], Warmup: c.Counts["warmup"], Slowdown: c.Counts["slowdown"], Unsteady: c.Counts["no steady state"]}
		r.Bad = r.Unsteady > 0 || r.Slowdown > 0
		if len(c.Windows) > 0 {
			flat := 0
			for _, w := range c.Windows {
				if w.Class == "flat" {
					flat++
				}
			}
			r.Windows = fmt.Sprintf("%d of %d flat", flat, len(c.Windows))
		}
		r.WarmupNote = c.WarmupNote
		if rule != "" {
			r.WarmupNote = warmupSummary(c)
			r.Basis, r.Steady, r.Dropped = basisOf(c), c.SteadyForks, joinInts(c.ExcludedForks)
			r.Bad = r.Bad || r.Dropped != ""
		}
		sweep = sweep || c.Point != ""
		rows = append(rows, r)
	}
	for i := range rows {
		rows[i].Sweep = sweep
	}
	return rows
}

// basisOf names what a cell's forks were classified on, "iterations" or
// "seconds" (the first that any fork used), "cold", or "too few points".
func basisOf(c record.SteadyCell) string {
	seen := ""
	for _, f := range c.Forks {
		switch f.Basis {
		case "iterations", "seconds":
			return f.Basis
		case "":
		default:
			seen = f.Basis
		}
	}
	return orDash(seen)
}

// warmupSummary says how a cell's forks' warm-ups ended: "5 of 5 steady
// after 8-14 rounds (9.5-17.0 s)", or the fixed warm-up's rounds.
func warmupSummary(c record.SteadyCell) string {
	n, steady, maxed, unwaited := 0, 0, 0, 0
	var rounds, secs []float64
	for _, f := range c.Forks {
		if f.WarmupRounds == 0 {
			continue
		}
		n++
		rounds, secs = append(rounds, float64(f.WarmupRounds)), append(secs, f.WarmupMs/1000)
		switch f.WarmupStop {
		case "steady":
			steady++
		case "max":
			maxed++
		case verdicts.NotWaited:
			unwaited++
		}
	}
	if n == 0 {
		return ""
	}
	span := func(xs []float64, format string) string {
		lo, hi := xs[0], xs[0]
		for _, x := range xs {
			lo, hi = min(lo, x), max(hi, x)
		}
		if lo == hi {
			return fmt.Sprintf(format, lo)
		}
		return fmt.Sprintf(format, lo) + "-" + fmt.Sprintf(format, hi)
	}
	what := fmt.Sprintf("%s rounds (%s s)", span(rounds, "%.0f"), span(secs, "%.1f"))
	if unwaited == n {
		return "not waited for: the warm-up stopped on the primary alone after " + what
	}
	if steady+maxed == 0 {
		return "fixed: " + what
	}
	s := fmt.Sprintf("%d of %d steady after %s", steady, n, what)
	if maxed > 0 {
		s += fmt.Sprintf("; %d reached max", maxed)
	}
	if unwaited > 0 {
		s += fmt.Sprintf("; %d did not wait for it", unwaited)
	}
	return s
}

// jitMeasured reports whether the run recorded the JIT's compile time:
// some second of series.csv has jit_ms (runs before the column, and
// targets without Micrometer's compilation counter, have none).
func (v *runView) jitMeasured() bool {
	for _, x := range v.run.Series {
		if x.JITMs.OK() {
			return true
		}
	}
	return false
}

// jitNote says how often the JIT was still compiling in a cell's valid
// measured windows (trials.csv jit_ms, the measured group's rows): "12 of
// 70 windows, 3.1 ms a window". Compilation in a window after the warm-up
// means the code the requests run was still changing (a level shift with
// it is the JIT's; one without it is not), which is what JMH's -prof comp
// shows per iteration.
func (v *runView) jitNote(variant, point string) string {
	n, busy, sum := 0, 0, 0.0
	for _, t := range v.measuredWindows(variant, point) {
		n++
		sum += t.JITMs
		if t.JITMs > 0 {
			busy++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d windows, %s ms a window", busy, n, num(sum/float64(n)))
}

// measuredWindows are a cell's valid trials of the measured group: the
// windows its verdicts draw on.
func (v *runView) measuredWindows(variant, point string) []record.Trial {
	var out []record.Trial
	for _, t := range v.run.Trials {
		if t.Variant == variant && t.Point == point && t.Valid && (v.run.Meta.Measured == "" || t.Group == v.run.Meta.Measured) {
			out = append(out, t)
		}
	}
	return out
}

// spinNote is the host speed probe over a cell's measured windows: the
// median and the range of host_spin_ns, "612 (598–640) ns". A range much
// wider than the probe's own jitter (a few %) says the machine itself ran
// at another speed in some windows, which steal does not show; "" when no
// window was probed (a target on another host, a run before the column).
func (v *runView) spinNote(variant, point string) string {
	var xs []float64
	for _, t := range v.measuredWindows(variant, point) {
		if t.HostSpinNs > 0 {
			xs = append(xs, t.HostSpinNs)
		}
	}
	if len(xs) == 0 {
		return ""
	}
	slices.Sort(xs)
	med := xs[len(xs)/2]
	if len(xs)%2 == 0 {
		med = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	return fmt.Sprintf("%s (%s–%s) ns", num(med), num(xs[0]), num(xs[len(xs)-1]))
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// PointText renders a row's sweep point for the table.
func (r steadyRow) PointText() string { return strings.ReplaceAll(r.Point, ";", ", ") }
