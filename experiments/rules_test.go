package experiments

import (
	"strings"
	"testing"

	"github.com/threadlab/threadlab/stats"
)

// TestRuleProblem is each threshold rule's table: a threshold the rule
// gives and one it does not, with the arithmetic in the reason.
func TestRuleProblem(t *testing.T) {
	f := stats.F
	cmp := func(lo, hi *float64) stats.Check {
		return stats.Check{Metric: "rps", Compare: []string{"a", "b"}, AtLeast: lo, AtMost: hi}
	}
	abs := func(lo, hi *float64) stats.Check {
		return stats.Check{Metric: "error_pct", Variant: "a", AtLeast: lo, AtMost: hi}
	}
	seed := func(v float64) *SeedFigure { return &SeedFigure{Value: f(v), From: "000: x"} }
	scaled := func(v, s float64) *SeedFigure { return &SeedFigure{Value: f(v), Scaled: f(s), From: "000: x"} }
	tests := []struct {
		name, why string
		c         Claim
		want      string // fragment of the problem; "" when the rule holds
	}{
		{"direction", "A beats B at the minimum meaningful effect", Claim{Rule: "direction", Check: cmp(f(1.1), nil)}, ""},
		{"direction above", "webflux-beats-virtual's old 1.2 breaks the rule", Claim{Rule: "direction", Check: cmp(f(1.2), nil)}, "the rule gives [at_least 1.1]"},
		{"direction on an absolute", "a direction compares two variants", Claim{Rule: "direction", Check: abs(f(1.1), nil)}, "a compare check"},
		{"below-mme", "offloaded beats naive by 2-10%: at least 1", Claim{Rule: "below-mme", Check: cmp(f(1), nil)}, ""},
		{"below-mme at 1.07", "offloading-helps' old 1.07 is neither rule", Claim{Rule: "below-mme", Check: cmp(f(1.07), nil)}, "the rule gives [at_least 1]"},
		{"tie band", "0.9 to 1.1", Claim{Rule: "tie", Check: cmp(f(0.9), f(1.1))}, ""},
		{"tie flat default", "flat_over without tolerance is 10%", Claim{Rule: "tie", Check: stats.Check{Metric: "rps", Variant: "a", FlatOver: map[string][]string{"k": {"1", "2"}}}}, ""},
		{"tie flat wide", "a 15% tolerance is a stated band, not the rule's", Claim{Rule: "tie", Check: stats.Check{Metric: "rps", Variant: "a", FlatOver: map[string][]string{"k": {"1", "2"}}, Tolerance: 0.15}}, "tolerance 0.15"},
		{"stated band", "the seed's 'fraction of a percent'", Claim{Rule: "stated-band", Check: cmp(f(0.99), f(1.01))}, ""},
		{"stated band that is the default", "0.9-1.1 is rule tie", Claim{Rule: "stated-band", Check: cmp(f(0.9), f(1.1))}, "use rule tie"},
		// seed 2.33: effect 1.33, 80% of it 1.064, so at_least up to 2.064: 1.5 passes, 2.1 does not.
		{"magnitude", "1.5 of 2.33", Claim{Rule: "magnitude", Check: cmp(f(1.5), nil), Seed: seed(2.33)}, ""},
		{"magnitude too close", "2.1 is past 80% of the seed's effect (2.064)", Claim{Rule: "magnitude", Check: cmp(f(2.1), nil), Seed: seed(2.33)}, "the rule allows 1.1 to 2.06"},
		// seed 4.06 unscaled but the profile's figure 2: 80% of 1 is 0.8, so 1.5 passes and 2 does not.
		{"magnitude scaled", "virtual-rides-the-pool at twice the threads: 1.5 of a scaled 2", Claim{Rule: "magnitude", Check: cmp(f(1.5), nil), Seed: scaled(3.99, 2)}, ""},
		{"magnitude scaled too close", "2 would need the seed's own figure", Claim{Rule: "magnitude", Check: cmp(f(2), nil), Seed: scaled(3.99, 2)}, "the rule allows 1.1 to 1.8"},
		// seed 0.69: effect 0.31, 80% of it 0.248, so at_most from 0.752 to 1/1.1 = 0.909.
		{"magnitude at most", "webflux-serves-fewer: at most 0.8 of a seed 0.69", Claim{Rule: "magnitude", Check: cmp(nil, f(0.8)), Seed: seed(0.69)}, ""},
		{"magnitude at most too close", "0.7 is nearly the seed's 0.69", Claim{Rule: "magnitude", Check: cmp(nil, f(0.7)), Seed: seed(0.69)}, "the rule allows 0.752 to 0.909"},
		{"magnitude without a figure", "a magnitude needs the seed's size", Claim{Rule: "magnitude", Check: cmp(f(1.5), nil)}, "with seed.value"},
		// 80% of a scaled 500 rps is 400.
		{"share", "users / 0.1 s at 50 users", Claim{Rule: "share", Check: stats.Check{Metric: "rps", Variant: "a", AtLeast: f(400)}, Seed: scaled(5000, 500)}, ""},
		{"share of the unscaled figure", "4000 is 80% of the seed's 5000, not of this profile's 500", Claim{Rule: "share", Check: stats.Check{Metric: "rps", Variant: "a", AtLeast: f(4000)}, Seed: scaled(5000, 500)}, "the rule gives [at_least 400]"},
		{"no failure mode", "at most 1.2 of the reference", Claim{Rule: "no-failure-mode", Check: cmp(nil, f(1.2))}, ""},
		{"wait", "1.2 x a 100 ms wait", Claim{Rule: "wait", Check: stats.Check{Metric: "p50_ms", Variant: "a", AtMost: f(120)}, Seed: seed(100)}, ""},
		{"wait too loose", "150 ms is 1.5 x the wait", Claim{Rule: "wait", Check: stats.Check{Metric: "p50_ms", Variant: "a", AtMost: f(150)}, Seed: seed(100)}, "the rule gives [at_most 120]"},
		{"zero", "zero errors", Claim{Rule: "zero", Check: abs(nil, f(0))}, ""},
		{"zero with slack", "at most 1% is not zero", Claim{Rule: "zero", Check: abs(nil, f(1))}, "the rule gives [at_most 0]"},
		{"stated bound", ">99% refused", Claim{Rule: "stated-bound", Check: abs(f(99), nil), Seed: seed(99.3)}, ""},
		{"stated bound stricter than the seed", "at least 99.5 rejects the seed's own 99.3", Claim{Rule: "stated-bound", Check: abs(f(99.5), nil), Seed: seed(99.3)}, "at or below seed.value"},
		{"trend", "increases_over", Claim{Rule: "trend", Check: stats.Check{Metric: "rps", Variant: "a", IncreasesOver: map[string][]string{"k": {"1", "2", "3"}}}}, ""},
		{"design", "a design fact says why", Claim{Rule: "design", DesignFact: "200 threads", Check: abs(nil, f(200))}, ""},
		{"design without why", "the reason is the point", Claim{Rule: "design", Check: abs(nil, f(200))}, "design_fact"},
		{"design fact under another rule", "a claim that cannot fail is no evidence, whatever its threshold", Claim{Rule: "zero", DesignFact: "x", Check: abs(nil, f(0))}, "the rule is design"},
		{"no rule", "every catalog claim names one", Claim{Check: cmp(f(1.1), nil)}, `rule "" is not one of`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RuleProblem(tt.c)
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("%s:\n got: %q\nwant: %q", tt.why, got, tt.want)
			}
		})
	}
}
