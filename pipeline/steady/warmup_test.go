package steady

import (
	"math"
	"testing"
)

func rounds(wallMs float64, values []float64) []Round {
	out := make([]Round, len(values))
	for i, v := range values {
		out[i] = Round{WallMs: wallMs, Value: v}
	}
	return out
}

func TestRecommend(t *testing.T) {
	r := seeded(7)
	tests := []struct {
		why    string
		rounds []Round
		class  Class
		// steady after: rounds before SteadyFrom times 500 ms each
		afterLo, afterHi float64
	}{
		{"flat warm-up: the first round was already steady",
			rounds(500, gauss(r, 20, 100, 3)), Flat, 0, 0},
		{"8 slow rounds of 500 ms: steady after about 4 s",
			rounds(500, concat(warmupCurve(r, 8, 400, 110, 3), gauss(r, 24, 100, 3))), Warmup, 2500, 4500},
		{"still changing at the end: no recommendation",
			rounds(500, concat(gauss(r, 30, 100, 3), gauss(r, 4, 200, 3))), NoSteadyState, -1, -1},
	}
	for _, tt := range tests {
		rec := Recommend(tt.rounds, Options{})
		if rec.Result.Class != tt.class {
			t.Errorf("%s: class %q, want %q", tt.why, rec.Result.Class, tt.class)
		}
		if rec.SteadyAfterMs < tt.afterLo || rec.SteadyAfterMs > tt.afterHi {
			t.Errorf("%s: steady after %v ms, want in [%v, %v] (%s)", tt.why, rec.SteadyAfterMs, tt.afterLo, tt.afterHi, rec.Note)
		}
		if rec.Note == "" {
			t.Errorf("%s: no note", tt.why)
		}
	}
}

func TestRecommendCell(t *testing.T) {
	// Fork 1 steady from round 4 (3 rounds of 100 ms before it), fork 2 from
	// round 7 (6 × 100 ms = 600 ms): the cell needs 600 ms.
	f1 := rounds(100, []float64{900, 850, 800, 100, 101, 99, 100, 102, 98, 100, 101, 99, 100, 100, 101, 99})
	f2 := rounds(100, []float64{900, 880, 860, 840, 820, 800, 100, 101, 99, 100, 102, 98, 100, 101, 99, 100})
	after, ok, per := RecommendCell([][]Round{f1, f2}, Options{})
	if !ok || after != 600 {
		t.Fatalf("RecommendCell = %v ms ok=%v, want 600 ms ok (per fork: %+v)", after, ok, per)
	}
	// A third fork that never settles makes the cell not ok.
	f3 := rounds(100, []float64{100, 101, 99, 100, 102, 98, 100, 101, 99, 100, 101, 99, 100, 400, 420, 410})
	if _, ok, _ := RecommendCell([][]Round{f1, f2, f3}, Options{}); ok {
		t.Errorf("a fork with no steady state must make the cell not ok")
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
