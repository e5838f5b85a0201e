package stats

import (
	"fmt"
	"slices"
	"strings"
)

// level is one listed value of a sweep key within one slice of the sweep.
type level struct {
	value string
	s     *series // nil when the run has no data there
}

// slice is one setting of the sweep keys other than the swept one, with the
// variant's series at each listed value of the swept key.
type slice struct {
	label  string
	rest   map[string]string
	levels []level
}

// slicesOver groups a variant's series by the other sweep keys, keeping
// the listed values of key in the listed order.
func slicesOver(ss []*series, key string, values []string) []*slice {
	var out []*slice
	for _, s := range ss {
		idx := slices.IndexFunc(values, func(v string) bool { return sameValue(s.point[key], v) })
		if idx < 0 {
			continue
		}
		rest := map[string]string{}
		for k, v := range s.point {
			if k != key {
				rest[k] = v
			}
		}
		label := pointLabel(rest)
		i := slices.IndexFunc(out, func(sl *slice) bool { return sl.label == label })
		if i < 0 {
			sl := &slice{label: label, rest: rest}
			for _, v := range values {
				sl.levels = append(sl.levels, level{value: v})
			}
			out = append(out, sl)
			i = len(out) - 1
		}
		out[i].levels[idx].s = s
	}
	slices.SortFunc(out, func(a, b *slice) int { return comparePoints(a.rest, b.rest) })
	return out
}

// present returns the levels with data, reporting the missing ones.
func (sl *slice) present(e *evaluation, variant, key string) []level {
	var out []level
	for _, l := range sl.levels {
		if l.s == nil {
			at := key + "=" + l.value
			if sl.label != "" {
				at += ", " + sl.label
			}
			e.missing(fmt.Sprintf("no data for variant %s at %s", variant, at))
			continue
		}
		out = append(out, l)
	}
	return out
}

// evalFlat evaluates variant: V, flat_over: {k: [...]}: within each slice
// of the sweep, every pair of listed levels must be equivalent within the
// tolerance, by TOST on their ratio of medians against [1/(1+tol), 1+tol].
// The family (all pairs of all slices) is fixed by the manifest before any
// data is seen, so no pair is chosen for being the extremes; Holm runs
// across it.
func evalFlat(c Check, byVariant map[string][]*series, o Options) evaluation {
	key := sortedKeys(c.FlatOver)[0]
	values := c.FlatOver[key]
	name := c.Variant
	limit := 1 + c.tolerance()
	bounds := []side{{bound: 1 / limit, above: true}, {bound: limit}}
	e := evaluation{whole: "across " + key, units: "pairs"}
	e.method = fmt.Sprintf("flat_over: TOST (two one-sided Mann-Whitney U tests) of every pair of %s's levels %s = %s "+
		"against the band %s–%s of their ratio of medians, every pair at the level (intersection-union), Holm across the opposite tests; supported when significant at level %s "+
		"and the %s bootstrap interval (%s) lies in the band; contradicted by the mirror test",
		name, key, strings.Join(values, ", "), fmtRatio(1/limit), fmtRatio(limit), fmtP(o.level()), confName(o.level()), resampleText(o))
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
		var meds []float64
		for _, l := range present {
			noteFlags(&e, name, l.s, c.Metric)
			meds = append(meds, median(l.s.sample().units))
		}
		prefix := ""
		if sl.label != "" {
			prefix = sl.label + ": "
		}
		var keyVals []string
		for _, l := range present {
			keyVals = append(keyVals, l.value)
		}
		e.evidence = append(e.evidence, fmt.Sprintf("%s%s %s medians %s over %s = %s; tolerance ±%s",
			prefix, name, c.Metric, joinNums(meds), key, strings.Join(keyVals, ", "), fmtPct(c.tolerance())))
		for i := range present {
			for j := i + 1; j < len(present); j++ {
				hi, lo := present[j], present[i]
				label := fmt.Sprintf("%s=%s vs %s", key, hi.value, lo.value)
				if sl.label != "" {
					label = sl.label + ", " + label
				}
				units = append(units, ratioUnit(label, key+"="+hi.value, key+"="+lo.value, hi.s, lo.s, bounds, o))
			}
		}
	}
	e.points = judge(units, o.level())
	for i, u := range units {
		e.closed = e.closed || u.closed
		e.evidence = append(e.evidence, fmt.Sprintf("%s: ratio %s%s, band %s; %s%s → %s",
			u.label, fmtRatio(u.est), u.intervalAt(o.level()), sidesText(bounds), u.test, pText(e.points[i]),
			e.points[i].Status))
	}
	return e
}
