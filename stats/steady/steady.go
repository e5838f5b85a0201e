// Package steady owns steady-state detection: when a fork's warm-up may
// stop, where in a sequence of measurements a JVM stopped changing, and
// what kind of sequence it was.
//
// Two rules, both documented in METHODOLOGY.md ("Steady state"):
//   - Settled (settle.go) is the stopping rule of an until-steady warm-up,
//     after BenchmarkDotNet's automatic warm-up: stop once the recent rounds
//     fluctuate instead of moving one way, are no longer improving on the
//     rounds before them, and bound any drift left small (Theil–Sen's slope
//     with Sen's confidence bound and Mann–Kendall's test, trend.go); Stop
//     adds the warm-up's min and max.
//   - Classify follows Barrett et al. (2017), "Virtual machine warmup blows
//     hot and cold" (OOPSLA), and their warmup_stats tool: changepoints by
//     PELT, then a classification of the sequence as flat, warm-up,
//     slowdown or no steady state, and of a cell's forks as consistent or
//     not. The cost is a change in mean at a robust noise scale with a
//     penalty of 6·log(n) (pelt.go says why), so that 10-30 points suffice.
//
// Data flow: warm-up rounds -> Settled (stop or go on) -> measured points
// (one fork's iteration values in order, or its per-second values) ->
// Classify (Changepoints -> segments -> outliers and equivalent neighbours
// merged -> Class and SteadyFrom) -> the caller keeps the values from
// SteadyFrom on, or excludes the fork when it has no steady state; Forks
// summarises the classes of a cell. The package takes and returns plain
// values; it reads no files.
package steady

import (
	"github.com/threadlab/threadlab/stats"
	"math"
	"slices"
)

// Class is what a series did.
type Class string

const (
	// Flat: no changepoint (after merging equivalent segments); every value
	// is steady.
	Flat Class = "flat"
	// Warmup: the series settles, after segments that were worse than the
	// steady level.
	Warmup Class = "warmup"
	// Slowdown: the series settles at a level worse than an earlier one.
	Slowdown Class = "slowdown"
	// NoSteadyState: the last segment is too short to call steady (the
	// series was still changing when it ended).
	NoSteadyState Class = "no steady state"
)

// Options tune Classify. The zero value means the defaults below.
type Options struct {
	// PenaltyFactor k sets the changepoint penalty k·log(n), in units of
	// the series' noise variance (Scale²). Default 6: chosen by simulation
	// (TestNoiseDoesNotFire, TestWarmupFires) so that normal noise of 10-30
	// points yields a changepoint in at most 5% of series while a leading
	// shift of 6 noise units over two of ten points is found. warmup_stats'
	// 15·log(n) with a mean-and-variance cost was made for 2,000 in-process
	// iterations; at 10 points it can never fire (statistics review §3.5).
	PenaltyFactor float64
	// MinSegment is the shortest segment; default 1, so that one slow first
	// iteration, the commonest warm-up left over, can be a segment of its
	// own. A one-point segment anywhere else is an outlier and is merged into
	// its neighbour.
	MinSegment int
	// SteadyFraction: the last segment must span at least this fraction of
	// the series to count as a steady state. Default 0.25. (warmup_stats asks
	// that no changepoint fall in the last N iterations, with N fixed at 500
	// of 2000; a fraction suits the short series of a threadlab run.)
	SteadyFraction float64
	// Tolerance: two segments whose medians differ by at most this fraction
	// of the larger, or by at most NoiseUnits noise units (Scale), are the
	// same level (warmup_stats treats segments whose means are within their
	// spread as equivalent). Default 0.05, the default target CI half-width
	// of threadlab dimension: a shift smaller than that is not a result.
	Tolerance float64
	// NoiseUnits: see Tolerance. Default 2.
	NoiseUnits float64
	// HigherIsBetter says the metric is a rate (rps) rather than a time
	// (p99_ms, wall_ms): it decides which direction is a slowdown.
	HigherIsBetter bool
	// logs: the series is the logarithm of the data (Classify), so
	// Tolerance is already an absolute log distance.
	logs bool
}

func (o Options) withDefaults() Options {
	if o.PenaltyFactor <= 0 {
		o.PenaltyFactor = 6
	}
	if o.MinSegment <= 0 {
		o.MinSegment = 1
	}
	if o.SteadyFraction <= 0 {
		o.SteadyFraction = 0.25
	}
	if o.Tolerance <= 0 {
		o.Tolerance = 0.05
	}
	if o.NoiseUnits <= 0 {
		o.NoiseUnits = 2
	}
	return o
}

// Segment is a run x[Start:End] between changepoints.
type Segment struct {
	Start, End int // End exclusive
	Mean       float64
	Median     float64
	Var        float64 // maximum-likelihood variance
}

// Len is the number of values in the segment.
func (s Segment) Len() int { return s.End - s.Start }

// Result is the classification of one series.
type Result struct {
	Class Class
	// SteadyFrom is the index of the first steady value: 0 when flat, the
	// start of the last segment after a warm-up or slowdown, -1 when there
	// is no steady state (nothing should be used as steady).
	SteadyFrom int
	// Changepoints are the raw PELT changepoints (segment starts), before
	// equivalent segments were merged.
	Changepoints []int
	// Segments are the levels after merging adjacent equivalent segments.
	Segments []Segment
	N        int
	// Scale is the series' noise scale (Scale): the unit of the penalty
	// and of the merging of levels.
	Scale float64
}

// Excluded is how many leading values are not steady state.
func (r Result) Excluded() int {
	if r.SteadyFrom < 0 {
		return r.N
	}
	return r.SteadyFrom
}

