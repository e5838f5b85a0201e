package stats

import "math"

// RatioInterval is the bootstrap interval of median(b)/median(a) at the
// verdicts' level: level is the one-sided level (Alpha: a 90% interval),
// and each side is resampled hierarchically, forks then iterations within
// them (bootstrap.go), exactly as a compare claim's interval is. Forks of
// one value each are the plain bootstrap of the median. NaN when a side is
// empty or a resampled denominator is not positive. `threadlab diff` and
// compare.html use it, so a comparison between runs has the interval of a
// comparison between variants.
func RatioInterval(a, b [][]float64, level float64, resamples int, seed int64, label string) (lo, hi float64) {
	if !(level > 0 && level < 0.5) {
		level = Alpha
	}
	if resamples <= 0 {
		resamples = Resamples
	}
	sa, sb := newSample(nil, a), newSample(nil, b)
	r := newResampler(seed, label)
	return r.interval([]sample{sa, sb}, resamples, level, func(m []float64) float64 {
		if !(m[0] > 0) {
			return math.NaN()
		}
		return m[1] / m[0]
	})
}

// MedianInterval is the bootstrap interval of a cell's median at the
// verdicts' level, resampling forks then iterations (as RatioInterval).
func MedianInterval(forks [][]float64, level float64, resamples int, seed int64, label string) (lo, hi float64) {
	if !(level > 0 && level < 0.5) {
		level = Alpha
	}
	if resamples <= 0 {
		resamples = Resamples
	}
	r := newResampler(seed, label)
	return r.interval([]sample{newSample(nil, forks)}, resamples, level, func(m []float64) float64 { return m[0] })
}
