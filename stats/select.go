package stats

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/threadlab/threadlab/measure/metric"
)

// series is one variant's data at one point (duplicate cells merged).
type series struct {
	point  map[string]string
	label  string
	values []float64   // one per replicate, in order (for the noise flags)
	forks  [][]float64 // iterations per fork, when the cells have fork structure
}

// sample is the series as the tests see it.
func (s *series) sample() sample { return newSample(s.values, s.forks) }

// replicates is the number of independent replicates: forks, or values.
func (s *series) replicates() int { return len(s.sample().units) }

// flagValues are the values the noise flags read: the fork medians when
// there are forks (a fork is the replicate), the trials otherwise.
func (s *series) flagValues() []float64 {
	if len(s.forks) > 0 {
		return s.sample().units
	}
	return s.values
}

// pick keeps the cells of the check's metric and group, indexed by variant.
// With no group in the check it uses cells without a group, or the only
// group there is; several named groups make the check ambiguous.
func pick(c Check, cells []Cell) (map[string][]*series, string) {
	var ofMetric []Cell
	groups := map[string]bool{}
	for _, cell := range cells {
		if cell.Metric == c.Metric {
			ofMetric = append(ofMetric, cell)
			groups[cell.Group] = true
		}
	}
	if len(ofMetric) == 0 {
		return nil, fmt.Sprintf("no data for metric %q in this run", c.Metric)
	}
	group := c.Group
	if group == "" && !groups[""] {
		if len(groups) > 1 {
			return nil, fmt.Sprintf("the run measured several request groups (%s) and the check names none (set check.group)",
				strings.Join(sortedKeys(groups), ", "))
		}
		for g := range groups {
			group = g
		}
	}
	if !groups[group] {
		return nil, fmt.Sprintf("no data for group %q of metric %q (the run has groups %s)",
			group, c.Metric, strings.Join(sortedKeys(groups), ", "))
	}
	byVariant := map[string][]*series{}
	for _, cell := range ofMetric {
		if cell.Group != group || !matchWhere(cell.Point, c.Where) {
			continue
		}
		label := pointLabel(cell.Point)
		s := find(byVariant[cell.Variant], label)
		if s == nil {
			s = &series{point: cell.Point, label: label}
			byVariant[cell.Variant] = append(byVariant[cell.Variant], s)
		}
		s.values = append(s.values, cell.Values...)
		s.forks = append(s.forks, cell.Forks...)
		if len(cell.Forks) > 0 && len(cell.Values) == 0 {
			for _, f := range cell.Forks {
				s.values = append(s.values, f...)
			}
		}
	}
	for _, ss := range byVariant {
		slices.SortFunc(ss, func(a, b *series) int { return comparePoints(a.point, b.point) })
	}
	return byVariant, ""
}

// noteFlags runs Flags on one series and records every flag in the
// evaluation's flags and notes. Flags are evidence only: since issue 9 they
// never gate a verdict, because a gate on the extremes of the trials gets
// harder to pass as trials are added.
func noteFlags(e *evaluation, variant string, s *series, m string) {
	where := variant
	if s.label != "" {
		where += ", " + s.label
	}
	for _, f := range Flags(s.flagValues(), HigherIsBetter(m)) {
		if f.Code == FlagFewTrialsCI || f.Code == FlagFewTrialsTest {
			continue // replicate counts are a problem of their own (fewReplicates)
		}
		tag := fmt.Sprintf("%s (%s)", f.Code, where)
		if !slices.Contains(e.flags, tag) {
			e.flags = append(e.flags, tag)
			e.notes = append(e.notes, fmt.Sprintf("%s at %s: %s: %s", variant, pointName(s.label), f.Code, f.Message))
		}
	}
}

// fewReplicates reports a series too small for a claim, "" when it is big
// enough.
func fewReplicates(variant string, s *series) string {
	n := s.replicates()
	if n >= MinReplicates {
		return ""
	}
	unit := "trials"
	if len(s.forks) > 0 {
		unit = "forks"
	}
	return fmt.Sprintf("only %d %s of %s at %s; a claim needs at least %d independent replicates per cell, "+
		"since no one-sided test can reach p ≤ 0.05 with fewer (raise trials)", n, unit, variant, pointName(s.label), MinReplicates)
}

// missingAtWhere reports where-values that no cell of a variant has.
func missingAtWhere(where map[string][]string, byVariant map[string][]*series, names ...string) []string {
	var out []string
	for _, k := range sortedKeys(where) {
		for _, want := range where[k] {
			for _, name := range names {
				found := slices.ContainsFunc(byVariant[name], func(s *series) bool { return sameValue(s.point[k], want) })
				if !found {
					out = append(out, fmt.Sprintf("no data for variant %s at %s=%s", name, k, want))
				}
			}
		}
	}
	return out
}

// find returns the series with the given label, or nil.
func find(ss []*series, label string) *series {
	for _, s := range ss {
		if s.label == label {
			return s
		}
	}
	return nil
}

// matchWhere reports whether point lies in the where selection.
func matchWhere(point map[string]string, where map[string][]string) bool {
	for k, vs := range where {
		v, ok := point[k]
		if !ok {
			return false
		}
		if !slices.ContainsFunc(vs, func(w string) bool { return sameValue(v, w) }) {
			return false
		}
	}
	return true
}

// sameValue compares sweep values as numbers when both parse ("400" and
// "400.0" from YAML are the same pool size), as strings otherwise.
func sameValue(a, b string) bool {
	if a == b {
		return true
	}
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	return errA == nil && errB == nil && x == y
}

// pointLabel is the canonical name of a point: "pool=400, users=2000".
func pointLabel(p map[string]string) string {
	parts := make([]string, 0, len(p))
	for _, k := range sortedKeys(p) {
		parts = append(parts, k+"="+p[k])
	}
	return strings.Join(parts, ", ")
}

// comparePoints orders points key by key, numerically where both values
// are numbers, so that pool=50 comes before pool=400.
func comparePoints(a, b map[string]string) int {
	keys := sortedKeys(a)
	for _, k := range sortedKeys(b) {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		x, y := a[k], b[k]
		fx, errX := strconv.ParseFloat(x, 64)
		fy, errY := strconv.ParseFloat(y, 64)
		switch {
		case errX == nil && errY == nil && fx != fy:
			if fx < fy {
				return -1
			}
			return 1
		case x != y && (errX != nil || errY != nil):
			return strings.Compare(x, y)
		}
	}
	return 0
}

// sortedKeys returns the keys of m in order, so that messages and evidence
// come out the same on every run.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// HigherIsBetter reports the direction of a trials.csv metric from the
// metric package's definitions (throughput up, latency and errors down).
func HigherIsBetter(m string) bool { return metric.HigherIsBetter(m) }

// KnownMetric reports whether a claim may name m: a numeric trials.csv
// column defined in the metric package.
func KnownMetric(m string) bool { _, ok := metric.Lookup(m); return ok }

// MatchWhere reports whether a sweep point (record.ParsePoint) lies in a
// check's where selection, comparing values as the verdicts do ("400" and
// "400.0" are the same level).
func MatchWhere(point map[string]string, where map[string][]string) bool {
	return matchWhere(point, where)
}