// Classify finds the changepoints of x and classifies it. NaN values are
// the caller's to remove (a failed iteration has no value, not a zero).
// Short series are classified all the same; the caller decides whether so
// few points mean anything (the pipeline asks for 10).
//
// A series of positive values (times, rates) is classified on its
// logarithm: benchmark noise is multiplicative, so a warm-up at 150 ms
// that swings ±40 ms beside a steady 40 ms that swings ±2 ms is one
// noise scale in log units, while in ms the warm-up's own swings set a
// scale so wide that a 3.5x level shift fell under the penalty (seen on a
// loaded host in the issue 20 acceptance test). Segments are reported in
// the data's units; Scale stays in log units (a relative spread).
func Classify(x []float64, o Options) Result {
	o = o.withDefaults()
	if !allPositive(x) {
		return classify(x, o)
	}
	logs := make([]float64, len(x))
	for i, v := range x {
		logs[i] = math.Log(v)
	}
	lo := o
	lo.Tolerance, lo.logs = math.Log1p(o.Tolerance), true
	res := classify(logs, lo)
	for i, sg := range res.Segments {
		res.Segments[i] = segment(x, sg.Start, sg.End)
	}
	return res
}

func allPositive(x []float64) bool {
	for _, v := range x {
		if !(v > 0) || math.IsInf(v, 1) {
			return false
		}
	}
	return len(x) > 0
}

func classify(x []float64, o Options) Result {
	n := len(x)
	res := Result{N: n}
	if n == 0 {
		res.Class, res.SteadyFrom = NoSteadyState, -1
		return res
	}
	res.Scale = Scale(x)
	pen := o.PenaltyFactor * math.Log(float64(max(n, 2)))
	res.Changepoints = Changepoints(x, pen, o.MinSegment, res.Scale)
	res.Segments = merge(x, segments(x, res.Changepoints), o, o.NoiseUnits*res.Scale)
	last := res.Segments[len(res.Segments)-1]
	switch {
	case len(res.Segments) == 1:
		res.Class, res.SteadyFrom = Flat, 0
	case float64(last.Len()) < o.SteadyFraction*float64(n):
		res.Class, res.SteadyFrom = NoSteadyState, -1
	case anyBetter(res.Segments[:len(res.Segments)-1], last, o, o.NoiseUnits*res.Scale):
		res.Class, res.SteadyFrom = Slowdown, last.Start
	default:
		res.Class, res.SteadyFrom = Warmup, last.Start
	}
	return res
}

// anyBetter reports whether an earlier level beat the final one by more than
// the tolerance: the VM was faster before and got slower (a slowdown, even
// if it warmed up first).
func anyBetter(earlier []Segment, last Segment, o Options, noise float64) bool {
	for _, s := range earlier {
		if o.same(s.Median, last.Median, noise) {
			continue
		}
		if (s.Median > last.Median) == o.HigherIsBetter {
			return true
		}
	}
	return false
}

func segments(x []float64, cps []int) []Segment {
	bounds := append(append([]int{0}, cps...), len(x))
	out := make([]Segment, 0, len(bounds)-1)
	for i := 0; i+1 < len(bounds); i++ {
		out = append(out, segment(x, bounds[i], bounds[i+1]))
	}
	return out
}

func segment(x []float64, start, end int) Segment {
	v := x[start:end]
	var mean float64
	for _, y := range v {
		mean += y
	}
	mean /= float64(len(v))
	var ss float64
	for _, y := range v {
		ss += (y - mean) * (y - mean)
	}
	return Segment{Start: start, End: end, Mean: mean, Median: stats.Median(v), Var: ss / float64(len(v))}
}

// merge joins adjacent segments at the same level, repeatedly, so that a
// changepoint inside the tolerance or the noise does not count as a change
// of level. Levels are compared by their medians (warmup_stats compares
// medians too). A one-point segment after the first is an outlier (a
// neighbour's time slice, a GC), not a level: it joins the segment before
// it. Only the first segment may be one point long: one slow first
// iteration is the commonest warm-up left over. A short segment between
// two at the same level is an excursion and joins them.
func merge(x []float64, segs []Segment, o Options, noise float64) []Segment {
	for i := 1; i < len(segs); {
		if segs[i].Len() == 1 {
			segs = slices.Replace(segs, i-1, i+1, segment(x, segs[i-1].Start, segs[i].End))
			continue
		}
		i++
	}
	// A short excursion between two segments at one level (two slow
	// bursts while a neighbour ran) is that level, interrupted: the three
	// become one. Short: at most 2 points or a tenth of the series.
	short := max(2, len(x)/10)
	for i := 1; i+1 < len(segs); {
		if segs[i].Len() <= short && o.same(segs[i-1].Median, segs[i+1].Median, noise) {
			segs = slices.Replace(segs, i-1, i+2, segment(x, segs[i-1].Start, segs[i+1].End))
			i = max(i-1, 1)
			continue
		}
		i++
	}
	for {
		merged := false
		for i := 0; i+1 < len(segs); i++ {
			if o.same(segs[i].Median, segs[i+1].Median, noise) {
				s := segment(x, segs[i].Start, segs[i+1].End)
				segs = slices.Replace(segs, i, i+2, s)
				merged = true
				break
			}
		}
		if !merged {
			return segs
		}
	}
}

// same: |a-b| <= max(tol·max(|a|,|b|), noise); two zeros are the same
// level. On logarithms the tolerance is already a distance:
// |a-b| <= max(log(1+tol), noise).
func (o Options) same(a, b, noise float64) bool {
	if o.logs {
		return math.Abs(a-b) <= max(o.Tolerance, noise)
	}
	return math.Abs(a-b) <= max(o.Tolerance*max(math.Abs(a), math.Abs(b)), noise)
}
