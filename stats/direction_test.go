package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestOutcome maps threshold status and direction onto the reader's
// outcome, one reason per row.
func TestOutcome(t *testing.T) {
	beats := Check{Metric: "wall_ms", Compare: []string{"platform", "virtual"}, AtLeast: F(1.2)}
	below := Check{Metric: "p99_ms", Compare: []string{"a", "b"}, AtMost: F(0.5)}
	noninf := Check{Metric: "rps", Compare: []string{"a", "b"}, AtLeast: F(0.8)}
	band := Check{Metric: "rps", Compare: []string{"a", "b"}, AtLeast: F(0.9), AtMost: F(1.1)}
	absLeast := Check{Metric: "error_pct", Variant: "tomcat", AtLeast: F(50)}
	absMost := Check{Metric: "error_pct", Variant: "netty", AtMost: F(0)}
	trend := Check{Metric: "rps", Variant: "v", IncreasesOver: map[string][]string{"pool": {"5", "40"}}}
	nan := math.NaN()
	for _, c := range []struct {
		why    string
		check  Check
		status string
		dir    int
		lo, hi float64
		want   string
	}{
		{"supported stays supported", beats, Supported, 1, 1.3, 1.5, OutcomeSupported},
		{"not applicable stays so", beats, NotApplicable, 0, nan, nan, OutcomeNotApplicable},
		{"reactor: 1.40 against ≥ 2, direction holds", beats, Contradicted, 1, 1.17, 1.54, OutcomeSmaller},
		{"io-bound: 1.08 (0.998–1.147) against ≥ 1.2, no direction, outside ±10%", beats, Contradicted, 0, 0.998, 1.147, OutcomeSmaller},
		{"no direction and the interval inside ±10% is a tie", beats, Contradicted, 0, 0.95, 1.05, OutcomeEquivalent},
		{"the opposite direction is a reversal", beats, Contradicted, -1, 0.7, 0.9, OutcomeReversed},
		{"an inconclusive threshold whose direction holds is not shown smaller: the size is open", beats, Inconclusive, 1, 1.05, 1.4, OutcomeInconclusive},
		{"an inconclusive threshold with no direction stays inconclusive", beats, Inconclusive, 0, 0.9, 1.4, OutcomeInconclusive},
		{"at_most 0.5 claims A below B: A above is reversed", below, Contradicted, 1, 1.1, 1.3, OutcomeReversed},
		{"at_most 0.5 with A below B but not by half is smaller", below, Contradicted, -1, 0.6, 0.8, OutcomeSmaller},
		{"non-inferiority contradicted: A worse than the margin allows", noninf, Contradicted, -1, 0.6, 0.75, OutcomeReversed},
		{"band contradicted: not a tie", band, Contradicted, 1, 1.2, 1.4, OutcomeReversed},
		{"band inconclusive but inside ±10%", band, Inconclusive, 0, 0.92, 1.08, OutcomeEquivalent},
		{"tomcat refuses ≥ 50% but refused 0%: a smaller effect, not the opposite", absLeast, Contradicted, 0, 0, 0, OutcomeSmaller},
		{"netty serves every burst but refused some: the opposite", absMost, Contradicted, 0, 1, 3, OutcomeReversed},
		{"a significant opposite trend is reversed", trend, Contradicted, 0, nan, nan, OutcomeReversed},
		{"absolute inconclusive stays inconclusive", absLeast, Inconclusive, 0, 10, 60, OutcomeInconclusive},
	} {
		if got := Outcome(c.check, c.status, c.dir, c.lo, c.hi); got != c.want {
			t.Errorf("%s: Outcome = %s, want %s", c.why, got, c.want)
		}
	}
}

