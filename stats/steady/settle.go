package steady

import (
	"fmt"
	"math"
	"slices"
	"time"
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
	// TrendWindow: the trend test reads at most this many recent rounds
	// (default 20), fewer when the rounds so far have a later level
	// (Classify's steady segment starts inside the window).
	TrendWindow int
	// Horizon: rule 3 projects the drift this many rounds ahead (default
	// 10).
	Horizon int
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
	if o.TrendWindow <= 0 {
		o.TrendWindow = 20
	}
	if o.Horizon <= 0 {
		o.Horizon = 10
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
	// The trend test (rule 3): the rounds it read (the last TrendRounds);
	// the improvement over the next TrendWindow rounds at Theil–Sen's
	// slope (Drift) and at the most improving slope of Sen's one-sided 90%
	// bound (DriftBound), each as a fraction of the level (positive:
	// getting better; NaN when not computed); the allowance they are held
	// to (Allowed); and Mann–Kendall's one-sided p of an improving trend.
	TrendRounds       int
	Drift, DriftBound float64
	Allowed           float64
	TrendP            float64
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
//     and two windows at one level is its stand-in for a handful of rounds),
//     and
//  3. the recent rounds plausibly stopped drifting: over the last
//     TrendWindow rounds (cut to the last level when Classify finds a
//     changepoint inside them: a step, then flat), Sen's one-sided 90%
//     bound of Theil–Sen's slope, at its most improving, would improve the
//     level by no more than the allowance over the next TrendWindow rounds.
//     The allowance is the tolerance or one noise unit (Scale) of the
//     rounds read, whichever is larger (NoiseUnits applies to rules 1
//     and 2 and to Classify): what Classify would call the same
//     level, so a drift that passes does not split the measured points
//     into levels later. The rounds so far must also have a steady
//     segment (Classify's class is not "no steady state") and the last
//     level at least 2k rounds.
//
// Rules 1 and 2 alone cannot see a drift of 1% a round in 5% noise: 4
// rounds against 4 move by 4%, inside the allowance, and noise makes
// fluctuations (issue 20: every fork of io-bound and boot-versions stopped
// "steady" and then lost about half of its 40 measured bursts to the
// classification). Rule 3 asks the rounds to show the drift is small,
// not to fail to show it is large: on 8 rounds of 5% noise the bound is
// wide, and a fork keeps warming until the rounds are enough to bound
// the drift (TestStopRates: a flat series of 5% noise stops by round 20
// in 83% of series and by round 30 in 98%).
//
// A warm-up that gets worse passes rules 2 and 3 (a slowdown is not a
// warm-up); the classification of the measured points then calls it what
// it is.
func Settled(x []float64, o Settle) Verdict {
	o = o.withDefaults()
	k := o.Window
	v := Verdict{Rounds: len(x), Latest: math.NaN(), Before: math.NaN(), Drift: math.NaN(), TrendP: math.NaN()}
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
		return v
	case improving:
		v.Why = fmt.Sprintf("rounds %d-%d (median %.4g) still improve on rounds %d-%d (median %.4g) by more than %.2g",
			len(x)-k+1, len(x), v.Latest, len(x)-2*k+1, len(x)-k, v.Before, allowed)
		return v
	}
	from, why := trendFrom(x, o)
	if why != "" {
		v.Why = why
		return v
	}
	v.TrendRounds = len(x) - from
	span := fmt.Sprintf("rounds %d-%d", from+1, len(x))
	if trend(&v, x[from:], o) {
		v.Why = fmt.Sprintf("%s may still improve by %.1f%% over the next %d rounds (Theil–Sen %.1f%%, Sen's 90%% bound %.1f%%; Mann–Kendall p = %.2g): more than the %.1f%% allowed",
			span, 100*v.DriftBound, o.Horizon, 100*v.Drift, 100*v.DriftBound, v.TrendP, 100*v.Allowed)
		return v
	}
	v.Steady = true
	v.Why = fmt.Sprintf("rounds %d-%d (median %.4g) fluctuate (%d direction changes) and no longer improve on rounds %d-%d (median %.4g, allowed %.2g); %s would improve by at most %.1f%% over the next %d rounds (Theil–Sen %+.1f%%, Sen's 90%% bound), within %.1f%%",
		len(x)-k+1, len(x), v.Latest, v.Fluctuations, len(x)-2*k+1, len(x)-k, v.Before, allowed, span, 100*v.DriftBound, o.Horizon, 100*v.Drift, 100*v.Allowed)
	return v
}

// trendFrom is the first round the trend test reads: the last TrendWindow
// rounds, or fewer when Classify puts the start of the last level inside
// them. why is not empty when the rounds cannot be steady yet: no steady
// segment, or a last level shorter than 2k rounds.
func trendFrom(x []float64, o Settle) (from int, why string) {
	n, k := len(x), o.Window
	from = max(n-o.TrendWindow, 0)
	res := Classify(x, Options{Tolerance: o.Tolerance, NoiseUnits: o.NoiseUnits, HigherIsBetter: o.HigherIsBetter})
	switch {
	case res.SteadyFrom < 0:
		return from, fmt.Sprintf("rounds 1-%d still change level (changepoints at %v: no steady segment yet)", n, oneBased(res.Changepoints))
	case res.SteadyFrom > from:
		from = res.SteadyFrom
	}
	if n-from < 2*k {
		return from, fmt.Sprintf("the latest level began at round %d: %d round(s) at it, %d needed", from+1, n-from, 2*k)
	}
	return from, ""
}

// trendZ is the normal quantile of Sen's one-sided 90% bound.
const trendZ = 1.2815515655446004

// trend fills the trend evidence of v from the rounds y and tells whether
// they may still improve by more than the allowance over the next
// TrendWindow rounds, at the most improving slope of Sen's one-sided 90%
// bound. Positive series are read on their logarithm, as Classify reads
// them: slopes are then relative, and noise that scales with the level
// counts alike at every level; the fractions are of the level. Other
// series are read as they are, against their median.
func trend(v *Verdict, y []float64, o Settle) bool {
	logs := allPositive(y)
	z := y
	if logs {
		z = make([]float64, len(y))
		for i, x := range y {
			z[i] = math.Log(x)
		}
	}
	t := TrendOf(z)
	lo, hi := t.Bounds(trendZ)
	h := float64(o.Horizon)
	// gain: the improvement in z over h rounds at slope b.
	gain := func(b float64) float64 { return -b * h }
	v.TrendP, v.Drift, v.DriftBound = t.PDown(), gain(t.Slope), gain(lo)
	if o.HigherIsBetter {
		gain = func(b float64) float64 { return b * h }
		v.TrendP, v.Drift, v.DriftBound = t.PUp(), gain(t.Slope), gain(hi)
	}
	allowedZ := Scale(z) // one noise unit: see Settled, rule 3
	if logs {
		allowedZ = max(allowedZ, math.Log1p(o.Tolerance))
		// in logs a gain g is the fraction 1-e^-g of a time that falls, e^g-1
		// of a rate that rises
		frac := func(g float64) float64 { return -math.Expm1(-g) }
		if o.HigherIsBetter {
			frac = math.Expm1
		}
		improves := v.DriftBound > allowedZ
		v.Drift, v.DriftBound, v.Allowed = frac(v.Drift), frac(v.DriftBound), frac(allowedZ)
		return improves
	}
	level := math.Abs(median(slices.Clone(y)))
	allowedZ = max(allowedZ, o.Tolerance*level)
	improves := v.DriftBound > allowedZ
	if level > 0 {
		v.Drift, v.DriftBound, v.Allowed = v.Drift/level, v.DriftBound/level, allowedZ/level
	}
	return improves
}

func oneBased(xs []int) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = x + 1
	}
	return out
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

// Stop is an until-steady warm-up's decision after a round, as
// pipeline/forks/warmup.go asks it: "steady" once elapsed has reached min and
// Settled holds on the rounds' values x, "max" once elapsed has reached
// max without that, "" to run another round. The verdict is Settled's
// (its Why is the evidence).
func Stop(x []float64, elapsed, minimum, maximum time.Duration, o Settle) (string, Verdict) {
	v := Settled(x, o)
	switch {
	case elapsed >= minimum && v.Steady:
		return "steady", v
	case elapsed >= maximum:
		return "max", v
	}
	return "", v
}
