package stats

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// evalTrend evaluates variant: V, increases_over (or decreases_over):
// {k: [...]}: within each slice of the sweep, metric(V) tends to rise
// (fall) across the listed values of k, in the listed order. The test is
// the one-sided Jonckheere-Terpstra test for ordered alternatives (exact
// without ties, normal approximation with tie correction otherwise), Holm
// across slices; the mirror test in the other direction contradicts. It is
// a test of a trend, not of every step: a plateau after a rise still
// increases, which is why a trend claim has no interval to clear; its
// size is last/first, which must move by at least the tolerance (10%
// unless the check sets one) for the claim to be supported.
func evalTrend(c Check, byVariant map[string][]*series, o Options) evaluation {
	over, up := c.IncreasesOver, true
	if len(c.DecreasesOver) > 0 {
		over, up = c.DecreasesOver, false
	}
	key := sortedKeys(over)[0]
	values := over[key]
	name := c.Variant
	dir := map[bool]string{true: "increases", false: "decreases"}[up]
	e := evaluation{whole: "across " + key, units: "slices"}
	e.method = fmt.Sprintf("trend: one-sided Jonckheere-Terpstra test that %s %s %s over %s = %s (in that order), every "+
		"slice at the level (intersection-union), Holm across the opposite tests; supported when significant at level %s; contradicted by the test in the other direction",
		name, c.Metric, dir, key, strings.Join(values, ", "), fmtP(o.level()))
	sls := slicesOver(byVariant[name], key, values)
	if len(sls) == 0 {
		for _, v := range values {
			e.missing(fmt.Sprintf("no data for variant %s at %s=%s", name, key, v))
		}
		return e
	}
	var units []unit
	for _, sl := range sls {
		present := sl.present(&e, name, key)
		u := unit{label: sl.label, what: fmt.Sprintf("last/first median of %s %s", name, c.Metric), noCI: true,
			test: "one-sided Jonckheere-Terpstra", est: math.NaN()}
		var groups [][]float64
		var meds []float64
		for _, l := range present {
			noteFlags(&e, name, l.s, c.Metric)
			if p := fewReplicates(name, l.s); p != "" && u.problem == "" {
				u.problem = p
			}
			groups = append(groups, l.s.sample().units)
			meds = append(meds, median(l.s.sample().units))
		}
		if len(groups) < 2 && u.problem == "" {
			u.problem = fmt.Sprintf("a trend needs data at 2 or more values of %s", key)
		}
		if len(meds) >= 2 {
			u.est = meds[len(meds)-1] / meds[0]
		}
		rev := slices.Clone(groups)
		slices.Reverse(rev)
		inc, dec := jtIncreasing(groups), jtIncreasing(rev)
		s := side{bound: 1, above: up, pClaim: inc, pOpp: dec}
		if !up {
			s.pClaim, s.pOpp = dec, inc
		}
		u.sides = []side{s}
		units = append(units, u)
		prefix := ""
		if sl.label != "" {
			prefix = sl.label + ": "
		}
		e.evidence = append(e.evidence, fmt.Sprintf("%s%s %s medians %s over %s = %s", prefix, name, c.Metric,
			joinNums(meds), key, strings.Join(values, ", ")))
	}
	e.points = judge(units, o.level())
	// A trend is a claim of size too: a significant drift of a few
	// percent across a whole sweep is not "p99 climbs with users" (review
	// statistics.md: without a size, any monotone drift is eventually
	// supported). last/first must move by at least the tolerance (10%
	// unless the check sets one), as flat_over's band is 10% wide.
	tol := c.tolerance()
	for i := range e.points {
		pt := &e.points[i]
		small := up && !(pt.Ratio >= 1+tol) || !up && !(pt.Ratio <= 1-tol)
		if pt.Status == Supported && small {
			pt.Status, pt.leans = Inconclusive, Inconclusive
			pt.Reason = fmt.Sprintf("%s = %s: the trend is significant (%s p=%s) but smaller than the claim's minimum change, last/first %s %s (tolerance %s)",
				units[i].what, fmtRatio(pt.Ratio), units[i].test, fmtP(pt.P), map[bool]string{true: "≥", false: "≤"}[up], fmtRatio(map[bool]float64{true: 1 + tol, false: 1 - tol}[up]), fmtRatio(tol))
		}
	}
	for i, u := range units {
		e.evidence = append(e.evidence, fmt.Sprintf("%s: %s = %s; %s that it %s%s → %s", pointName(u.label), u.what,
			fmtRatio(u.est), u.test, dir, pText(e.points[i]), e.points[i].Status))
	}
	return e
}
