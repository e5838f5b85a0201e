package stats

import (
	"fmt"
	"math"

	mstats "github.com/aclements/go-moremath/stats"
)

// Run-to-run variance: the third level. Kalibera & Jones (2013) model a
// benchmark's result as nested levels of repetition, each adding its own
// variance: iterations within a fork (a JVM), forks within a run, runs
// (a boot of the host, a build, a day). One run's interval holds the first
// two (the forks carry their iterations' noise); it cannot hold the third,
// because every fork of a run shares its host state. Two runs of io-bound
// with the same manifest gave 1.95 (90% CI 1.85–2.18) and 2.54
// (2.39–2.72): each interval excludes the other run's estimate.
//
// AcrossRuns treats each run's estimate as one top-level replicate, as
// K&J's estimator does: the variance of the top-level means holds every
// level below them, so the across-runs interval needs only the run
// estimates, on the log scale (ratios and rates are multiplicative):
// θ_r = ln(estimate of run r), θ̄ their mean, S² their sample variance,
// interval θ̄ ± t(k−1, 1−level)·√(S²/k). The between-run variance is the
// random effect, by K&J's method of moments: τ² = S² − mean(v_r), floored at
// 0, where v_r is run r's own variance of θ_r, read back from its interval
// as ((ln high − ln low) / (2·z(1−level)))².

// RunEstimate is one run's estimate of a claim's quantity and the interval
// the run published for it.
type RunEstimate struct {
	Run       string  // the run ID
	Estimate  float64 // the ratio (or, for an absolute claim, the median)
	Low, High float64 // its interval; NaN or 0 when the run has none
	// Level is the one-sided level of the interval's ends (0.05: a 90%
	// interval); 0 means Alpha.
	Level float64
}

// Across is the across-runs estimate of one quantity.
type Across struct {
	Runs      int
	Estimate  float64 // exp(θ̄): the geometric mean of the run estimates
	Low, High float64 // the interval at Level, from the t distribution with Runs−1 degrees of freedom
	Level     float64 // one-sided level of each end
	// BetweenSD is τ, the standard deviation of ln(estimate) from run to
	// run beyond what each run's own interval explains; WithinSD is the
	// root mean of the runs' own variances v_r (NaN when a run has no
	// interval). Both on the log scale: 0.1 is about 10%.
	BetweenSD, WithinSD float64
}

// AcrossRuns combines runs' estimates of one quantity at the one-sided
// level (0 means Alpha). It needs at least 2 runs with positive, finite
// estimates.
func AcrossRuns(runs []RunEstimate, level float64) (Across, error) {
	if !(level > 0 && level < 0.5) {
		level = Alpha
	}
	k := len(runs)
	if k < 2 {
		return Across{}, fmt.Errorf("across runs needs at least 2 comparable runs, got %d", k)
	}
	var sum float64
	for _, r := range runs {
		if !(r.Estimate > 0) || math.IsInf(r.Estimate, 0) {
			return Across{}, fmt.Errorf("run %s: estimate %v is not a positive number, so it has no log scale", r.Run, r.Estimate)
		}
		sum += math.Log(r.Estimate)
	}
	mean := sum / float64(k)
	var ss float64
	for _, r := range runs {
		d := math.Log(r.Estimate) - mean
		ss += d * d
	}
	s2 := ss / float64(k-1)
	t := mstats.InvCDF(mstats.TDist{V: float64(k - 1)})(1 - level)
	half := t * math.Sqrt(s2/float64(k))
	a := Across{Runs: k, Estimate: math.Exp(mean), Low: math.Exp(mean - half), High: math.Exp(mean + half), Level: level}

	var within float64
	for _, r := range runs {
		v := ownVariance(r)
		if math.IsNaN(v) {
			within = math.NaN()
			break
		}
		within += v / float64(k)
	}
	a.WithinSD = math.Sqrt(within)
	a.BetweenSD = math.NaN()
	if !math.IsNaN(within) {
		a.BetweenSD = math.Sqrt(math.Max(0, s2-within))
	}
	return a, nil
}

// ownVariance is a run's variance of ln(estimate) read back from its
// interval (normal approximation on the log scale), NaN without one.
func ownVariance(r RunEstimate) float64 {
	if !(r.Low > 0 && r.High >= r.Low) || math.IsInf(r.High, 0) {
		return math.NaN()
	}
	l := r.Level
	if !(l > 0 && l < 0.5) {
		l = Alpha
	}
	z := mstats.NormalDist{Mu: 0, Sigma: 1}.InvCDF(1 - l)
	w := (math.Log(r.High) - math.Log(r.Low)) / (2 * z)
	return w * w
}
