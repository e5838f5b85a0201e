package stats

import (
	"math/rand/v2"
	"testing"
)

// TestMannWhitneyExact checks the exact distribution and tails against
// hand counts.
func TestMannWhitneyExact(t *testing.T) {
	// Sizes 2 and 2: the 6 ways to place a among 4 ranks give
	// U = 0, 1, 2, 2, 3, 4, so the distribution is (1, 1, 2, 1, 1)/6.
	want := []float64{1.0 / 6, 1.0 / 6, 2.0 / 6, 1.0 / 6, 1.0 / 6}
	got := mwDist(2, 2)
	for i := range want {
		if !near(got[i], want[i]) {
			t.Errorf("mwDist(2,2)[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	tests := []struct {
		a, b []float64
		p    float64
		why  string
	}{
		{[]float64{3, 4}, []float64{1, 2}, 1.0 / 6, "fully separated 2+2: U = 4, the top of 6 placements"},
		{[]float64{1, 2}, []float64{3, 4}, 1, "the other direction: U = 0, P(U >= 0) = 1"},
		{[]float64{7, 8, 9}, []float64{1, 2, 3}, 1.0 / 20, "3+3 separated: 1/C(6,3) = 0.05, the smallest p MinReplicates allows"},
		{[]float64{200, 202, 198, 200, 204, 196}, []float64{100, 101, 99, 100, 102, 98}, 1.0 / 924,
			"6+6 separated with ties inside each sample: only the top-6 subset reaches U = 36, 1/C(12,6)"},
		{[]float64{0, 0, 0, 0, 0}, []float64{0, 0, 0, 0, 0}, 1, "all tied: every subset has the same rank sum, p = 1"},
	}
	for _, tt := range tests {
		if got := mwGreater(tt.a, tt.b); !near(got, tt.p) {
			t.Errorf("mwGreater(%v, %v) = %v, want %v (%s)", tt.a, tt.b, got, tt.p, tt.why)
		}
	}
}

// TestMannWhitneyAgainstEnumeration compares mwGreater with a brute-force
// permutation test on small samples, with and without ties.
func TestMannWhitneyAgainstEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 60 {
		m, n := 2+rng.IntN(4), 2+rng.IntN(4)
		a, b := make([]float64, m), make([]float64, n)
		for i := range a {
			a[i] = float64(rng.IntN(6 + trial%2*100)) // trial parity: many ties or few
		}
		for i := range b {
			b[i] = float64(rng.IntN(6 + trial%2*100))
		}
		if got, want := mwGreater(a, b), bruteMW(a, b); !near(got, want) {
			t.Errorf("mwGreater(%v, %v) = %v, enumeration %v", a, b, got, want)
		}
	}
}

// bruteMW enumerates every split of the pooled values.
func bruteMW(a, b []float64) float64 {
	all := append(append([]float64{}, a...), b...)
	u := func(x, y []float64) float64 {
		s := 0.0
		for _, p := range x {
			for _, q := range y {
				if p > q {
					s++
				} else if p == q {
					s += 0.5
				}
			}
		}
		return s
	}
	obs := u(a, b)
	hit, total := 0, 0
	for mask := range 1 << len(all) {
		var x, y []float64
		for i, v := range all {
			if mask&(1<<i) != 0 {
				x = append(x, v)
			} else {
				y = append(y, v)
			}
		}
		if len(x) != len(a) {
			continue
		}
		total++
		if u(x, y) >= obs-1e-9 {
			hit++
		}
	}
	return float64(hit) / float64(total)
}

func TestSignedRankAndSign(t *testing.T) {
	// n = 3: W+ is the sum of a subset of {1, 2, 3}; sums 0,1,2,3,3,4,5,6 over 8.
	if got := signedRankGreater([]float64{1, 2, 3}); !near(got, 1.0/8) {
		t.Errorf("signedRankGreater(1,2,3) = %v, want 1/8", got)
	}
	// Differences -1, 2, 3: W+ = 2 + 3 = 5; P(W+ >= 5) = (sums 5, 6) = 2/8.
	if got := signedRankGreater([]float64{-1, 2, 3}); !near(got, 2.0/8) {
		t.Errorf("signedRankGreater(-1,2,3) = %v, want 2/8", got)
	}
	// Ties: |d| = 1, 1, 2 get midranks 1.5, 1.5, 3; all positive: W+ = 6, only
	// the all-positive pattern reaches it: 1/8.
	if got := signedRankGreater([]float64{1, 1, 2}); !near(got, 1.0/8) {
		t.Errorf("signedRankGreater(1,1,2) = %v, want 1/8", got)
	}
	// Zeros are dropped: nothing left, no evidence.
	if got := signedRankGreater([]float64{0, 0}); got != 1 {
		t.Errorf("signedRankGreater(0,0) = %v, want 1", got)
	}
	tests := []struct {
		n, k int
		p    float64
		why  string
	}{
		{5, 5, 1.0 / 32, "all five meet the bound: 1/2^5"},
		{5, 4, 6.0 / 32, "four of five: (C(5,4) + 1)/32"},
		{3, 3, 1.0 / 8, "three of three cannot reach 0.05"},
		{4, 0, 1, "none meets it"},
	}
	for _, tt := range tests {
		if got := binomUpper(tt.n, tt.k); !near(got, tt.p) {
			t.Errorf("binomUpper(%d, %d) = %v, want %v (%s)", tt.n, tt.k, got, tt.p, tt.why)
		}
	}
}

func TestJonckheereTerpstra(t *testing.T) {
	// Three groups of one: J counts increasing pairs; only the identity of
	// the 3! orders has J = 3, so p = 1/6.
	if got := jtIncreasing([][]float64{{1}, {2}, {3}}); !near(got, 1.0/6) {
		t.Errorf("JT(1 < 2 < 3) = %v, want 1/6", got)
	}
	// Groups of two, separated: J = 4 + 4 + 4 = 12 is reached by one of the
	// 6!/(2!2!2!) = 90 assignments: p = 1/90.
	if got := jtIncreasing([][]float64{{1, 2}, {3, 4}, {5, 6}}); !near(got, 1.0/90) {
		t.Errorf("JT separated 2+2+2 = %v, want 1/90", got)
	}
	// Decreasing data gives no evidence of an increase: J = 0, p = 1.
	if got := jtIncreasing([][]float64{{5, 6}, {3, 4}, {1, 2}}); got != 1 {
		t.Errorf("JT decreasing = %v, want 1", got)
	}
}
