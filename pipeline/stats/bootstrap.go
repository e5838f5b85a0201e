package stats

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
)

// Resamples is the number of bootstrap resamples behind every claim
// interval: enough that the interval's ends move by well under the precision
// we print when the seed changes. The calibration suite passes fewer (see
// Options.Resamples and METHODOLOGY.md): the interval only ever makes a
// verdict harder to reach, so the error rates rest on the tests.
const Resamples = 10000

// sample is one cell's data as the claim tests see it: units are the
// independent replicates (one value per fork: the median of its iterations;
// or one value per trial when the cell has no fork structure), and forks
// holds the iterations behind each unit for the hierarchical bootstrap (a
// fork of one value when there is no structure).
type sample struct {
	units []float64
	forks [][]float64
	flat  []float64 // the units sorted, when every fork has one value (the plain bootstrap)
}

// newSample builds a sample from a cell's values or forks.
func newSample(values []float64, forks [][]float64) sample {
	var s sample
	if len(forks) == 0 {
		for _, x := range values {
			s.units = append(s.units, x)
			s.forks = append(s.forks, []float64{x})
		}
		s.flat = slices.Clone(values)
		slices.Sort(s.flat)
		return s
	}
	for _, f := range forks {
		if len(f) == 0 {
			continue
		}
		s.units = append(s.units, median(f))
		s.forks = append(s.forks, slices.Clone(f))
	}
	return s
}

// resampler draws hierarchical bootstrap resamples of samples: pick forks
// with replacement, then iterations within each picked fork with
// replacement, take each resampled fork's median and the median of those.
// With one value per fork this is the ordinary bootstrap of the median.
// Resampling both levels keeps the between-fork variance (JVM to JVM) in
// the interval, which resampling pooled iterations would hide.
type resampler struct {
	rng    *rand.Rand
	fork   []float64 // scratch: one resampled fork
	meds   []float64 // scratch: resampled fork medians
	stats  []float64 // one statistic per resample
	counts []int     // scratch: draws per index (flatMedian)
}

func newResampler(seed int64, label string) *resampler {
	return &resampler{rng: rand.New(rand.NewPCG(uint64(seed), hash(label)))}
}

// median draws one resampled median of s.
func (r *resampler) median(s sample) float64 {
	if s.flat != nil {
		return r.flatMedian(s.flat)
	}
	r.meds = r.meds[:0]
	for range s.forks {
		f := s.forks[r.rng.IntN(len(s.forks))]
		if len(f) == 1 {
			r.meds = append(r.meds, f[0])
			continue
		}
		r.fork = r.fork[:0]
		for range f {
			r.fork = append(r.fork, f[r.rng.IntN(len(f))])
		}
		r.meds = append(r.meds, sortedMedian(r.fork))
	}
	return sortedMedian(r.meds)
}

// flatMedian draws a resampled median of sorted values (one per fork)
// without sorting: it counts how often each index is drawn and walks the
// counts to the middle, O(n) instead of O(n²) for the insertion sort.
func (r *resampler) flatMedian(sorted []float64) float64 {
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
	slices.Sort(r.stats)
	// Nearest rank: the ceil(q*n)-th smallest, at least the first. The
	// 1e-9 keeps 0.975*10000, which floating point may compute as
	// 9750.000000000002, at rank 9750.
	rank := func(q float64) float64 {
		k := int(math.Ceil(q*float64(n)-1e-9)) - 1
		return r.stats[max(0, min(n-1, k))]
	}
	return rank(alpha), rank(1 - alpha)
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
