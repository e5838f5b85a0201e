package steady

import (
	"math"
	"slices"
)

// Changepoints finds the changepoints of x by PELT (Killick, Fearnhead &
// Eckley 2012, "Optimal detection of changepoints with a linear
// computational cost") with the normal change-in-mean cost at a fixed
// noise scale sigma: a segment costs the sum of its squared deviations
// from its mean over sigma², and every changepoint costs penalty. It
// returns the index where each segment after the first starts, ascending;
// no segment is shorter than minSeg.
//
// Why a change in mean at a robust scale, not warmup_stats' change in mean
// and variance (issue 20): with a segment variance estimated from the
// segment itself, a changepoint can save at most n·log(1/floor), and at
// the catalog's 3-5 iterations that never paid warmup_stats' penalty of
// 15·log n: every fork was "flat" by construction. With sigma estimated
// once for the whole series (Scale: the spread of successive differences,
// which a level shift barely moves), a shift of d·sigma between segments
// of k and n-k points saves d²·k(n-k)/n, so a real warm-up is seen on 10
// points while noise is not (the tests show both).
func Changepoints(x []float64, penalty float64, minSeg int, sigma float64) []int {
	n := len(x)
	minSeg = max(minSeg, 1)
	if n < 2*minSeg || sigma <= 0 || math.IsNaN(sigma) {
		return nil
	}
	c := newMeanCost(x, sigma)
	f := make([]float64, n+1) // f[t]: optimal cost of x[:t]
	prev := make([]int, n+1)  // prev[t]: start of the last segment of that optimum
	f[0] = -penalty
	cands := []int{0}
	for t := minSeg; t <= n; t++ {
		// s = t-minSeg becomes admissible: the segment [s, t) has minSeg points,
		// and x[:s] can itself be segmented only when s >= minSeg.
		if s := t - minSeg; s >= minSeg {
			cands = append(cands, s)
		}
		best, arg := math.Inf(1), 0
		for _, s := range cands {
			if v := f[s] + c.cost(s, t) + penalty; v < best {
				best, arg = v, s
			}
		}
		f[t], prev[t] = best, arg
		// PELT's pruning: a start that already costs more than the optimum
		// without its penalty can never become optimal later (K = 0 holds
		// for this cost). The argument compares against a segment [t, u),
		// which is admissible for every later u only when minSeg is 1; with
		// longer segments the search stays exhaustive (the series here are
		// short: O(n²) is fine).
		if minSeg > 1 {
			continue
		}
		kept := cands[:0]
		for _, s := range cands {
			if f[s]+c.cost(s, t) <= best {
				kept = append(kept, s)
			}
		}
		cands = kept
	}
	var cps []int
	for t := prev[n]; t > 0; t = prev[t] {
		cps = append(cps, t)
	}
	slices.Reverse(cps)
	return cps
}

// Scale is the noise scale of x that Changepoints and the merging of
// levels use: the median absolute successive difference over 0.6745·√2,
// a consistent estimate of the standard deviation of independent normal
// noise that a few level shifts do not inflate (each moves one difference
// only). When most successive values are equal (quantised
// milliseconds) the mean absolute difference is used instead; it is never
// below 0.1% of the series' median level, so a constant series has a
// finite scale.
func Scale(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	d := make([]float64, len(x)-1)
	var sum float64
	for i := range d {
		d[i] = math.Abs(x[i+1] - x[i])
		sum += d[i]
	}
	s := median(d) / (0.6745 * math.Sqrt2)
	if s == 0 {
		s = sum / float64(len(d)) / (0.7979 * math.Sqrt2)
	}
	floor := 1e-3 * math.Abs(median(slices.Clone(x)))
	if floor == 0 {
		floor = 1e-12
	}
	return max(s, floor)
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	slices.Sort(x)
	m := len(x) / 2
	if len(x)%2 == 1 {
		return x[m]
	}
	return (x[m-1] + x[m]) / 2
}

// meanCost evaluates segment costs in O(1) from prefix sums of the
// centred series (centring keeps the sums of squares precise when the
// values are large, e.g. 50 000 rps).
type meanCost struct {
	s1, s2 []float64
	inv    float64 // 1/sigma²
}

func newMeanCost(x []float64, sigma float64) meanCost {
	n := len(x)
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(n)
	c := meanCost{s1: make([]float64, n+1), s2: make([]float64, n+1), inv: 1 / (sigma * sigma)}
	for i, v := range x {
		d := v - mean
		c.s1[i+1] = c.s1[i] + d
		c.s2[i+1] = c.s2[i] + d*d
	}
	return c
}

// cost of the segment x[s:t]: its squared deviations from its mean, in
// units of sigma².
func (c meanCost) cost(s, t int) float64 {
	k := float64(t - s)
	sum := c.s1[t] - c.s1[s]
	return max(c.s2[t]-c.s2[s]-sum*sum/k, 0) * c.inv
}
