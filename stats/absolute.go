package stats

import (
	"fmt"
	"math"
)

// evalAbsolute evaluates variant: V with at_least/at_most and no compare:
// a statement about metric(V) itself at every selected point, such as
// {metric: errors, variant: webflux, at_most: 0}.
//
// The test is about the median replicate. When the bound and every
// replicate are positive it is the one-sample Wilcoxon signed-rank test of
// log(value/bound): run times and rates are multiplicative, so their logs
// are close to symmetric, which the signed-rank test assumes, and it uses
// the sizes of the differences, not only their signs. Otherwise (a count
// that can be 0, a bound of 0, a replicate exactly on the bound) it is the
// sign test, which needs no symmetry
// and counts a replicate equal to the bound as meeting it: five trials with
// 0 errors support "errors at_most 0" with p = 1/2^5 = 0.031. Either way the
// bootstrap interval of the median must also lie within the bound.
func evalAbsolute(c Check, byVariant map[string][]*series, o Options) evaluation {
	name := c.Variant
	bounds := checkSides(c)
	e := evaluation{}
	e.method = fmt.Sprintf("absolute: one-sided Wilcoxon signed-rank test of log(%s %s / bound), or the sign test when a value "+
		"or the bound is not positive, every point at the level (intersection-union), Holm across the opposite tests; supported when significant at level %s and the %s bootstrap "+
		"interval of the median (%s) lies within %s; contradicted by the mirror test",
		name, c.Metric, fmtP(o.level()), confName(o.level()), resampleText(o), sidesText(bounds))
	e.missing(missingAtWhere(c.Where, byVariant, name)...)
	if len(byVariant[name]) == 0 && len(c.Where) == 0 {
		e.missing(fmt.Sprintf("no data for variant %s (metric %s)", name, c.Metric))
		return e
	}
	var units []unit
	for _, s := range byVariant[name] {
		noteFlags(&e, name, s, c.Metric)
		units = append(units, absoluteUnit(s, name+" "+c.Metric, bounds, o))
	}
	e.points = judge(units, o.level())
	for i, u := range units {
		// u.what says "the median of ..."; the estimate takes its
		// interval's digits, so 915.523 does not print as 916 beside
		// (90% CI 915.367–915.679).
		e.evidence = append(e.evidence, fmt.Sprintf("%s: %s = %s%s over %d %s (%s), claim %s; %s%s → %s",
			pointName(u.label), u.what, fmtRatio(u.est), u.intervalAt(o.level()), byVariant[name][i].replicates(),
			unitName(byVariant[name][i]), joinNums(byVariant[name][i].sample().units), sidesText(bounds),
			u.test, pText(e.points[i]), e.points[i].Status))
	}
	return e
}

// absoluteUnit tests one series against the bounds.
func absoluteUnit(s *series, what string, bounds []side, o Options) unit {
	smp := s.sample()
	u := unit{label: s.label, what: "the median of " + what, est: median(smp.units), lo: math.NaN(), hi: math.NaN()}
	if p := fewReplicates(variantName(what), s); p != "" {
		u.problem = p
		u.sides = bounds
		return u
	}
	logScale := true
	for _, b := range bounds {
		logScale = logScale && b.bound > 0
	}
	for _, x := range smp.units {
		logScale = logScale && x > 0
		for _, b := range bounds {
			// A replicate on the bound (8 threads, at_most 8) meets it; the
			// signed-rank test would drop it as a zero difference.
			logScale = logScale && x != b.bound
		}
	}
	u.test = "one-sided sign test"
	if logScale {
		u.test = "one-sided Wilcoxon signed-rank test on the log scale"
	}
	for _, b := range bounds {
		var up, down float64 // p for "above the bound", "below the bound"
		if logScale {
			d := make([]float64, len(smp.units))
			for i, x := range smp.units {
				d[i] = math.Log(x / b.bound)
			}
			up, down = signedRankGreater(d), signedRankGreater(scale(d, -1))
		} else if b.above {
			up = signGreater(smp.units, func(x float64) bool { return x >= b.bound })
			down = signGreater(smp.units, func(x float64) bool { return x < b.bound })
		} else {
			up = signGreater(smp.units, func(x float64) bool { return x > b.bound })
			down = signGreater(smp.units, func(x float64) bool { return x <= b.bound })
		}
		if b.above {
			b.pClaim, b.pOpp = up, down
		} else {
			b.pClaim, b.pOpp = down, up
		}
		u.sides = append(u.sides, b)
	}
	if !o.needCI(u.sides) {
		return u
	}
	r := newResampler(o.Seed, s.label+"|"+what)
	u.lo, u.hi = r.interval([]sample{smp}, o.resamples(), o.level(), func(m []float64) float64 { return m[0] })
	return u
}

// variantName is the variant part of "webflux errors".
func variantName(what string) string {
	for i := range len(what) {
		if what[i] == ' ' {
			return what[:i]
		}
	}
	return what
}
