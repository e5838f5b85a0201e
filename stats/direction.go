package stats

import (
	"fmt"
	"math"
)

// This file answers the two questions a threshold verdict mixes up: which
// variant is ahead (the direction), and whether the size reaches the
// claim's bound (the verdict itself). A claim "A/B ≥ 1.2" that measures
// 1.08 with A significantly ahead is not the opposite of the claim: the
// direction holds and only the size falls short. Outcome names the six
// cases a reader acts on.

// Outcomes: what a reader is told about a claim, from its threshold
// verdict and its direction.
const (
	OutcomeSupported     = "supported"      // the threshold verdict is supported
	OutcomeSmaller       = "smaller"        // the size is significantly short of the claim (the direction holds or is not settled)
	OutcomeEquivalent    = "equivalent"     // no direction, and the interval lies inside ±EquivalenceMargin
	OutcomeReversed      = "reversed"       // the opposite of the claim holds
	OutcomeInconclusive  = "inconclusive"   // the data decide neither
	OutcomeNotApplicable = "not-applicable" // a precondition did not hold here
)

// EquivalenceMargin is the relative difference under which two variants
// count as equivalent for a reader when no direction is significant: the
// 10% minimum meaningful effect the manifests use for "beats" claims.
const EquivalenceMargin = 0.10

// OutcomeText is an outcome as a page shows it.
func OutcomeText(outcome string, dir int) string {
	switch outcome {
	case OutcomeSmaller:
		if dir != 0 {
			return "same direction, smaller than claimed"
		}
		return "smaller than claimed"
	case OutcomeNotApplicable:
		return "not applicable here"
	case "":
		return "–"
	}
	return outcome
}

// ClaimedSign is the direction a compare claim asserts of A/B: +1 for
// "at_least r" with r ≥ 1 (A ahead), -1 for "at_most r" with r ≤ 1, 0 when
// it asserts none (a band, a non-inferiority bound on the far side of 1,
// or a check that is not a compare).
func ClaimedSign(c Check) int {
	if len(c.Compare) != 2 || (c.AtLeast != nil && c.AtMost != nil) {
		return 0
	}
	if r, ok := Bound(c.AtLeast); ok && r >= 1 {
		return 1
	}
	if r, ok := Bound(c.AtMost); ok && r <= 1 {
		return -1
	}
	return 0
}

// Outcome maps a claim's threshold status, its measured direction (+1 A/B
// above 1, -1 below, 0 not significant; compare checks only) and the
// deciding unit's interval onto what the reader is told. Only a direction
// opposite to the claimed one, or a contradicted claim that asserts no
// direction of its own (a tie, a "not worse than", an upper bound on a
// single variant, a trend), is reversed; a "beats by r" claim whose
// direction holds, or is unsettled, but whose size falls short is smaller.
func Outcome(c Check, status string, dir int, lo, hi float64) string {
	switch status {
	case NotApplicable:
		return OutcomeNotApplicable
	case Supported:
		return OutcomeSupported
	}
	kind := kindOf(c)
	inside := !math.IsNaN(lo) && !math.IsNaN(hi) && lo >= 1/(1+EquivalenceMargin) && hi <= 1+EquivalenceMargin
	switch kind {
	case kindSuperiority, kindBand:
		s := ClaimedSign(c)
		switch {
		case s != 0 && dir == -s:
			return OutcomeReversed
		case dir == 0 && inside:
			return OutcomeEquivalent
		case s != 0 && status == Contradicted:
			return OutcomeSmaller // the size fell short significantly; the direction holds or is unsettled
		case status == Contradicted:
			return OutcomeReversed
		}
		return OutcomeInconclusive
	case kindAbsolute:
		// "at least" a value that falls short is a smaller effect; "at
		// most" a value that is exceeded is the opposite of the claim.
		if status == Contradicted {
			if _, ok := Bound(c.AtLeast); ok {
				return OutcomeSmaller
			}
			return OutcomeReversed
		}
	default:
		if status == Contradicted {
			return OutcomeReversed
		}
	}
	return OutcomeInconclusive
}

// direction is the two one-sided tests of A against B (ratio 1) at one
// unit: pUp for "A is stochastically greater", pDown for smaller.
type direction struct{ pUp, pDown float64 }

// call is the unit's direction at the level: +1 when A is significantly
// greater and the interval of A/B lies above 1, -1 for the mirror, 0
// otherwise. With the one-sided level α each way this is the two-sided
// test at 2α whose interval is the verdict's own (a 90% interval at
// α = 0.05), so each wrong direction is called at most α of the time.
func (d direction) call(lo, hi, level float64) int {
	switch {
	case d.pUp <= level && lo > 1:
		return 1
	case d.pDown <= level && hi < 1:
		return -1
	}
	return 0
}

// claimDirection is a compare claim's direction over its units: +1 or -1
// when every unit has that direction (an intersection-union test, no
// correction), the opposite of the claimed sign when any unit shows it
// after Holm across the units (a union, corrected), else 0. The p-value
// is the one that decided (the largest for every unit, the Holm-adjusted
// one for a reversal).
func claimDirection(units []unit, level float64, claimed int) (int, float64) {
	if len(units) == 0 {
		return 0, math.NaN()
	}
	calls := make([]int, len(units))
	opp := make([]float64, len(units))
	for i, u := range units {
		if u.problem != "" {
			calls[i], opp[i] = 0, math.NaN()
			continue
		}
		calls[i] = u.dir.call(u.lo, u.hi, level)
		opp[i] = u.dir.pDown
		if claimed < 0 {
			opp[i] = u.dir.pUp
		}
	}
	if claimed != 0 {
		adj := Holm(opp)
		best := math.Inf(1)
		for i := range units {
			if calls[i] == -claimed && adj[i] <= level {
				best = math.Min(best, adj[i])
			}
		}
		if !math.IsInf(best, 1) {
			return -claimed, best
		}
	}
	first := calls[0]
	p := 0.0
	for i, c := range calls {
		if c != first || c == 0 {
			return 0, math.NaN()
		}
		if first > 0 {
			p = math.Max(p, units[i].dir.pUp)
		} else {
			p = math.Max(p, units[i].dir.pDown)
		}
	}
	return first, p
}

// DirectionText says where a compare claim's ratio "a/b" lies against 1
// and by which test: "platform/virtual above 1: one-sided Mann-Whitney U
// p=0.004". Which side is better depends on the metric; the report says.
func DirectionText(ratio string, dir int, p float64) string {
	switch dir {
	case 1:
		return fmt.Sprintf("%s above 1: one-sided Mann-Whitney U p=%s", ratio, fmtP(p))
	case -1:
		return fmt.Sprintf("%s below 1: one-sided Mann-Whitney U p=%s", ratio, fmtP(p))
	}
	return ratio + ": no significant difference either way at the verdict's level"
}
