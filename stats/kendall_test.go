package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestKendallOf(t *testing.T) {
	seq := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		return xs
	}
	rev := func(xs []float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[len(xs)-1-i] = x
		}
		return out
	}
	nan := math.NaN()
	for _, tt := range []struct {
		why  string
		x, y []float64
		n, s int
		tau  float64 // NaN: none
		p    float64 // NaN: not tested; else within 1e-4
	}{
		{"same order: every pair concordant, S = 45 = n(n-1)/2", seq(10), seq(10), 10, 45, 1, 2 * stdNormalCDF(-44/math.Sqrt(125))},
		{"reversed: every pair discordant", seq(10), rev(seq(10)), 10, -45, -1, 2 * stdNormalCDF(-44/math.Sqrt(125))},
		{"four adjacent swaps: 41 concordant, 4 discordant; var(S) = 10·9·25/18 = 125, continuity-corrected z = 36/√125",
			seq(10), []float64{2, 1, 4, 3, 6, 5, 8, 7, 9, 10}, 10, 37, 37.0 / 45, 2 * stdNormalCDF(-36/math.Sqrt(125))},
		{"five tied pairs in each: tau-b leaves them out of the denominator (45 - 5 = 40 = S, tau 1); var(S) = (2250 - 90 - 90)/18 + 10·10/180",
			[]float64{1, 1, 2, 2, 3, 3, 4, 4, 5, 5}, []float64{1, 1, 2, 2, 3, 3, 4, 4, 5, 5}, 10, 40, 1, 2 * stdNormalCDF(-39/math.Sqrt(115+5.0/9))},
		{"a constant y has no order: no tau, no test", seq(10), []float64{3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, 10, 0, nan, nan},
		{"nine pairs: tau, but too few for the normal approximation", seq(9), seq(9), 9, 36, 1, nan},
		{"a pair with a NaN is left out", append(seq(10), nan), append(seq(10), 4), 10, 45, 1, 2 * stdNormalCDF(-44/math.Sqrt(125))},
		{"one pair: no test and no tau", []float64{1}, []float64{2}, 1, 0, nan, nan},
	} {
		k := KendallOf(tt.x, tt.y)
		if k.N != tt.n || k.S != tt.s {
			t.Errorf("%s: n %d S %d, want %d %d", tt.why, k.N, k.S, tt.n, tt.s)
		}
		if math.IsNaN(tt.tau) != math.IsNaN(k.Tau) || (!math.IsNaN(tt.tau) && math.Abs(k.Tau-tt.tau) > 1e-12) {
			t.Errorf("%s: tau %v, want %v", tt.why, k.Tau, tt.tau)
		}
		if math.IsNaN(tt.p) != math.IsNaN(k.P) || (!math.IsNaN(tt.p) && math.Abs(k.P-tt.p) > 1e-4) {
			t.Errorf("%s: p %v, want %v", tt.why, k.P, tt.p)
		}
	}
}

// TestKendallNull: with x and y independent, the test rejects at 5% about
// 5% of the time at the sizes the report meets (a claim's 10-30 forks),
// and no more than that, ties in y included.
func TestKendallNull(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, n := range []int{10, 12, 20, 30} {
		const reps = 4000
		rejected := 0
		for range reps {
			x, y := make([]float64, n), make([]float64, n)
			for i := range x {
				x[i] = r.NormFloat64()
				y[i] = math.Round(r.NormFloat64() * 4) // a few ties, as rounded timings have
			}
			if KendallOf(x, y).P < 0.05 {
				rejected++
			}
		}
		if rate := float64(rejected) / reps; rate > 0.06 || rate < 0.025 {
			t.Errorf("n = %d: rejected %.3f of independent samples at 5%%, want about 0.05 and at most 0.06", n, rate)
		}
	}
}

func ExampleKendallOf() {
	// Host speed probe and burst wall time of ten forks: the wall time
	// follows the probe except for two neighbours that swap.
	spin := []float64{1600, 1650, 1700, 1750, 1800, 1850, 1900, 1950, 2000, 2100}
	wall := []float64{350, 362, 355, 371, 380, 384, 392, 399, 410, 431}
	k := KendallOf(spin, wall)
	fmt.Printf("tau %.2f, p %.4f\n", k.Tau, k.P)
	// Output: tau 0.96, p 0.0002
}
