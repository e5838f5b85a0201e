package stats

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
)

// Resamples is the number of bootstrap resamples behind every claim
// interval: enough that the interval's ends move by well under the precision
// we print when the seed changes. The calibration suite runs the same
// number (see METHODOLOGY.md, Calibration), so the interval it certifies is
// the one a run publishes.
const Resamples = 10000

// SmoothFrom is the fewest replicates at which the bootstrap is smoothed
// (see resampler). Below it the plain bootstrap is already close to exact:
// with 3 against 3 the 90% interval of a ratio of medians is
// [min A/max B, max A/min B], which misses a pure shift with probability
// 1/C(6,3) = 0.05 on each side; smoothing there would narrow it.
const SmoothFrom = 5

// sample is one cell's data as the interval sees it: units are the
// independent replicates (one value per fork: the median of its
// iterations; or one value per trial when the cell has no fork structure).
// The iterations behind a fork's value are not resampled again: the fork's
// median already carries their noise once (see resampler).
type sample struct {
	units  []float64
	sorted []float64 // the units sorted (the plain bootstrap counts draws over them)
	// smooth is set when the sample has SmoothFrom or more positive units
	// that are not all equal: the bootstrap then draws on the log scale,
	// unit i as base[i] + jitter·Z, where base[i] = c + k(ln x_i − c) and
	// jitter = k·h, with c the mean of the logs, h = s/√n the bandwidth and
	// k = 1/√(1+h²/s²) the shrink that keeps the draws' spread near the
	// sample's (s is the logs' standard deviation; a draw's log variance is
	// k²(plug-in variance + h²)).
	smooth bool
	base   []float64
	jitter float64
}

// newSample builds a sample from a cell's values or forks.
func newSample(values []float64, forks [][]float64) sample {
	var s sample
	if len(forks) == 0 {
		s.units = slices.Clone(values)
	}
	for _, f := range forks {
		if len(f) > 0 {
			s.units = append(s.units, median(f))
		}
	}
	s.sorted = slices.Clone(s.units)
	slices.Sort(s.sorted)
	c, h, k, ok := smoothing(s.units)
	if ok {
		s.smooth, s.jitter = true, k*h
		for _, x := range s.units {
			s.base = append(s.base, c+k*(math.Log(x)-c))
		}
	}
	return s
}

// smoothing returns the smoothed bootstrap's parameters for units (see
// sample), and false when the sample is not smoothed: fewer than SmoothFrom
// units, a unit ≤ 0 (no log scale: error counts, zero rates), or no spread.
func smoothing(units []float64) (centre, h, k float64, ok bool) {
	n := len(units)
	if n < SmoothFrom {
		return 0, 0, 0, false
	}
	for _, x := range units {
		if !(x > 0) || math.IsInf(x, 0) {
			return 0, 0, 0, false
		}
	}
	for _, x := range units {
		centre += math.Log(x)
	}
	centre /= float64(n)
	var ss float64
	for _, x := range units {
		d := math.Log(x) - centre
		ss += d * d
	}
	s := math.Sqrt(ss / float64(n-1))
	if !(s > 1e-12) { // equal units leave rounding noise in the mean of their logs
		return 0, 0, 0, false
	}
	h = s / math.Sqrt(float64(n))
	return centre, h, 1 / math.Sqrt(1+h*h/(s*s)), true
}

// resampler draws bootstrap resamples of samples: pick replicates (forks
// with their medians, or trials) with replacement and take the median.
//
// Only the top level is resampled. An earlier version also resampled the
// iterations inside each picked fork; but a fork's median already contains
// its within-fork noise, so resampling it again counted that noise twice
// (Davison & Hinkley 1997, §3.8; Ren et al. 2010): the 90% interval covered
// 0.99 when iteration noise dominated. Kalibera & Jones (2013) make the same
// point for means: the variance of the top-level means estimates every
// level below it, so the interval needs only them.
//
// From SmoothFrom replicates the resample is smoothed (a smoothed
// bootstrap, De Angelis & Young 1992): each drawn value x becomes
// exp(c + k·(ln x − c + h·Z)), Z standard normal, with c, h and k from
// smoothing. The median of a few replicates takes few distinct values, so
// the plain bootstrap's percentiles sit on wide steps and the interval over-
// covers (0.94 at 5 forks); the jitter fills the steps. The calibration
// (METHODOLOGY.md) measures coverage from 3×2 to 10×10 forks × iterations.
type resampler struct {
	rng    *rand.Rand
	draw   []float64 // scratch: one smoothed resample, on the log scale
	stats  []float64 // one statistic per resample
	counts []int     // scratch: draws per index (plain bootstrap)
}

