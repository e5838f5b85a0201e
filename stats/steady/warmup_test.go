package steady

import (
	"math"
	"testing"
)

// TestSettled runs the warm-up stopping rule over synthetic round
// sequences, one round at a time, as trials.go does, and checks after how
// many rounds it stops (or that it never does).
func TestSettled(t *testing.T) {
	r := seeded(7)
	tests := []struct {
		why    string
		x      []float64
		higher bool
		lo, hi int // the round (1-based) at which it stops; 0, 0: never
	}{
		{"flat: steady once the rule has 2 windows and the trend test enough rounds to bound the drift (8-16)",
			gauss(r, 30, 100, 3), false, 8, 16},
		{"slow warm-up over 12 rounds: not before it is over, and the tail of the curve is a drift the trend test waits out",
			concat(warmupCurve(r, 12, 300, 100, 2), gauss(r, 30, 100, 2)), false, 14, 26},
		{"a rate that warms up (higher is better): not before it is over",
			concat([]float64{500, 600, 700, 800, 900, 950}, gauss(r, 30, 1000, 10)), true, 10, 22},
		{"slowdown: a worse level is not an improvement, so the warm-up stops once the new level has 2 windows (the measured classification names it)",
			concat(gauss(r, 6, 100, 2), gauss(r, 30, 130, 2)), false, 14, 18},
		{"noisy (CV 15%): noise does not look like improvement for long",
			gauss(r, 40, 100, 15), false, 8, 16},
		{"bimodal rounds (two modes 30% apart at random): one noisy level",
			bimodal(r, 40, 100, 130, 2), false, 8, 16},
		{"a steady decrease never stops: still improving",
			descending(40, 1000, 0.97), false, 0, 0},
	}
	for _, tt := range tests {
		stop := 0
		var v Verdict
		for i := 1; i <= len(tt.x); i++ {
			v = Settled(tt.x[:i], Settle{HigherIsBetter: tt.higher})
			if v.Steady {
				stop = i
				break
			}
		}
		if tt.lo == 0 {
			if stop != 0 {
				t.Errorf("%s: stopped at round %d (%s), want never", tt.why, stop, v.Why)
			}
			continue
		}
		if stop < tt.lo || stop > tt.hi {
			t.Errorf("%s: stopped at round %d, want in [%d, %d] (%s)", tt.why, stop, tt.lo, tt.hi, v.Why)
		}
		if v.Why == "" {
			t.Errorf("%s: no evidence", tt.why)
		}
	}
}

// descending is start·f^i: every round better than the last.
func descending(n int, start, f float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = start * math.Pow(f, float64(i))
	}
	return x
}

// TestSettledByHand: rounds {130, 120, 110, 100, 101, 99, 100, 98}: the
// latest window {101, 99, 100, 98} has median 99.5 and 2 direction
// changes (101>99<100>98); the window before {130, 120, 110, 100} has
// median 115: an improvement of 15.5, more than max(5% of 115 = 5.75,
// 2·Scale). Scale of the 8: differences {10,10,10,1,2,1,2}, median 2,
// 2/(0.6745·√2) = 2.097, so 2·Scale = 4.19; allowed 5.75: still improving.
// Add {100, 99, 101, 100}: latest {100, 99, 101, 100} median 100, before
// {101, 99, 100, 98} median 99.5: a gain of -0.5: steady.
func TestSettledByHand(t *testing.T) {
	x := []float64{130, 120, 110, 100, 101, 99, 100, 98}
	v := Settled(x, Settle{})
	if v.Steady || v.Latest != 99.5 || v.Before != 115 || v.Fluctuations != 2 {
		t.Fatalf("Settled(%v) = %+v, want not steady, latest 99.5, before 115, 2 fluctuations", x, v)
	}
	x = append(x, 100, 99, 101, 100)
	v = Settled(x, Settle{})
	if !v.Steady || v.Latest != 100 || v.Before != 99.5 {
		t.Fatalf("Settled(%v) = %+v, want steady, latest 100, before 99.5", x, v)
	}
	if v := Settled(x[:5], Settle{}); v.Steady || v.Why != "5 of the 8 rounds the rule reads" {
		t.Errorf("5 rounds: %+v, want not steady: too few", v)
	}
}

func TestParseRound(t *testing.T) {
	tests := []struct {
		in  string
		n   int
		ok  bool
		why string
	}{
		{"warm-up round 3", 3, true, "the reason trials.go writes"},
		{RoundReason(7) + "; stop: steady", 7, true, "the last round of an until-steady warm-up"},
		{"warm-up round 12; generator saturated", 12, true, "a warning appended after it"},
		{"busy host; warm-up round 2", 2, true, "a warning before it"},
		{"warm-up round 0", 0, false, "rounds are 1-based"},
		{"warm-up round x", 0, false, "not a number"},
		{"", 0, false, "empty reason"},
	}
	for _, tt := range tests {
		n, ok := ParseRound(tt.in)
		if n != tt.n || ok != tt.ok {
			t.Errorf("%s: ParseRound(%q) = %d, %v; want %d, %v", tt.why, tt.in, n, ok, tt.n, tt.ok)
		}
	}
}

func FuzzParseRound(f *testing.F) {
	f.Add("warm-up round 3")
	f.Add("warm-up round ")
	f.Fuzz(func(t *testing.T, s string) {
		if n, ok := ParseRound(s); ok && n <= 0 {
			t.Errorf("ParseRound(%q) = %d, ok", s, n)
		}
	})
}

func FuzzClassify(f *testing.F) {
	f.Add(1.0, 2.0, 3.0, 100.0, 7)
	f.Fuzz(func(t *testing.T, a, b, c, d float64, n int) {
		n = n%64 + 64
		if n < 0 {
			n = -n
		}
		x := make([]float64, n)
		for i := range x {
			x[i] = []float64{a, b, c, d}[i%4]
			if math.IsNaN(x[i]) || math.IsInf(x[i], 0) || math.Abs(x[i]) > 1e100 {
				return
			}
		}
		res := Classify(x, Options{})
		if res.SteadyFrom >= n || res.SteadyFrom < -1 {
			t.Errorf("steady from %d of %d", res.SteadyFrom, n)
		}
	})
}
