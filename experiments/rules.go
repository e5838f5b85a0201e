package experiments

import (
	"fmt"
	"math"
	"sort"

	"github.com/threadlab/threadlab/stats"
)

// This file holds the threshold rules: one per kind of seed statement
// (METHODOLOGY.md "From a seed's sentence to a claim's threshold"). A
// claim names its rule (`rule:`), and RuleThreshold recomputes what the
// rule allows from the claim's check and seed figure, so a threshold set
// by taste fails the catalog test.

// MinEffect is the minimum meaningful effect: "A beats B" is at least 1.1.
const MinEffect = 1.1

// FailureMode is the smallest degradation that counts as a failure mode:
// "A has no failure mode" is A at most 1.2 times its own baseline, and a
// wait held is at most 1.2 times the wait.
const FailureMode = 1.2

// MagnitudeShare is the largest share of the seed's effect a magnitude
// threshold may ask for: a seed's "N times" is one run on another host,
// so the threshold keeps a fifth of the effect (N-1) in hand, never the
// seed's figure itself.
const MagnitudeShare = 0.8

// Rule is one kind of seed statement and how its threshold follows.
type Rule struct {
	Says  string                // the kind of statement, and its threshold, in words
	Check func(c Claim) *string // nil when c's check follows the rule; else what does not
}

// Rules are the threshold rules by name.
var Rules = map[string]Rule{
	"direction": {"a direction (\"A beats B\", with or without the seed's size): compare at_least 1.1, the minimum meaningful effect", func(c Claim) *string {
		return compareBounds(c.Check, MinEffect, 0)
	}},
	"below-mme": {"a direction the seed itself measured below the minimum meaningful effect (seed 000's 2-10%): compare at_least 1, never stricter than the seed's own evidence", func(c Claim) *string {
		return compareBounds(c.Check, 1, 0)
	}},
	"tie": {"\"A ties B\": the band 0.9-1.1 (compare), or flat_over within 10%", func(c Claim) *string {
		if over(c.Check) == "flat_over" {
			if c.Check.Tolerance != 0 && c.Check.Tolerance != 0.1 {
				return msg("flat_over tolerance %g, the rule is 0.1 (or leave it out)", c.Check.Tolerance)
			}
			return nil
		}
		return compareBounds(c.Check, 0.9, 1.1)
	}},
	"stated-band": {"a tie whose width the write-up or the design states (\"a fraction of a percent\", \"2,000 to 2,600 rps\"): a band or flat_over tolerance of that width, said in says", func(c Claim) *string {
		if over(c.Check) == "flat_over" && c.Check.Tolerance > 0 {
			return nil
		}
		lo, hasLo := stats.Bound(c.Check.AtLeast)
		hi, hasHi := stats.Bound(c.Check.AtMost)
		if len(c.Check.Compare) == 2 && hasLo && hasHi && !(lo == 0.9 && hi == 1.1) {
			return nil
		}
		return msg("a stated band is a compare band other than 0.9-1.1 or a flat_over tolerance (use rule tie for the default band)")
	}},
	"magnitude": {"\"A is N times B\", a size the write-up leans on: at least the minimum meaningful effect and at most 80% of the seed's effect (N-1; for at_most, 1-N), N scaled where the profile divides the load", magnitude},
	"share": {"\"A reaches B\" or \"users / 0.1 s\": at least 80% of the seed's figure (scaled where the profile divides the load)", func(c Claim) *string {
		fig, ok := figure(c)
		if !ok {
			return msg("needs seed.value (and scaled, where the profile divides the load)")
		}
		return wantBounds(c.Check, 0.8*fig, 0)
	}},
	"no-failure-mode": {"\"A has no failure mode\": A at most 1.2 times a reference that has the same stress without the failure", func(c Claim) *string {
		return compareBounds(c.Check, 0, FailureMode)
	}},
	"wait": {"a wait held (\"a 100 ms median\"): absolute at_most 1.2 times the wait", func(c Claim) *string {
		fig, ok := figure(c)
		if !ok || len(c.Check.Compare) > 0 {
			return msg("an absolute check with seed.value, the wait")
		}
		return wantBounds(c.Check, 0, FailureMode*fig)
	}},
	"zero": {"\"zero errors\": absolute at_most 0", func(c Claim) *string {
		if len(c.Check.Compare) > 0 || over(c.Check) != "" {
			return msg("an absolute check")
		}
		return wantBounds(c.Check, 0, 0)
	}},
	"stated-bound": {"a bound the write-up states in words (\">99% refused\", \"under a second\"): absolute at that bound, never stricter than the seed's figure", func(c Claim) *string {
		fig, ok := figure(c)
		lo, hasLo := stats.Bound(c.Check.AtLeast)
		hi, hasHi := stats.Bound(c.Check.AtMost)
		if !ok || hasLo == hasHi || len(c.Check.Compare) > 0 || (hasLo && lo > fig) || (hasHi && hi < fig) {
			return msg("an absolute at_least at or below seed.value, or at_most at or above it")
		}
		return nil
	}},
	"words": {"a count stated in words (\"hundreds\" of 2,000): the smallest number the words allow, as a share of the load, never above the seed's figure", func(c Claim) *string {
		fig, ok := figure(c)
		lo, hasLo := stats.Bound(c.Check.AtLeast)
		if !ok || !hasLo || lo > fig {
			return msg("an at_least at or below seed.value")
		}
		return nil
	}},
	"trend": {"a trend over sweep points (increases_over, decreases_over): the direction, last/first moving by at least the tolerance (10% by default), the seed's step beside it", func(c Claim) *string {
		if k := over(c.Check); k != "increases_over" && k != "decreases_over" {
			return msg("an increases_over or decreases_over check")
		}
		return nil
	}},
	"design": {"a design fact (a pool size, an event-loop count, an arithmetic floor): the check cannot fail by construction, so it is shown but not counted as evidence; design_fact says why", func(c Claim) *string {
		if c.DesignFact == "" {
			return msg("a design-rule claim says why it cannot fail in design_fact")
		}
		return nil
	}},
}