// TestClaimDirection checks the direction against hand-computed
// Mann-Whitney p-values.
func TestClaimDirection(t *testing.T) {
	// a = {4,5,6} above b = {1,2,3}: U = 9 of 9 pairs, the one arrangement
	// of C(6,3) = 20, so p(up) = 1/20 = 0.05 and p(down) = 1.
	up := unit{lo: 1.5, hi: 3, dir: direction{pUp: mwGreater([]float64{4, 5, 6}, []float64{1, 2, 3}),
		pDown: mwGreater([]float64{1, 2, 3}, []float64{4, 5, 6})}}
	if math.Abs(up.dir.pUp-0.05) > 1e-12 || up.dir.pDown != 1 {
		t.Fatalf("p = %g / %g, want 0.05 / 1", up.dir.pUp, up.dir.pDown)
	}
	if d, p := claimDirection([]unit{up}, 0.05, 1); d != 1 || math.Abs(p-0.05) > 1e-12 {
		t.Errorf("one unit above: direction %d p %g, want 1 at 0.05", d, p)
	}
	// The same test at 0.04 is not significant: no direction.
	if d, _ := claimDirection([]unit{up}, 0.04, 1); d != 0 {
		t.Errorf("p 0.05 at level 0.04: direction %d, want 0", d)
	}
	// A significant test whose interval still reaches 1 calls nothing.
	wide := up
	wide.lo = 0.98
	if d, _ := claimDirection([]unit{wide}, 0.05, 1); d != 0 {
		t.Errorf("interval across 1: direction %d, want 0", d)
	}
	// Reversal at one of two units: its p 0.01 is Holm-adjusted with the
	// other's 1 to min(2×0.01, 1) = 0.02 ≤ 0.05, so the claim is reversed.
	down := unit{lo: 0.5, hi: 0.8, dir: direction{pUp: 0.99, pDown: 0.01}}
	if d, p := claimDirection([]unit{up, down}, 0.05, 1); d != -1 || math.Abs(p-0.02) > 1e-12 {
		t.Errorf("one unit reversed: direction %d p %g, want -1 at 0.02", d, p)
	}
	// At 0.03 beside the other unit's 1, Holm gives min(2×0.03, 1) = 0.06
	// > 0.05: no reversal, and the units disagree, so no direction.
	weak := unit{lo: 0.5, hi: 0.8, dir: direction{pUp: 0.99, pDown: 0.03}}
	if d, _ := claimDirection([]unit{up, weak}, 0.05, 1); d != 0 {
		t.Errorf("Holm-adjusted 0.06: direction %d, want 0", d)
	}
	// Both units below at 0.03: every unit agrees, an intersection-union
	// test of "reversed everywhere" at the level without correction.
	if d, p := claimDirection([]unit{weak, weak}, 0.05, 1); d != -1 || math.Abs(p-0.03) > 1e-12 {
		t.Errorf("both units below: direction %d p %g, want -1 at 0.03", d, p)
	}
	// Every unit in the claimed direction: the direction, at the largest p.
	up2 := up
	up2.dir.pUp = 0.01
	if d, p := claimDirection([]unit{up, up2}, 0.05, 1); d != 1 || math.Abs(p-0.05) > 1e-12 {
		t.Errorf("both units above: direction %d p %g, want 1 at 0.05", d, p)
	}
}

// TestEvaluateDirection runs the direction through EvaluateWith on the
// reactor case the review named: A ahead of B by 1.4 against a claim of
// 2×. The threshold is contradicted, the direction holds, the reader is
// told "smaller".
func TestEvaluateDirection(t *testing.T) {
	c := Check{Metric: "rps", Compare: []string{"a", "b"}, AtLeast: F(2)}
	a := []float64{139, 140, 141, 142, 138, 140.5}
	b := []float64{99, 100, 101, 100.5, 99.5, 100.2}
	v := EvaluateWith("x", "", c, twoCells(a, b), Options{Seed: 1})
	if v.Status != Contradicted || v.Direction != 1 || v.Outcome != OutcomeSmaller {
		t.Fatalf("status %s direction %d outcome %s, want contradicted, 1, smaller (%s)", v.Status, v.Direction, v.Outcome, v.Reason)
	}
	// 6 against 6 all above: p = 1/C(12,6) = 1/924.
	if math.Abs(v.DirectionP-1.0/924) > 1e-9 {
		t.Errorf("direction p %g, want 1/924", v.DirectionP)
	}
}

