// Package steady owns steady-state detection: where in a sequence of
// measurements a JVM stopped changing, and what kind of sequence it was.
// It follows Barrett et al. (2017), "Virtual machine warmup blows hot and
// cold" (OOPSLA), and their warmup_stats tool: changepoints by PELT with the
// normal mean-and-variance cost and a penalty of 15·log(n), then a
// classification of the sequence as flat, warm-up, slowdown or no steady
// state, and of a cell's forks as consistent or not.
//
// Data flow: a series (one fork's iteration values in order, or one
// window's per-second values) -> Classify (Changepoints -> segments ->
// equivalent neighbours merged -> Class and SteadyFrom) -> the caller drops
// values before SteadyFrom and reports the class; Forks summarises the
// classes of a cell; Recommend turns warmup.csv rounds into the warm-up time
// after which the metric was steady. The package takes and returns plain
// values; it reads no files.
package steady

import (
	"github.com/threadlab/threadlab/pipeline/stats"
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
	// PenaltyFactor k sets the changepoint penalty k·log(n). Default 15, as
	// warmup_stats (Barrett et al. 2017): conservative on purpose, so noise
	// stays flat and only a real change of level is a changepoint.
	PenaltyFactor float64
	// MinSegment is the shortest segment; default 2 (the least that has a
	// variance, as in changepoint::cpt.meanvar).
	MinSegment int
	// SteadyFraction: the last segment must span at least this fraction of
	// the series to count as a steady state. Default 0.25. (warmup_stats asks
	// that no changepoint fall in the last N iterations, with N fixed at 200
	// of 2000; a fraction suits the short series of a threadlab run.)
	SteadyFraction float64
	// Tolerance: two segments whose medians differ by at most this fraction
	// of the larger are the same level (warmup_stats treats overlapping
	// segments as equivalent). Default 0.05, the default target CI half-width
	// of threadlab dimension: a shift smaller than that is not a result.
	Tolerance float64
	// HigherIsBetter says the metric is a rate (rps) rather than a time
	// (p99_ms, wall_ms): it decides which direction is a slowdown.
	HigherIsBetter bool
	// VarFloor floors each segment's variance at this fraction of the whole
	// series' variance; default 0.01 (see Changepoints).
	VarFloor float64
}

func (o Options) withDefaults() Options {
	if o.PenaltyFactor <= 0 {
		o.PenaltyFactor = 15
	}
	if o.MinSegment <= 0 {
		o.MinSegment = 2
	}
	if o.SteadyFraction <= 0 {
		o.SteadyFraction = 0.25
	}
	if o.Tolerance <= 0 {
		o.Tolerance = 0.05
	}
	if o.VarFloor <= 0 {
		o.VarFloor = 0.01
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
}

// Excluded is how many leading values are not steady state.
func (r Result) Excluded() int {
	if r.SteadyFrom < 0 {
		return r.N
	}
	return r.SteadyFrom
}

// Classify finds the changepoints of x and classifies it. Series shorter
// than 2·MinSegment cannot hold a changepoint and are flat. NaN values are
// the caller's to remove (a failed iteration has no value, not a zero).
func Classify(x []float64, o Options) Result {
	o = o.withDefaults()
	n := len(x)
	res := Result{N: n}
	if n == 0 {
		res.Class, res.SteadyFrom = NoSteadyState, -1
		return res
	}
	pen := o.PenaltyFactor * math.Log(float64(max(n, 2)))
	res.Changepoints = Changepoints(x, pen, o.MinSegment, o.VarFloor)
	res.Segments = merge(x, segments(x, res.Changepoints), o.Tolerance)
	last := res.Segments[len(res.Segments)-1]
	switch {
	case len(res.Segments) == 1:
		res.Class, res.SteadyFrom = Flat, 0
	case float64(last.Len()) < o.SteadyFraction*float64(n):
		res.Class, res.SteadyFrom = NoSteadyState, -1
	case anyBetter(res.Segments[:len(res.Segments)-1], last, o):
		res.Class, res.SteadyFrom = Slowdown, last.Start
	default:
		res.Class, res.SteadyFrom = Warmup, last.Start
	}
	return res
}

// anyBetter reports whether an earlier level beat the final one by more than
// the tolerance: the VM was faster before and got slower (a slowdown, even
// if it warmed up first).
func anyBetter(earlier []Segment, last Segment, o Options) bool {
	for _, s := range earlier {
		if same(s.Median, last.Median, o.Tolerance) {
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
// changepoint PELT found in the variance alone, or a shift inside the
// tolerance, does not count as a change of level. Levels are compared by
// their medians (warmup_stats compares medians too): a segment that PELT
// split off because a neighbour's time slice made it noisier has the
// median of the level it interrupts, though one outlier moves its mean.
func merge(x []float64, segs []Segment, tol float64) []Segment {
	for {
		merged := false
		for i := 0; i+1 < len(segs); i++ {
			if same(segs[i].Median, segs[i+1].Median, tol) {
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

// same: |a-b| <= tol·max(|a|,|b|); two zeros are the same level.
func same(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*max(math.Abs(a), math.Abs(b))
}
