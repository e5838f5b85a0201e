package steady

import (
	"fmt"
	"math"
	"slices"
)

// Settle tunes Settled. The zero value means the defaults below.
type Settle struct {
	// Window k: the rule reads the last 2k rounds, the latest k against the
	// k before them. Default 4.
	Window int
	// Fluctuations is how often the latest k rounds must change direction
	// (BenchmarkDotNet's "fluctuation": A>B<C or A<B>C); default 2 of the
	// k-2 possible, so a window still moving one way is not steady.
	Fluctuations int
	// Tolerance: the latest window may be better than the one before by at
	// most this fraction of its level (or NoiseUnits noise units of the
	// rounds, whichever is larger) and still count as no longer improving.
	// Default 0.05, Classify's tolerance.
	Tolerance  float64
	NoiseUnits float64 // default 2, as Classify
	// HigherIsBetter: the rounds measure a rate (rps) rather than a time.
	HigherIsBetter bool
}

func (o Settle) withDefaults() Settle {
	if o.Window <= 0 {
		o.Window = 4
	}
	if o.Fluctuations <= 0 {
		o.Fluctuations = min(2, max(o.Window-2, 1))
	}
	if o.Tolerance <= 0 {
		o.Tolerance = 0.05
	}
	if o.NoiseUnits <= 0 {
		o.NoiseUnits = 2
	}
	return o
}

// Verdict is what Settled found on a fork's warm-up rounds: whether the
// warm-up may stop, and the evidence, for steady.json.
type Verdict struct {
	Steady bool
	// Rounds read, and the medians of the latest window and the one before
	// it (NaN until there are 2·Window rounds).
	Rounds         int
	Latest, Before float64
	Fluctuations   int
	// Why says in one line what held or did not.
	Why string
}

// Settled applies the stopping rule of an until-steady warm-up to a fork's
// rounds so far (each round's value of the primary metric, in order). The
// fork is steady when, over its last 2k rounds (k = Window):
//
//  1. the latest k rounds change direction at least Fluctuations times
//     (BenchmarkDotNet's AutoWarmupStoppingCriteria counts such
//     fluctuations: a sequence still decreasing or increasing is not
//     steady), and
//  2. the median of the latest k rounds is not better than the median of
//     the k before them by more than the tolerance (it stopped improving:
//     Barrett et al.'s steady state is a last segment with no changepoint,
//     and two windows at one level is its stand-in for a handful of rounds).
//
// A warm-up that gets worse passes rule 2 (a slowdown is not a warm-up);
// the classification of the measured points then calls it what it is.
func Settled(x []float64, o Settle) Verdict {
	o = o.withDefaults()
	k := o.Window
	v := Verdict{Rounds: len(x), Latest: math.NaN(), Before: math.NaN()}
	if len(x) < 2*k {
		v.Why = fmt.Sprintf("%d of the %d rounds the rule reads", len(x), 2*k)
		return v
	}
	latest, before := x[len(x)-k:], x[len(x)-2*k:len(x)-k]
	v.Latest, v.Before = median(slices.Clone(latest)), median(slices.Clone(before))
	v.Fluctuations = fluctuations(latest)
	gain := v.Before - v.Latest // a time: lower is better
	if o.HigherIsBetter {
		gain = -gain
	}
	allowed := max(o.Tolerance*max(math.Abs(v.Latest), math.Abs(v.Before)), o.NoiseUnits*Scale(x[len(x)-2*k:]))
	improving := gain > allowed
	switch {
	case v.Fluctuations < o.Fluctuations:
		v.Why = fmt.Sprintf("rounds %d-%d still move one way (%d direction change(s), %d needed)", len(x)-k+1, len(x), v.Fluctuations, o.Fluctuations)
	case improving:
		v.Why = fmt.Sprintf("rounds %d-%d (median %.4g) still improve on rounds %d-%d (median %.4g) by more than %.2g",
			len(x)-k+1, len(x), v.Latest, len(x)-2*k+1, len(x)-k, v.Before, allowed)
	default:
		v.Steady = true
		v.Why = fmt.Sprintf("rounds %d-%d (median %.4g) fluctuate (%d direction changes) and no longer improve on rounds %d-%d (median %.4g, allowed %.2g)",
			len(x)-k+1, len(x), v.Latest, v.Fluctuations, len(x)-2*k+1, len(x)-k, v.Before, allowed)
	}
	return v
}

// fluctuations counts the direction changes of x: i where x[i-1] < x[i] >
// x[i+1] or x[i-1] > x[i] < x[i+1]; an equal neighbour counts as a change
// (BenchmarkDotNet counts a zero step as one too).
func fluctuations(x []float64) int {
	n := 0
	for i := 1; i+1 < len(x); i++ {
		a, b := x[i]-x[i-1], x[i+1]-x[i]
		if a == 0 || b == 0 || (a > 0) != (b > 0) {
			n++
		}
	}
	return n
}