// TestDirectionCalibration measures the direction test like the claim
// tests (calibration_test.go's harness and options): with no difference,
// each direction is called at most α of the time; with A 10% ahead (a
// claim of 1.5× that is far too large), the wrong direction at most α;
// with A 30% ahead at n = 10 and CV 10%, the right direction at least 80%.
func TestDirectionCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("calibration takes seconds; run without -short")
	}
	t.Parallel() // CPU only, no timing: beside the other Monte Carlo tests
	const reps = 200
	c := Check{Metric: "rps", Compare: []string{"a", "b"}, AtLeast: F(1.5)}
	rates := func(ratio, cv float64, n int, seed uint64) (up, down float64) {
		rng := rand.New(rand.NewPCG(seed, uint64(n)*1000+uint64(cv*1000)))
		u, d := 0, 0
		for range reps {
			v := EvaluateWith("cal", "", c, twoCells(lognormal(rng, 100*ratio, cv, n), lognormal(rng, 100, cv, n)), calOptions)
			switch v.Direction {
			case 1:
				u++
			case -1:
				d++
			}
		}
		return float64(u) / reps, float64(d) / reps
	}
	bound := 0.05 + 3*mcSE(0.05, reps)
	for _, cv := range []float64{0.02, 0.10, 0.20} {
		for _, n := range []int{3, 5, 10} {
			up, down := rates(1, cv, n, 11)
			if up > bound || down > bound {
				t.Errorf("CV %.0f%% n=%d, no difference: direction called up %.3f, down %.3f; want each ≤ 0.05", 100*cv, n, up, down)
			}
			if _, down := rates(1.1, cv, n, 12); down > bound {
				t.Errorf("CV %.0f%% n=%d, A 10%% ahead: wrong direction %.3f, want ≤ 0.05", 100*cv, n, down)
			}
		}
	}
	if up, _ := rates(1.3, 0.10, 10, 13); up < 0.80 {
		t.Errorf("A 30%% ahead at n=10, CV 10%%: direction found %.3f, want ≥ 0.80", up)
	}
}

// TestRatioInterval: the interval of new/old over forks covers the ratio
// of the medians of fork medians, and degenerates to it when every fork
// holds one constant value.
func TestRatioInterval(t *testing.T) {
	// Every fork of a is 100, of b 150: every resample gives 1.5.
	a := [][]float64{{100, 100}, {100, 100}, {100, 100}}
	b := [][]float64{{150, 150}, {150, 150}, {150, 150}}
	if lo, hi := RatioInterval(a, b, 0.05, 200, 1, "x"); lo != 1.5 || hi != 1.5 {
		t.Errorf("constant forks: %g–%g, want 1.5–1.5", lo, hi)
	}
	// Fork medians of a: 99, 100, 101; of b: 198, 200, 202: every
	// resampled ratio lies in [198/101, 202/99] = [1.96, 2.04].
	a = [][]float64{{99}, {100}, {101}}
	b = [][]float64{{198}, {200}, {202}}
	lo, hi := RatioInterval(a, b, 0.05, 500, 1, "x")
	if !(lo >= 198.0/101-1e-12 && hi <= 202.0/99+1e-12 && lo <= 2 && hi >= 2) {
		t.Errorf("interval %g–%g, want inside [1.96, 2.04] around 2", lo, hi)
	}
	if lo, _ := RatioInterval(nil, b, 0.05, 10, 1, "x"); !math.IsNaN(lo) {
		t.Errorf("empty side: %g, want NaN", lo)
	}
}
