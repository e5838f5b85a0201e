package stats

import (
	"fmt"
	"slices"
	"strings"
)

// evalCompare evaluates compare: [A, B] at every selected point: a
// superiority test against one ratio bound, or TOST for a band of two
// (equivalence.go builds the tests).
func evalCompare(c Check, byVariant map[string][]*series, o Options) evaluation {
	nameA, nameB := c.Compare[0], c.Compare[1]
	bounds := checkSides(c)
	e := evaluation{method: compareMethod(c, bounds, o)}
	e.missing(missingAtWhere(c.Where, byVariant, nameA, nameB)...)
	var units []unit
	var pairs [][2]*series
	for _, p := range pairUp(&e, byVariant, c) {
		label := p[0].label
		noteFlags(&e, nameA, p[0], c.Metric)
		noteFlags(&e, nameB, p[1], c.Metric)
		units = append(units, ratioUnit(label, nameA, nameB, p[0], p[1], bounds, o))
		pairs = append(pairs, p)
	}
	e.points = judge(units, o.level())
	e.directed = true
	e.dir, e.dirP = claimDirection(units, o.level(), ClaimedSign(c))
	for i, u := range units {
		e.closed = e.closed || u.closed
		sa, sb := Summarize(pairs[i][0].sample().units), Summarize(pairs[i][1].sample().units)
		e.evidence = append(e.evidence, fmt.Sprintf("%s: %s %s = %s%s, claim %s; %s%s; medians %s vs %s, n=%d+%d %s, CV %s vs %s → %s",
			pointName(u.label), u.what, c.Metric, fmtRatio(u.est), u.intervalAt(o.level()), sidesText(bounds),
			u.test, pText(e.points[i]), fmtNum(sa.Median), fmtNum(sb.Median), sa.N, sb.N,
			unitName(pairs[i][0]), fmtPct(sa.CV), fmtPct(sb.CV), e.points[i].Status))
	}
	return e
}

// checkSides turns a check's bounds into sides, at_least first.
func checkSides(c Check) []side {
	var out []side
	if r, ok := Bound(c.AtLeast); ok {
		out = append(out, side{bound: r, above: true})
	}
	if r, ok := Bound(c.AtMost); ok {
		out = append(out, side{bound: r})
	}
	return out
}

// compareMethod names the procedure of a compare check.
func compareMethod(c Check, bounds []side, o Options) string {
	a, b := c.Compare[0], c.Compare[1]
	test := fmt.Sprintf("superiority: one-sided Mann-Whitney U of %s against r×%s, every point at the level (intersection-union), Holm across the opposite tests", a, b)
	if len(bounds) == 2 {
		test = fmt.Sprintf("equivalence: two one-sided Mann-Whitney U tests (TOST) of %s against each bound×%s, every point at the level (intersection-union), Holm across the opposite tests", a, b)
	}
	return fmt.Sprintf("%s; supported when significant at level %s and the %s bootstrap interval of the ratio of medians "+
		"%s/%s (%s) lies inside the claim; contradicted by the mirror test; claim %s/%s %s",
		test, fmtP(o.level()), confName(o.level()), a, b, resampleText(o), a, b, sidesText(bounds))
}

// pairUp pairs the points of A and B; a point present for one variant
// only is missing data for the other.
func pairUp(e *evaluation, byVariant map[string][]*series, c Check) [][2]*series {
	nameA, nameB := c.Compare[0], c.Compare[1]
	var labels []*series
	for _, name := range []string{nameA, nameB} {
		if len(byVariant[name]) == 0 && len(c.Where) == 0 {
			e.missing(fmt.Sprintf("no data for variant %s (metric %s)", name, c.Metric))
		}
		for _, s := range byVariant[name] {
			if find(labels, s.label) == nil {
				labels = append(labels, s)
			}
		}
	}
	slices.SortFunc(labels, func(x, y *series) int { return comparePoints(x.point, y.point) })
	var out [][2]*series
	for _, s := range labels {
		a, b := find(byVariant[nameA], s.label), find(byVariant[nameB], s.label)
		switch {
		case a == nil && len(byVariant[nameA]) > 0:
			e.missing(fmt.Sprintf("no data for variant %s at %s", nameA, pointName(s.label)))
		case b == nil && len(byVariant[nameB]) > 0:
			e.missing(fmt.Sprintf("no data for variant %s at %s", nameB, pointName(s.label)))
		case a != nil && b != nil:
			out = append(out, [2]*series{a, b})
		}
	}
	return out
}

// sidesText is "≥ 1.5", or "≥ 0.9 and ≤ 1.1" for a band.
func sidesText(bounds []side) string {
	var out []string
	for _, s := range bounds {
		out = append(out, s.String())
	}
	return strings.Join(out, " and ")
}
