package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBoundariesPublished compares the boundaries with published values
// for one-sided α = 0.025 and 5 equally spaced looks (Jennison & Turnbull,
// "Group Sequential Methods", table 7.6; gsDesign's sfLDOF gives the same
// to the printed precision): z = 4.877, 3.357, 2.680, 2.290, 2.031.
func TestBoundariesPublished(t *testing.T) {
	want := []float64{4.877, 3.357, 2.680, 2.290, 2.031}
	s := Sequential{MaxLooks: 5}
	for k := range want {
		s.Look = k + 1
		z := stdNormalQuantile(1 - s.Level(0.025))
		if math.Abs(z-want[k]) > 0.01 {
			t.Errorf("O'Brien-Fleming look %d: z = %.3f, want %.3f", k+1, z, want[k])
		}
	}
	// Pocock-type, first look by hand: α(0.2) = 0.025 ln(1 + (e-1) 0.2)
	// = 0.025 x 0.29543 = 0.0073858, z = Φ⁻¹(1 - 0.0073858) = 2.437.
	p := Sequential{Look: 1, MaxLooks: 5, Spending: Pocock}
	if got := p.Level(0.025); math.Abs(got-0.0073858) > 1e-6 {
		t.Errorf("Pocock look 1 level = %v, want 0.0073858", got)
	}
}

// TestBoundariesSpendAlpha simulates the Brownian motion the boundaries
// are computed for: the chance of crossing at any look must be α.
func TestBoundariesSpendAlpha(t *testing.T) {
	for _, fn := range []string{OBrienFleming, Pocock} {
		s := TrialLooks(4, 4, 12) // looks at n = 4..12, information n/12
		s.Spending = fn
		levels := make([]float64, s.MaxLooks)
		for k := range levels {
			s.Look = k + 1
			levels[k] = s.Level(0.05)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		const paths = 40000
		crossed := 0
		for range paths {
			sum, prev := 0.0, 0.0
			for k, tk := range s.Info {
				sum += rng.NormFloat64() * math.Sqrt(tk-prev)
				prev = tk
				if 1-stdNormalCDF(sum/math.Sqrt(tk)) <= levels[k] {
					crossed++
					break
				}
			}
		}
		rate := float64(crossed) / paths
		// 3 standard errors of a binomial proportion at 0.05 over 40000 paths: 0.0033
		if math.Abs(rate-0.05) > 0.0033 {
			t.Errorf("%s: crossing rate %.4f over %d looks, want 0.05", fn, rate, s.MaxLooks)
		}
	}
}

func TestTrialLooks(t *testing.T) {
	s := TrialLooks(7, 5, 20) // the trials: {min: 5, max: 20} after 7 rounds
	if s.Look != 3 || s.MaxLooks != 16 || s.Info[0] != 0.25 || s.Info[15] != 1 {
		t.Errorf("TrialLooks(7, 5, 20) = look %d of %d, info %v; want look 3 of 16 from 5/20 to 1", s.Look, s.MaxLooks, s.Info)
	}
	if err := (Sequential{Look: 1, MaxLooks: 3, Info: []float64{0.5, 0.4, 1}}).validate(); err == nil {
		t.Error("decreasing information fractions were accepted")
	}
	if (Sequential{}).Level(0.05) != 0.05 {
		t.Error("a single look must run at the full alpha")
	}
}
