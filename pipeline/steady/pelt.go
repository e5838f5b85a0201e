package steady

import (
	"math"
)

// Changepoints finds the changepoints of x by PELT (Killick, Fearnhead &
// Eckley 2012, "Optimal detection of changepoints with a linear
// computational cost") with the normal mean-and-variance cost that R's
// changepoint::cpt.meanvar uses and Barrett et al.'s warmup_stats calls:
// a segment of k points with maximum-likelihood variance v costs
// k·(log 2π + log v + 1) (twice its negative log-likelihood), and every
// changepoint costs penalty. It returns the index where each segment after
// the first starts, ascending; no segment is shorter than minSeg (at least 2,
// since a one-point segment has no variance).
//
// Segment variances are floored at varFloor·var(x): a run of identical or
// nearly identical values (integer milliseconds, a quantised counter) would
// otherwise have log v → -∞ and buy a changepoint for free. With the floor a
// point can gain at most log(1/varFloor) from being split off, so short
// spurious segments cannot pay the penalty.
func Changepoints(x []float64, penalty float64, minSeg int, varFloor float64) []int {
	n := len(x)
	minSeg = max(minSeg, 2)
	if n < 2*minSeg {
		return nil
	}
	c := newMeanVarCost(x, varFloor)
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
		// for likelihood costs).
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
	for i, j := 0, len(cps)-1; i < j; i, j = i+1, j-1 {
		cps[i], cps[j] = cps[j], cps[i]
	}
	return cps
}

// meanVarCost evaluates segment costs in O(1) from prefix sums of the
// centred series (centring keeps the sums of squares precise when the
// values are large, e.g. 50 000 rps).
type meanVarCost struct {
	s1, s2 []float64
	floor  float64
}

func newMeanVarCost(x []float64, varFloor float64) meanVarCost {
	n := len(x)
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(n)
	c := meanVarCost{s1: make([]float64, n+1), s2: make([]float64, n+1)}
	var ss float64
	for i, v := range x {
		d := v - mean
		c.s1[i+1] = c.s1[i] + d
		c.s2[i+1] = c.s2[i] + d*d
		ss += d * d
	}
	c.floor = varFloor * ss / float64(n)
	if c.floor <= 0 || math.IsNaN(c.floor) {
		// A constant series: every segment has the same cost per point, so
		// any changepoint only adds penalty. The floor just keeps log finite.
		c.floor = math.SmallestNonzeroFloat64 * 1e10
	}
	return c
}

// cost of the segment x[s:t].
func (c meanVarCost) cost(s, t int) float64 {
	k := float64(t - s)
	m := (c.s1[t] - c.s1[s]) / k
	v := (c.s2[t]-c.s2[s])/k - m*m
	v = max(v, c.floor)
	return k * (math.Log(2*math.Pi) + math.Log(v) + 1)
}
