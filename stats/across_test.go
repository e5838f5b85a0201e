package stats

import (
	"math"
	"testing"
)

// TestAcrossRuns checks the across-runs estimate against hand arithmetic.
func TestAcrossRuns(t *testing.T) {
	z := 1.6448536269514722 // the normal 95% point: a 90% interval has ends at ±z on the log scale
	tests := []struct {
		why                   string
		runs                  []RunEstimate
		est, lo, hi, tau, wsd float64
	}{
		{
			// θ = 0.5, 0.7: mean 0.6, S² = (0.1² + 0.1²)/1 = 0.02, √(S²/2) = 0.1,
			// t(1, 0.95) = 6.3138 → 0.6 ± 0.63138. Each run's interval is ±0.05·z wide on
			// the log scale, so v_r = 0.05² = 0.0025 and τ² = 0.02 − 0.0025 = 0.0175.
			"two runs that disagree beyond their own intervals",
			[]RunEstimate{{"a", math.Exp(0.5), math.Exp(0.5 - 0.05*z), math.Exp(0.5 + 0.05*z), 0.05},
				{"b", math.Exp(0.7), math.Exp(0.7 - 0.05*z), math.Exp(0.7 + 0.05*z), 0.05}},
			math.Exp(0.6), math.Exp(0.6 - 0.63138), math.Exp(0.6 + 0.63138), math.Sqrt(0.0175), 0.05,
		},
		{
			// θ = 0, 0.3, 0.6: mean 0.3, S² = (0.09 + 0 + 0.09)/2 = 0.09, √(0.09/3) = 0.17321,
			// t(2, 0.95) = 2.91999 → 0.3 ± 0.50576. v_r = 0.4² = 0.16 > S²: τ = 0 (floored).
			"three runs inside their own noise",
			[]RunEstimate{{"a", 1, math.Exp(-0.4 * z), math.Exp(0.4 * z), 0},
				{"b", math.Exp(0.3), math.Exp(0.3 - 0.4*z), math.Exp(0.3 + 0.4*z), 0},
				{"c", math.Exp(0.6), math.Exp(0.6 - 0.4*z), math.Exp(0.6 + 0.4*z), 0}},
			math.Exp(0.3), math.Exp(0.3 - 0.50576), math.Exp(0.3 + 0.50576), 0, 0.4,
		},
	}
	for _, tc := range tests {
		a, err := AcrossRuns(tc.runs, 0.05)
		if err != nil {
			t.Fatalf("%s: %v", tc.why, err)
		}
		close := func(x, y float64) bool { return math.Abs(x-y) <= 1e-4*math.Max(1, math.Abs(y)) }
		if !close(a.Estimate, tc.est) || !close(a.Low, tc.lo) || !close(a.High, tc.hi) ||
			!close(a.BetweenSD, tc.tau) || !close(a.WithinSD, tc.wsd) || a.Runs != len(tc.runs) {
			t.Errorf("%s: got %+v, want est %v interval %v-%v τ %v within %v", tc.why, a, tc.est, tc.lo, tc.hi, tc.tau, tc.wsd)
		}
	}
}

// TestAcrossRunsErrors: too few runs or a value without a log scale is an
// error naming the run; a run without an interval leaves the components NaN.
func TestAcrossRunsErrors(t *testing.T) {
	if _, err := AcrossRuns([]RunEstimate{{Run: "a", Estimate: 2}}, 0.05); err == nil {
		t.Error("one run: no error")
	}
	if _, err := AcrossRuns([]RunEstimate{{Run: "a", Estimate: 2}, {Run: "b", Estimate: 0}}, 0.05); err == nil {
		t.Error("a zero estimate: no error")
	}
	a, err := AcrossRuns([]RunEstimate{{Run: "a", Estimate: 2}, {Run: "b", Estimate: 2}}, 0.05)
	if err != nil || a.Estimate != 2 || a.Low != 2 || a.High != 2 || !math.IsNaN(a.BetweenSD) {
		t.Errorf("equal runs without intervals: %+v, %v; want 2, 2-2, τ NaN", a, err)
	}
}
