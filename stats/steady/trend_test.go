package steady

import (
	"math"
	"testing"
	"time"
)

// TestTrendByHand checks Theil–Sen and Mann–Kendall against hand
// arithmetic.
//
// y = {5, 3, 4, 1, 2}: the 10 pairwise slopes (y[j]-y[i])/(j-i) are
// (0,1) -2, (0,2) -0.5, (0,3) -4/3, (0,4) -0.75, (1,2) 1, (1,3) -1,
// (1,4) -1/3, (2,3) -3, (2,4) -1, (3,4) 1; sorted -3, -2, -4/3, -1, -1,
// -0.75, -0.5, -1/3, 1, 1: median (-1 - 0.75)/2 = -0.875. Signs: 2 up,
// 8 down, S = -6. VarS = 5·4·15/18 = 16.667, sd 4.0825; Z = (-6+1)/4.0825
// = -1.2247; P(down) = Φ(-1.2247) = 0.1103.
//
// y = {1, 1, 2, 2, 3}: slopes (0,1) 0, (0,2) 1/2, (0,3) 1/3, (0,4) 1/2,
// (1,2) 1, (1,3) 1/2, (1,4) 2/3, (2,3) 0, (2,4) 1/2, (3,4) 1; sorted
// 0, 0, 1/3, 1/2, 1/2, 1/2, 1/2, 2/3, 1, 1: median 1/2. S = 8 up - 0 down
// = 8. Two tie groups of 2: VarS = (300 - 2·2·1·9)/18 = 264/18 = 14.667,
// sd 3.8297; Z = 7/3.8297 = 1.8278; P(up) = 1-Φ(1.8278) = 0.0338.
func TestTrendByHand(t *testing.T) {
	tests := []struct {
		why        string
		y          []float64
		slope      float64
		s          int
		varS, z, p float64
		higherIsUp bool
	}{
		{"falling, no ties", []float64{5, 3, 4, 1, 2}, -0.875, -6, 300.0 / 18, -1.2247, 0.1103, false},
		{"rising, two tie groups", []float64{1, 1, 2, 2, 3}, 0.5, 8, 264.0 / 18, 1.8278, 0.0338, true},
		{"constant: no trend, every pair tied (VarS 0, Z 0)", []float64{4, 4, 4, 4}, 0, 0, 0, 0, 0.5, false},
	}
	for _, tt := range tests {
		tr := TrendOf(tt.y)
		p := tr.PDown()
		if tt.higherIsUp {
			p = tr.PUp()
		}
		if math.Abs(tr.Slope-tt.slope) > 1e-12 || tr.S != tt.s || math.Abs(tr.VarS-tt.varS) > 1e-9 ||
			math.Abs(tr.Z-tt.z) > 1e-4 || math.Abs(p-tt.p) > 1e-4 {
			t.Errorf("%s: TrendOf(%v) = %+v, p %.4f; want slope %g, S %d, VarS %.4f, Z %.4f, p %.4f",
				tt.why, tt.y, tr, p, tt.slope, tt.s, tt.varS, tt.z, tt.p)
		}
	}
	if tr := TrendOf([]float64{7}); !math.IsNaN(tr.Slope) || tr.S != 0 {
		t.Errorf("one value: %+v, want slope NaN, S 0 (no pairs)", tr)
	}
}

// zigzagDrift is 100·f^i·(1 ± a), + on even rounds: a drift of f per
// round under an alternating wobble that makes every round a fluctuation.
func zigzagDrift(n int, f, a float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		w := 1 + a
		if i%2 == 1 {
			w = 1 - a
		}
		x[i] = 100 * math.Pow(f, float64(i)) * w
	}
	return x
}

