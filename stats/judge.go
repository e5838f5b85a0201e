package stats

import (
	"fmt"
	"math"
	"strings"
)

// side is one bound of a unit with the p-values of its two one-sided
// tests: pClaim for "the estimate is beyond the bound on the claimed side",
// pOpp for "it is beyond it on the other side".
type side struct {
	bound        float64
	above        bool // the claim is estimate ≥ bound; otherwise ≤ bound
	pClaim, pOpp float64
}

func (s side) String() string {
	if s.above {
		return "≥ " + fmtRatio(s.bound)
	}
	return "≤ " + fmtRatio(s.bound)
}

// unit is one thing a claim is decided at (a point, a pair of levels, a
// slice) with its estimate, interval and tests, before the verdict.
type unit struct {
	label   string
	what    string // the estimate in prose: "a/b", "the median of webflux errors"
	test    string // the test's name: "one-sided Mann-Whitney U"
	est     float64
	lo, hi  float64 // the interval at the test's level; ignored when noCI
	noCI    bool
	sides   []side
	problem string    // forces Inconclusive at this unit (too few replicates)
	closed  bool      // the problem is one more trials cannot fix
	dir     direction // A against B at ratio 1 (compare checks; direction.go)
}

// judge decides each unit at the nominal level. A unit supports when every
// bound's claimed-side p is at most level and the interval lies on the
// claimed side of every bound. No correction is applied on the claimed
// side: a claim is supported only when every unit supports it, so the claim
// is an intersection-union test (Berger 1982), whose size is at most the
// level of its largest test; this is the argument that lets TOST test two
// bounds without a correction, applied across units too. A Holm correction
// there would only cost power, and more the more points a claim names (five
// forks could never support "zero errors at both loads": the sign test's
// 1/32 doubles past 0.05). A unit contradicts when some bound's opposite
// test is significant after Holm across every opposite test of the claim
// and the interval lies beyond that bound: one contradicting unit
// contradicts the claim, a union of hypotheses, which needs the correction.
func judge(units []unit, level float64) []Estimate {
	if len(units) == 0 {
		return nil
	}
	nSides := len(units[0].sides)
	supAdj := make([][]float64, nSides)
	for j := range nSides {
		ps := make([]float64, len(units))
		for i, u := range units {
			ps[i] = pOf(u, j, true)
		}
		supAdj[j] = ps // intersection-union: no correction (see above)
	}
	var opp []float64
	for _, u := range units {
		for j := range nSides {
			opp = append(opp, pOf(u, j, false))
		}
	}
	oppAdj := Holm(opp)
	out := make([]Estimate, len(units))
	for i, u := range units {
		out[i] = judgeUnit(u, level, supAdj, oppAdj[i*nSides:(i+1)*nSides], i, len(units), len(opp))
	}
	return out
}

// pOf is a side's claim or opposite p-value, NaN (counted as 1 by Holm)
// when the unit could not be tested.
func pOf(u unit, j int, claim bool) float64 {
	if u.problem != "" || j >= len(u.sides) {
		return math.NaN()
	}
	if claim {
		return u.sides[j].pClaim
	}
	return u.sides[j].pOpp
}

// judgeUnit decides one unit given the Holm-adjusted p-values.
func judgeUnit(u unit, level float64, supAdj [][]float64, oppAdj []float64, i, nUnits, nOpp int) Estimate {
	est := Estimate{Point: u.label, Ratio: u.est, Low: u.lo, High: u.hi, margin: math.Inf(1), P: math.NaN(), PAdj: math.NaN()}
	if u.noCI {
		est.Low, est.High = math.NaN(), math.NaN()
	}
	est.leans = leaning(u)
	if u.problem != "" {
		est.Status, est.Reason = Inconclusive, u.problem
		return est
	}
	var claimWhy []string
	supported := true
	est.P, est.PAdj = 0, 0
	for j, s := range u.sides {
		est.P, est.PAdj = math.Max(est.P, s.pClaim), math.Max(est.PAdj, supAdj[j][i])
		if !(supAdj[j][i] <= level) {
			supported = false
			claimWhy = append(claimWhy, fmt.Sprintf("%s p=%s for %s is not ≤ %s",
				u.test, fmtP(s.pClaim), s, fmtP(level)))
		}
		if u.noCI {
			est.margin = math.Min(est.margin, -supAdj[j][i])
			continue
		}
		clears, m := clearance(u, s)
		est.margin = math.Min(est.margin, m)
		if !clears {
			supported = false
			claimWhy = append(claimWhy, fmt.Sprintf("the interval %s–%s does not clear %s", fmtRatio(u.lo), fmtRatio(u.hi), s))
		}
	}
	for j, s := range u.sides {
		beyond := u.noCI || (s.above && u.hi < s.bound) || (!s.above && u.lo > s.bound)
		if oppAdj[j] <= level && beyond {
			est.Status, est.leans = Contradicted, Contradicted
			est.P, est.PAdj = s.pOpp, oppAdj[j]
			est.Reason = fmt.Sprintf("%s = %s%s is outside %s: %s in the other direction p=%s%s",
				u.what, fmtRatio(u.est), u.intervalAt(level), s, u.test, fmtP(s.pOpp), fmtHolm(oppAdj[j], nOpp, "tests"))
			return est
		}
	}
	if supported {
		var claim []string
		for _, s := range u.sides {
			claim = append(claim, s.String())
		}
		est.Status, est.leans = Supported, Supported
		est.Reason = fmt.Sprintf("%s = %s%s clears %s; %s p=%s",
			u.what, fmtRatio(u.est), u.intervalAt(level), strings.Join(claim, " and "), u.test, fmtP(est.P))
		return est
	}
	est.Status = Inconclusive
	est.Reason = fmt.Sprintf("%s = %s%s: %s", u.what, fmtRatio(u.est), u.intervalAt(level), strings.Join(claimWhy, "; "))
	return est
}

// clearance reports whether the interval lies on the claimed side of s
// (the bound itself included: "at_most 0" over zeros holds), and by how
// much, relative to the bound where it is not 0.
func clearance(u unit, s side) (bool, float64) {
	gap := u.lo - s.bound
	if !s.above {
		gap = s.bound - u.hi
	}
	m := gap
	if s.bound != 0 {
		m = gap / math.Abs(s.bound)
	}
	if math.IsNaN(gap) {
		return false, math.Inf(-1)
	}
	return gap >= 0, m
}

// leaning says where the estimate alone points: Supported when it is on the
// claimed side of every bound, Contradicted when beyond some bound.
func leaning(u unit) string {
	if math.IsNaN(u.est) {
		return ""
	}
	// On a bound exactly, the estimate leans nowhere (a tie).
	all, beyond := true, false
	for _, s := range u.sides {
		if !((s.above && u.est > s.bound) || (!s.above && u.est < s.bound)) {
			all = false
		}
		if (s.above && u.est < s.bound) || (!s.above && u.est > s.bound) {
			beyond = true
		}
	}
	if u.noCI { // trends: the test's own direction
		if len(u.sides) > 0 && u.sides[0].pClaim < u.sides[0].pOpp {
			return Supported
		}
		if len(u.sides) > 0 && u.sides[0].pOpp < u.sides[0].pClaim {
			return Contradicted
		}
		return ""
	}
	switch {
	case all:
		return Supported
	case beyond:
		return Contradicted
	}
	return ""
}