// RuleNames lists the rules, sorted.
func RuleNames() []string {
	var out []string
	for k := range Rules {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// RuleProblem is what is wrong with c's threshold under its rule, or ""
// when it follows it. A claim without a rule, or with design_fact under
// another rule, is a problem too.
func RuleProblem(c Claim) string {
	r, ok := Rules[c.Rule]
	if !ok {
		return fmt.Sprintf("rule %q is not one of %v", c.Rule, RuleNames())
	}
	if c.DesignFact != "" && c.Rule != "design" {
		return "design_fact is set, so the rule is design"
	}
	if p := r.Check(c); p != nil {
		return *p
	}
	return ""
}

// Threshold is a claim's check bounds in words, for listings.
func Threshold(c stats.Check) string {
	lo, hasLo := stats.Bound(c.AtLeast)
	hi, hasHi := stats.Bound(c.AtMost)
	s := ""
	switch k := over(c); {
	case k == "flat_over":
		s = fmt.Sprintf("flat_over tolerance %g", c.Tolerance)
	case k != "":
		s = k
	}
	if hasLo {
		s += fmt.Sprintf(" at_least %g", lo)
	}
	if hasHi {
		s += fmt.Sprintf(" at_most %g", hi)
	}
	return s
}

func magnitude(c Claim) *string {
	fig, ok := figure(c)
	if !ok || len(c.Check.Compare) != 2 {
		return msg("a compare check with seed.value (and scaled, where the profile divides the load)")
	}
	lo, hasLo := stats.Bound(c.Check.AtLeast)
	hi, hasHi := stats.Bound(c.Check.AtMost)
	switch {
	case hasLo && !hasHi:
		if lo < MinEffect || lo-1 > MagnitudeShare*(fig-1)+1e-9 {
			return msg("at_least %g: the rule allows %g to %.3g (80%% of the seed's effect %g)", lo, MinEffect, 1+MagnitudeShare*(fig-1), fig)
		}
	case hasHi && !hasLo:
		if hi > 1/MinEffect || 1-hi > MagnitudeShare*(1-fig)+1e-9 {
			return msg("at_most %g: the rule allows %.3g to %.3g (80%% of the seed's effect %g)", hi, 1-MagnitudeShare*(1-fig), 1/MinEffect, fig)
		}
	default:
		return msg("a magnitude is one-sided (at_least or at_most)")
	}
	return nil
}

// figure is the seed's figure at this profile's scale.
func figure(c Claim) (float64, bool) {
	if c.Seed == nil || c.Seed.Value == nil {
		return 0, false
	}
	if c.Seed.Scaled != nil {
		return *c.Seed.Scaled, true
	}
	return *c.Seed.Value, true
}

func over(c stats.Check) string {
	if k := claimKind(c); len(k) == 1 && k[0] != "compare" {
		return k[0]
	}
	return ""
}

// compareBounds wants a compare check with exactly these bounds (0: none).
func compareBounds(c stats.Check, lo, hi float64) *string {
	if len(c.Compare) != 2 {
		return msg("a compare check")
	}
	return wantBounds(c, lo, hi)
}

// wantBounds wants exactly at_least lo and at_most hi, 0 meaning absent
// (except that zero's at_most is 0: hi < 0 is never asked for).
func wantBounds(c stats.Check, lo, hi float64) *string {
	gotLo, hasLo := stats.Bound(c.AtLeast)
	gotHi, hasHi := stats.Bound(c.AtMost)
	wantLo, wantHi := lo != 0, hi != 0 || (lo == 0 && hi == 0)
	if hasLo != wantLo || hasHi != wantHi || (wantLo && !near(gotLo, lo)) || (wantHi && !near(gotHi, hi)) {
		var want []string
		if wantLo {
			want = append(want, fmt.Sprintf("at_least %g", lo))
		}
		if wantHi {
			want = append(want, fmt.Sprintf("at_most %g", hi))
		}
		return msg("the rule gives %v, the check has %s", want, Threshold(c))
	}
	return nil
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func msg(format string, a ...any) *string {
	s := fmt.Sprintf(format, a...)
	return &s
}