// TestSettledDriftByHand: 20 rounds of 100·0.99^i·(1 ± 3%). Rules 1 and 2
// pass (the wobble fluctuates; the last 4 rounds beat the 4 before by
// 0.99^4 = 3.9%, inside 5%), so only the trend test can keep it warming.
// On logarithms the 90 same-parity pairs have slope exactly ln 0.99, the
// 55 even-to-odd pairs lie below it and the 45 odd-to-even pairs above:
// the 95th and 96th of 190 sorted slopes are ln 0.99, so Theil–Sen's
// slope is ln 0.99 and so is Sen's 90% bound (k = floor((190 -
// 1.2816·sqrt(950))/2) = 75: the 75th smallest slope is among the 90),
// so the improvement over the next 10 rounds is 1 - 0.99^10 = 9.56%.
// The allowance is one noise unit of the logarithms: successive
// differences ln 0.99 ± ln(1.03/0.97) are 10 of 0.07007 and 9 of 0.04997,
// median 0.07007, Scale 0.07007/(0.6745·√2) = 0.073459, as a fraction
// 1 - e^-0.073459 = 7.083%: 9.56% is more, still warming. Mann–Kendall: every pair falls except odd i to
// even j at distance 1, 3 or 5 (the +6% wobble beats 1-5 rounds of drift
// of 1.005% each, not 7): 7·3 + 2 + 1 = 24 rises, 166 falls, S = -142;
// VarS = 20·19·45/18 = 950; Z = -141/30.82 = -4.575, p = 2.4e-6.
func TestSettledDriftByHand(t *testing.T) {
	x := zigzagDrift(20, 0.99, 0.03)
	v := Settled(x, Settle{})
	want := 1 - math.Pow(0.99, 10)
	if v.Steady || v.TrendRounds != 20 || math.Abs(v.Drift-want) > 1e-9 || math.Abs(v.DriftBound-want) > 1e-9 ||
		math.Abs(v.Allowed-0.070826) > 1e-5 || math.Abs(v.TrendP-2.4e-6) > 0.1e-6 {
		t.Fatalf("Settled = %+v; want not steady, 20 rounds read, drift and bound %.6f, allowed 0.070826, p 2.4e-6", v, want)
	}
	if tr := TrendOf(logsOf(x)); tr.S != -142 {
		t.Errorf("S = %d, want -142", tr.S)
	}
	// Without the drift the same wobble is steady: drift 0, S > -142.
	if v := Settled(zigzagDrift(20, 1, 0.03), Settle{}); !v.Steady {
		t.Errorf("the wobble alone: %+v, want steady", v)
	}
}

func logsOf(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Log(v)
	}
	return out
}

// TestStop runs the until-steady decision over synthetic round sequences,
// one round a second, min 5 s and max 60 s, and checks where and why it
// stops.
func TestStop(t *testing.T) {
	r := seeded(20)
	drift := func(n int, perRound, sd float64) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = 440 * math.Pow(1-perRound, float64(i)) * (1 + sd*r.NormFloat64())
		}
		return x
	}
	tests := []struct {
		why    string
		x      []float64
		stop   string
		lo, hi int // the round (1-based) at which it stops
	}{
		{"flat, noisy (CV 5%): stops once the rounds bound the drift, long before max",
			gauss(r, 60, 100, 5), "steady", 8, 16},
		{"flat, very noisy (CV 15%): the bound needs more rounds, still long before max",
			gauss(r, 60, 100, 15), "steady", 8, 26},
		{"1% a round in 1% noise (boot-versions' platform forks): warms up to max",
			drift(60, 0.01, 0.01), "max", 60, 60},
		{"1% a round in 5% noise (the virtual forks of io-bound and boot-versions): warms up to max",
			drift(60, 0.01, 0.05), "max", 60, 60},
		{"a step down after 6 rounds, then flat in 2% noise: stops once the new level has 2 windows (and before the step leaves the trend window)",
			concat(gauss(r, 6, 150, 3), gauss(r, 54, 100, 2)), "steady", 14, 20},
		{"drift of 1% a round for 30 rounds, then flat in 2% noise: stops after the drift, not at max",
			concat(drift(30, 0.01, 0.02), gauss(r, 30, 440*math.Pow(0.99, 30), 2*4.4*math.Pow(0.99, 30))), "steady", 31, 50},
		{"a steady fall with no noise never fluctuates: max",
			descending(60, 1000, 0.999), "max", 60, 60},
	}
	for _, tt := range tests {
		stop, at := "", 0
		var v Verdict
		for i := 1; i <= len(tt.x) && stop == ""; i++ {
			stop, v = Stop(tt.x[:i], time.Duration(i)*time.Second, 5*time.Second, 60*time.Second, Settle{})
			at = i
		}
		if stop != tt.stop || at < tt.lo || at > tt.hi {
			t.Errorf("%s: stop %q at round %d, want %q in [%d, %d] (%s)", tt.why, stop, at, tt.stop, tt.lo, tt.hi, v.Why)
		}
		if v.Why == "" {
			t.Errorf("%s: no evidence", tt.why)
		}
	}
	// min holds the warm-up back even when the rounds are steady.
	if stop, _ := Stop(gauss(r, 12, 100, 1), 3*time.Second, 20*time.Second, 60*time.Second, Settle{}); stop != "" {
		t.Errorf("steady rounds before min: stop %q, want another round", stop)
	}
}

