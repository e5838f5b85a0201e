package steady

import (
	"math"
	"slices"
)

// Trend is a robust monotone-trend test of a short series against its
// position (0, 1, 2, ...): Theil–Sen's slope for the size of the drift
// and the Mann–Kendall test for whether there is one. Both use only the
// signs and ratios of pairwise differences, so one slow round (a GC, a
// neighbour's time slice) moves neither much, and neither assumes normal
// noise.
type Trend struct {
	N int
	// Slope is Theil–Sen's estimate (Theil 1950, Sen 1968): the median of
	// (y[j]-y[i])/(j-i) over every pair i < j, per round.
	Slope float64
	// S is Mann–Kendall's statistic, the sum of sign(y[j]-y[i]) over every
	// pair i < j: positive when later values are larger. VarS is its
	// variance under "no trend", corrected for ties (Kendall 1975):
	// (n(n-1)(2n+5) - sum over tie groups of t(t-1)(2t+5)) / 18.
	S    int
	VarS float64
	// Z is S standardised with a continuity correction: (S-1)/sd for S > 0,
	// (S+1)/sd for S < 0, 0 for S = 0.
	Z float64
	// slopes are the pairwise slopes, ascending (Bounds reads them).
	slopes []float64
}

// TrendOf computes Theil–Sen's slope and Mann–Kendall's S of y. Fewer
// than 2 values have no pairs: slope NaN, S 0.
func TrendOf(y []float64) Trend {
	n := len(y)
	t := Trend{N: n, Slope: math.NaN()}
	if n < 2 {
		return t
	}
	slopes := make([]float64, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d := y[j] - y[i]
			slopes = append(slopes, d/float64(j-i))
			switch {
			case d > 0:
				t.S++
			case d < 0:
				t.S--
			}
		}
	}
	t.Slope = median(slopes) // sorts slopes
	t.slopes = slopes
	t.VarS = float64(n*(n-1)*(2*n+5)) / 18
	sorted := slices.Clone(y)
	slices.Sort(sorted)
	for i := 0; i < n; {
		j := i
		for j < n && sorted[j] == sorted[i] {
			j++
		}
		if k := j - i; k > 1 {
			t.VarS -= float64(k*(k-1)*(2*k+5)) / 18
		}
		i = j
	}
	if t.VarS > 0 {
		switch sd := math.Sqrt(t.VarS); {
		case t.S > 0:
			t.Z = float64(t.S-1) / sd
		case t.S < 0:
			t.Z = float64(t.S+1) / sd
		}
	}
	return t
}

// PDown is the one-sided p-value of Mann–Kendall's test for a downward
// trend (later values smaller), by the normal approximation, which
// Kendall gives as adequate from n = 10 (with the continuity correction
// it is close already at 8). PUp is the same for an upward trend.
func (t Trend) PDown() float64 { return normalCDF(t.Z) }

// PUp: see PDown.
func (t Trend) PUp() float64 { return normalCDF(-t.Z) }

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// Bounds is Sen's (1968) distribution-free confidence interval of the
// slope, from the ranks of the pairwise slopes: with N pairs and
// C = z·sqrt(VarS), the bounds are the k-th smallest and the k-th largest
// slope, k = floor((N - C)/2). z = 1.2816 gives a one-sided 90% bound on
// each side. With too few pairs for that confidence (k < 1) the bounds
// are infinite.
func (t Trend) Bounds(z float64) (lo, hi float64) {
	n := len(t.slopes)
	k := int(math.Floor((float64(n) - z*math.Sqrt(t.VarS)) / 2))
	if n == 0 || k < 1 {
		return math.Inf(-1), math.Inf(1)
	}
	return t.slopes[k-1], t.slopes[n-k]
}