func newResampler(seed int64, label string) *resampler {
	return &resampler{rng: rand.New(rand.NewPCG(uint64(seed), hash(label)))}
}

// median draws one resampled median of s.
func (r *resampler) median(s sample) float64 {
	if !s.smooth {
		return r.plainMedian(s.sorted)
	}
	n := len(s.base)
	r.draw = r.draw[:0]
	for range n {
		r.draw = append(r.draw, s.base[r.rng.IntN(n)]+s.jitter*r.rng.NormFloat64())
	}
	// exp is monotone: the median of the drawn values is the exp of the
	// middle logs, so only those leave the log scale.
	sortedMedian(r.draw)
	if n%2 == 1 {
		return math.Exp(r.draw[n/2])
	}
	return (math.Exp(r.draw[n/2-1]) + math.Exp(r.draw[n/2])) / 2
}

// plainMedian draws a resampled median of sorted values without sorting:
// it counts how often each index is drawn and walks the counts to the
// middle, O(n) instead of O(n²) for the insertion sort.
func (r *resampler) plainMedian(sorted []float64) float64 {
	n := len(sorted)
	if cap(r.counts) < n {
		r.counts = make([]int, n)
	}
	counts := r.counts[:n]
	clear(counts)
	for range n {
		counts[r.rng.IntN(n)]++
	}
	// the k-th smallest (0-based) of the resample
	kth := func(k int) float64 {
		seen := 0
		for i, c := range counts {
			seen += c
			if seen > k {
				return sorted[i]
			}
		}
		return sorted[n-1]
	}
	if n%2 == 1 {
		return kth(n / 2)
	}
	return (kth(n/2-1) + kth(n/2)) / 2
}

// interval returns the alpha and 1-alpha percentiles (nearest rank) of
// stat over n resamples, stat receiving one resampled median per sample.
// NaN when a sample is empty or a resampled statistic is NaN.
func (r *resampler) interval(samples []sample, n int, alpha float64, stat func(meds []float64) float64) (lo, hi float64) {
	for _, s := range samples {
		if len(s.units) == 0 {
			return math.NaN(), math.NaN()
		}
	}
	meds := make([]float64, len(samples))
	r.stats = r.stats[:0]
	for range n {
		for i, s := range samples {
			meds[i] = r.median(s)
		}
		x := stat(meds)
		if math.IsNaN(x) {
			return math.NaN(), math.NaN()
		}
		r.stats = append(r.stats, x)
	}
	// Nearest rank: the ceil(q*n)-th smallest, at least the first. The
	// 1e-9 keeps 0.975*10000, which floating point may compute as
	// 9750.000000000002, at rank 9750.
	rank := func(q float64) int {
		k := int(math.Ceil(q*float64(n)-1e-9)) - 1
		return max(0, min(n-1, k))
	}
	// Two selections instead of a sort: the upper rank first, then the
	// lower one among the values left below it.
	kl, kh := rank(alpha), rank(1-alpha)
	hi = selectKth(r.stats, kh)
	lo = selectKth(r.stats[:kh+1], kl)
	return lo, hi
}

// selectKth rearranges xs so that xs[k] is its k-th smallest (0-based)
// with nothing larger before it and nothing smaller after it (Hoare's
// quickselect, middle pivot), and returns xs[k]. Linear on average, where
// sorting the 10,000 resampled statistics cost as much as drawing them.
func selectKth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		p := xs[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for xs[i] < p {
				i++
			}
			for xs[j] > p {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}

// sortedMedian sorts xs in place (insertion sort: cells are small) and
// returns its median.
func sortedMedian(xs []float64) float64 {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// hash derives the second half of a point's bootstrap seed from its label,
// so that each point gets its own stream and adding a point to a sweep does
// not change the intervals of the others.
func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
