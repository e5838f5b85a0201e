package stats

import (
	"math"
	"slices"
)

// Kendall is Kendall's rank correlation of paired values x[i], y[i]
// (Kendall 1938; ties as tau-b, Kendall 1945): whether y tends to rise
// with x, from the signs of the pairwise differences only, so one odd pair
// moves it little and no shape of the relation or of the noise is assumed.
// The report asks it whether a metric followed the host's own speed across
// forks (render/report hostspeed.go).
type Kendall struct {
	N int
	// S is the number of concordant pairs (x and y move the same way) less
	// the discordant ones; pairs tied in x or in y count in neither.
	S int
	// Tau is tau-b: S over the geometric mean of the pairs not tied in x
	// and not tied in y, from -1 to 1. NaN when x or y is constant or
	// there are fewer than 2 pairs.
	Tau float64
	// P is the two-sided p-value of "no association" by the normal
	// approximation of S under independence, with the variance corrected
	// for ties in both variables (Kendall 1970, eq. 4.3) and a continuity
	// correction, as Mann–Kendall's in stats/steady. Kendall gives the
	// approximation as adequate from n = 10; P is NaN below KendallMinN
	// and wherever Tau is.
	P float64
}

// KendallMinN is the fewest pairs Kendall tests: below 10 the normal
// approximation of S is not adequate (Kendall 1970, ch. 4).
const KendallMinN = 10

// KendallOf computes Kendall's tau-b of the pairs (x[i], y[i]) and its
// test. x and y must have the same length; pairs where either is NaN are
// left out.
func KendallOf(x, y []float64) Kendall {
	var xs, ys []float64
	for i := range min(len(x), len(y)) {
		if !math.IsNaN(x[i]) && !math.IsNaN(y[i]) {
			xs, ys = append(xs, x[i]), append(ys, y[i])
		}
	}
	n := len(xs)
	k := Kendall{N: n, Tau: math.NaN(), P: math.NaN()}
	if n < 2 {
		return k
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			k.S += sign(xs[j]-xs[i]) * sign(ys[j]-ys[i])
		}
	}
	tx, ty := tieSums(xs), tieSums(ys)
	n0 := float64(n*(n-1)) / 2
	den := math.Sqrt((n0 - tx.pairs) * (n0 - ty.pairs))
	if den == 0 {
		return k
	}
	k.Tau = float64(k.S) / den
	if n < KendallMinN {
		return k
	}
	fn := float64(n)
	v := (fn*(fn-1)*(2*fn+5) - tx.v5 - ty.v5) / 18
	v += tx.v2 * ty.v2 / (9 * fn * (fn - 1) * (fn - 2))
	v += tx.v1 * ty.v1 / (2 * fn * (fn - 1))
	if v <= 0 {
		return k
	}
	s := math.Abs(float64(k.S)) - 1 // continuity correction
	if s < 0 {
		s = 0
	}
	k.P = min(1, 2*stdNormalCDF(-s/math.Sqrt(v)))
	return k
}

func sign(d float64) int {
	switch {
	case d > 0:
		return 1
	case d < 0:
		return -1
	}
	return 0
}

// ties are the tie-group sums of one variable that Kendall's variance
// and tau-b read, over groups of t equal values: pairs = Σ t(t-1)/2,
// v5 = Σ t(t-1)(2t+5), v2 = Σ t(t-1)(t-2), v1 = Σ t(t-1).
type ties struct{ pairs, v5, v2, v1 float64 }

func tieSums(xs []float64) ties {
	s := slices.Sorted(slices.Values(xs))
	var out ties
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		if t := float64(j - i); t > 1 {
			out.pairs += t * (t - 1) / 2
			out.v5 += t * (t - 1) * (2*t + 5)
			out.v2 += t * (t - 1) * (t - 2)
			out.v1 += t * (t - 1)
		}
		i = j
	}
	return out
}
