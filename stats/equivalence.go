package stats

import (
	"fmt"
	"math"
)

// ratioUnit builds the unit for the ratio of medians a/b against bounds:
// for each bound r, the one-sided Mann-Whitney U of a against r×b in the
// claimed direction and in the other. A lower bound r says "a is
// stochastically larger than r×b"; an upper bound the mirror. With both
// bounds this is Schuirmann's two one-sided tests (TOST) for equivalence,
// with Mann-Whitney as the one-sided test (Wellek, "Testing Statistical
// Hypotheses of Equivalence and Noninferiority", ch. 6): supported when
// both sides are significant and the interval lies inside the band.
// Scaling b by r before ranking is the test of a ratio shift, which is what
// a multiplicative effect on run times and rates is.
func ratioUnit(label, nameA, nameB string, a, b *series, bounds []side, o Options) unit {
	sa, sb := a.sample(), b.sample()
	what := nameA + "/" + nameB
	u := unit{label: label, what: what, test: "one-sided Mann-Whitney U"}
	if len(bounds) == 2 {
		u.test = "TOST (two one-sided Mann-Whitney U)"
	}
	ma, mb := median(sa.units), median(sb.units)
	u.est = ma / mb
	u.lo, u.hi = math.NaN(), math.NaN()
	for _, s := range bounds {
		rb := scale(sb.units, s.bound)
		up, down := mwGreater(sa.units, rb), mwGreater(rb, sa.units)
		if s.above {
			s.pClaim, s.pOpp = up, down
		} else {
			s.pClaim, s.pOpp = down, up
		}
		u.sides = append(u.sides, s)
	}
	switch {
	case fewReplicates("", a) != "" || fewReplicates("", b) != "":
		u.problem = firstNonEmpty(fewReplicates(nameA, a), fewReplicates(nameB, b))
		return u
	case !(mb > 0):
		u.est = math.NaN() // never an infinite ratio written as 0
		u.problem = fmt.Sprintf("the median of %s is %s, so the ratio %s is undefined; state the claim as an absolute check "+
			"on one variant instead (e.g. {metric: M, variant: V, at_most: X})", nameB, fmtNum(mb), what)
		u.closed = true
		return u
	}
	u.dir = direction{pUp: mwGreater(sa.units, sb.units), pDown: mwGreater(sb.units, sa.units)}
	if !o.needCI(u.sides) && !(u.dir.pUp <= o.level() || u.dir.pDown <= o.level()) {
		return u
	}
	r := newResampler(o.Seed, label+"|"+what)
	u.lo, u.hi = r.interval([]sample{sa, sb}, o.resamples(), o.level(), func(m []float64) float64 {
		if m[1] <= 0 {
			return math.Inf(1)
		}
		return m[0] / m[1]
	})
	return u
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

// scale returns xs multiplied by r (a new slice).
func scale(xs []float64, r float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * r
	}
	return out
}