// TestStopRates: over 200 seeded series each, how often the rule stops
// (a) a flat series of 5% noise by round 30 and (b) a 1%-a-round drift in
// 5% noise before round 30 (of 40 drifting rounds): the rule must stop
// the first almost always and the second rarely.
func TestStopRates(t *testing.T) {
	r := seeded(99)
	const reps = 200
	flatBy30, driftBefore30 := 0, 0
	for range reps {
		flat := gauss(r, 40, 100, 5)
		drift := make([]float64, 40)
		for i := range drift {
			drift[i] = 440 * math.Pow(0.99, float64(i)) * (1 + 0.05*r.NormFloat64())
		}
		for n := 8; n <= 30; n++ {
			if Settled(flat[:n], Settle{}).Steady {
				flatBy30++
				break
			}
		}
		for n := 8; n < 30; n++ {
			if Settled(drift[:n], Settle{}).Steady {
				driftBefore30++
				break
			}
		}
	}
	t.Logf("flat CV 5%%: stopped by round 30 in %d of %d; 1%%/round drift in 5%% noise: stopped before round 30 in %d of %d", flatBy30, reps, driftBefore30, reps)
	if flatBy30 < reps*95/100 {
		t.Errorf("flat: stopped by round 30 in %d of %d, want >= 95%%", flatBy30, reps)
	}
	if driftBefore30 > reps*10/100 {
		t.Errorf("drift: stopped before round 30 in %d of %d, want <= 10%%", driftBefore30, reps)
	}
}

// FuzzSettled: any finite rounds, zeros and negatives included, give a
// verdict with evidence and no panic; the trend's fractions are finite or
// NaN, never a steady verdict on an infinite bound.
func FuzzSettled(f *testing.F) {
	f.Add(100.0, 90.0, 95.0, 0.0, 12, false)
	f.Add(-1.0, 1.0, 1e9, 5.0, 40, true)
	f.Fuzz(func(t *testing.T, a, b, c, d float64, n int, higher bool) {
		if n < 0 {
			n = -n
		}
		n %= 64
		x := make([]float64, n)
		for i := range x {
			x[i] = []float64{a, b, c, d}[(i*7+i/3)%4]
			if math.IsNaN(x[i]) || math.IsInf(x[i], 0) || math.Abs(x[i]) > 1e100 {
				return
			}
		}
		v := Settled(x, Settle{HigherIsBetter: higher})
		if v.Why == "" {
			t.Errorf("Settled(%v): no evidence", x)
		}
		if v.Steady && math.IsInf(v.DriftBound, 0) {
			t.Errorf("Settled(%v): steady on an infinite drift bound", x)
		}
	})
}
