package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/store/record"
)

// sweepValues returns, per sweep key, its values in manifest order.
func sweepValues(ss record.SweepInfos) map[string][]string {
	out := map[string][]string{}
	for _, s := range ss {
		if s.Values != nil {
			out[s.Key] = s.Values
		}
	}
	return out
}

// layout is the shape of a run: which variants, sweep points and request
// groups exist, in which order tables and charts show them, and which
// metric of which group answers the question. run.json says so for runs
// recorded since it carried those fields; for older runs (or a run.json
// written by hand) the same answers are derived from the manifest and the
// data, the way the pipeline chooses them.
type layout struct {
	Variants  []string // manifest order, then any others in trial order
	Points    []string // sweep order (cartesian product in manifest value order)
	SweepKeys []string
	Groups    []string // measured group first
	Measured  string
	Primary   string // a trials.csv column, e.g. wall_ms
	Models    map[string]string
}

func newLayout(r *record.Run, m *record.ManifestInfo) layout {
	var l layout
	l.Models = map[string]string{}
	if m != nil {
		for _, v := range m.Variants {
			l.Variants = append(l.Variants, v.Name)
		}
		for _, s := range m.Sweep {
			l.SweepKeys = append(l.SweepKeys, s.Key)
		}
		if len(m.Load.Groups) == 0 {
			l.Models[m.Load.Name] = m.Load.Model
		}
		for _, g := range m.Load.Groups {
			l.Models[g.Name] = g.Model
		}
	}
	if len(r.Meta.Variants) > 0 {
		l.Variants = append([]string(nil), r.Meta.Variants...)
	}
	if len(r.Meta.SweepKeys) > 0 {
		l.SweepKeys = append([]string(nil), r.Meta.SweepKeys...)
	}
	seen := map[string]bool{}
	for _, v := range l.Variants {
		seen[v] = true
	}
	pointSeen := map[string]bool{}
	var points []string
	var groups []string
	groupSeen := map[string]bool{}
	keySeen := map[string]bool{}
	for _, k := range l.SweepKeys {
		keySeen[k] = true
	}
	var extraKeys []string
	for _, t := range r.Trials {
		if !seen[t.Variant] {
			seen[t.Variant] = true
			l.Variants = append(l.Variants, t.Variant)
		}
		if !pointSeen[t.Point] {
			pointSeen[t.Point] = true
			points = append(points, t.Point)
			for k := range record.ParsePoint(t.Point) {
				if !keySeen[k] {
					keySeen[k] = true
					extraKeys = append(extraKeys, k)
				}
			}
		}
		if !groupSeen[t.Group] {
			groupSeen[t.Group] = true
			groups = append(groups, t.Group)
		}
	}
	sort.Strings(extraKeys)
	l.SweepKeys = append(l.SweepKeys, extraKeys...)
	// Keep only keys that some point actually has, so a manifest sweep that a
	// smoke profile removed does not leave an empty axis.
	var keys []string
	for _, k := range l.SweepKeys {
		for _, p := range points {
			if _, ok := record.ParsePoint(p)[k]; ok {
				keys = append(keys, k)
				break
			}
		}
	}
	l.SweepKeys = keys
	var order map[string][]string
	if m != nil {
		order = sweepValues(m.Sweep)
	}
	l.Points = sortPoints(points, l.SweepKeys, order)

	l.Measured = measuredGroup(m, groups)
	if g := r.Meta.Measured; g != "" && (len(groups) == 0 || groupSeen[g] || slices.Contains(r.Meta.Groups, g)) {
		l.Measured = g
	}
	l.Groups = append(l.Groups, l.Measured)
	for _, g := range r.Meta.Groups {
		if groupSeen[g] && g != l.Measured {
			l.Groups = append(l.Groups, g)
			groupSeen[g] = false
		}
	}
	if m != nil {
		for _, g := range m.Load.Groups {
			if groupSeen[g.Name] && g.Name != l.Measured {
				l.Groups = append(l.Groups, g.Name)
				groupSeen[g.Name] = false
			}
		}
	}
	for _, g := range groups {
		if g != l.Measured && groupSeen[g] {
			l.Groups = append(l.Groups, g)
		}
	}
	l.Primary = primaryMetric(l.Measured, l.Models)
	if _, ok := metric.Lookup(r.Meta.Primary); ok {
		l.Primary = r.Meta.Primary
	}
	return l
}

// layoutProblems says where run.json's primary metric or measured group
// is one the run cannot have (an edit): the page then reads the
// manifest's and the data's instead, and says so.
func layoutProblems(r *record.Run, l layout) []string {
	var out []string
	if p := r.Meta.Primary; p != "" && p != l.Primary {
		out = append(out, fmt.Sprintf("%s's primary_metric %q is no metric threadlab records: the page uses %s, the measured group's", record.RunFile, p, l.Primary))
	}
	if g := r.Meta.Measured; g != "" && g != l.Measured {
		out = append(out, fmt.Sprintf("%s's measured_group %q is not one of the run's groups (%s): the page uses %s", record.RunFile, g, strings.Join(l.Groups, ", "), l.Measured))
	}
	return out
}

// measuredGroup is the manifest's load.measure when the data has it, else
// the only group, else the first group in manifest order, else in data order.
func measuredGroup(m *record.ManifestInfo, groups []string) string {
	has := func(g string) bool {
		for _, x := range groups {
			if x == g {
				return true
			}
		}
		return false
	}
	if m != nil && m.Load.Measure != "" && has(m.Load.Measure) {
		return m.Load.Measure
	}
	if len(groups) == 1 {
		return groups[0]
	}
	if m != nil {
		for _, g := range m.Load.Groups {
			if has(g.Name) {
				return g.Name
			}
		}
	}
	if len(groups) > 0 {
		return groups[0]
	}
	return ""
}

// primaryMetric is the pipeline's rule (metric.Primary, which
// experiments.Manifest.Primary also asks) for runs whose run.json predates
// primary_metric, applied to the measured group's load model.
func primaryMetric(measured string, models map[string]string) string {
	model, ok := models[measured]
	if !ok && len(models) == 1 {
		for _, v := range models {
			model = v
		}
	}
	if model == "open" {
		// Runs that predate primary_metric predate the open model's p99
		// primary too: they were read by their throughput.
		return "rps"
	}
	return metric.Primary(model)
}

// sortPoints orders sweep points by each key's manifest value order, then
// numerically, then as text.
func sortPoints(points, keys []string, order map[string][]string) []string {
	out := append([]string(nil), points...)
	rank := func(k, v string) (int, float64, string) {
		for i, x := range order[k] {
			if x == v {
				return i, 0, ""
			}
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return 1 << 20, f, ""
		}
		return 1 << 21, 0, v
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := record.ParsePoint(out[i]), record.ParsePoint(out[j])
		for _, k := range keys {
			ri, fi, si := rank(k, a[k])
			rj, fj, sj := rank(k, b[k])
			if ri != rj {
				return ri < rj
			}
			if fi != fj {
				return fi < fj
			}
			if si != sj {
				return si < sj
			}
		}
		return out[i] < out[j]
	})
	return out
}

// median of xs (xs is reordered); NaN for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// pointLabel renders a point for axes: only the values when there is a
// single sweep key ("200"), key=value otherwise ("pool=200 users=100").
func pointLabel(p string, keys []string) string {
	if p == "" {
		return ""
	}
	pp := record.ParsePoint(p)
	if len(keys) == 1 {
		if v, ok := pp[keys[0]]; ok && len(pp) == 1 {
			return keys[0] + "=" + v
		}
	}
	return strings.ReplaceAll(p, ";", " ")
}
