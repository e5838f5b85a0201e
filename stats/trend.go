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
		"slice at the level (intersection-union), Holm across the opposite tests; supported when significant at level %s and last/first of the medians clears %s by the one-sided Mann-Whitney U test and %s bootstrap interval (%s) a compare claim uses; contradicted by the trend test in the other direction",
		name, c.Metric, dir, key, strings.Join(values, ", "), fmtP(o.level()), map[bool]string{true: "≥ ", false: "≤ "}[up]+fmtRatio(map[bool]float64{true: 1 + c.tolerance(), false: 1 - c.tolerance()}[up]), confName(o.level()), resampleText(o))
	sls := slicesOver(byVariant[name], key, values)
	if len(sls) == 0 {
		for _, v := range values {
			e.missing(fmt.Sprintf("no data for variant %s at %s=%s", name, key, v))
		}
		return e
	}
	tol := c.tolerance()
	bound := side{bound: 1 + tol, above: true}
	if !up {
		bound = side{bound: 1 - tol}
	}
	var units, sizes []unit
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
		// The size: last/first against 1 ± tolerance, tested and
		// bootstrapped as a compare claim's ratio is.
		size := unit{label: sl.label, problem: u.problem, est: u.est, lo: math.NaN(), hi: math.NaN(), sides: []side{bound}} // judge reads the sides of every unit
		if u.problem == "" {
			first, last := present[0].s, present[len(present)-1].s
			size = ratioUnit(sl.label, key+"="+present[len(present)-1].value, key+"="+present[0].value, last, first, []side{bound}, o)
		}
		sizes = append(sizes, size)
		prefix := ""
		if sl.label != "" {
			prefix = sl.label + ": "
		}
		e.evidence = append(e.evidence, fmt.Sprintf("%s%s %s medians %s over %s = %s", prefix, name, c.Metric,
			joinNums(meds), key, strings.Join(values, ", ")))
	}
	e.points = judge(units, o.level())
	// A trend is a claim of size too: a significant drift of a few percent
	// across a whole sweep is not "p99 climbs with users" (review
	// statistics.md: without a size, any monotone drift is eventually
	// supported). last/first must clear 1 ± the tolerance (10% unless the
	// check sets one, the width of flat_over's band) by the test and
	// interval a compare claim uses. A trend the size test does not
	// support stays inconclusive (never "contradicted", which for a trend
	// reads as the opposite trend), and is closed when the size test
	// contradicts: more forks would not make the change bigger.
	sized := judge(sizes, o.level())
	for i := range e.points {
		pt, sz := &e.points[i], sized[i]
		pt.Low, pt.High = sz.Low, sz.High
		if pt.Status != Supported || sz.Status == Supported {
			continue
		}
		pt.Status, pt.leans = Inconclusive, Inconclusive
		pt.Reason = fmt.Sprintf("the trend is significant (%s p=%s) but its size is not shown: last/first = %s%s, claim %s (tolerance %s): %s",
			units[i].test, fmtP(pt.P), fmtRatio(sz.Ratio), sizes[i].intervalAt(o.level()), bound, fmtRatio(tol), sz.Reason)
		if sz.Status == Contradicted {
			units[i].closed = true
		}
	}
	for i := range units {
		e.closed = e.closed || units[i].closed && e.points[i].Status == Inconclusive
	}
	for i, u := range units {
		e.evidence = append(e.evidence, fmt.Sprintf("%s: %s = %s%s; %s that it %s%s; size %s, %s p=%s → %s", pointName(u.label), u.what,
			fmtRatio(u.est), sizes[i].intervalAt(o.level()), u.test, dir, pText(e.points[i]), bound, sizes[i].test, fmtP(sized[i].P), e.points[i].Status))
	}
	return e
}
