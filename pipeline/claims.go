package pipeline

import (
	"slices"
	"strings"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/record"
	"github.com/threadlab/threadlab/pipeline/stats"
)

// EvaluateClaims decides every claim of m from a run's trials with today's
// rules: the Claims stage and `threadlab report --reevaluate` both call it,
// so a re-evaluated run is judged exactly as a new one would be. o carries
// the bootstrap seed (the run's), the deciding version and, for a
// sequential run, the look.
func EvaluateClaims(m *experiments.Manifest, trials []record.Trial, o stats.Options) []record.Verdict {
	cells := groupTrials(trials)
	var out []record.Verdict
	for _, c := range m.Claims {
		group := c.Check.Group
		if group == "" {
			group = m.Load.Measure
		}
		var sc []stats.Cell
		for k, ts := range cells {
			if k.Group != group {
				continue
			}
			sc = append(sc, stats.Cell{Variant: k.Variant, Point: record.ParsePoint(k.Point), Group: k.Group,
				Metric: c.Check.Metric, Values: values(ts, c.Check.Metric)})
		}
		slices.SortFunc(sc, func(a, b stats.Cell) int {
			return strings.Compare(a.Variant+record.FormatPoint(a.Point), b.Variant+record.FormatPoint(b.Point))
		})
		rv := RecordVerdict(stats.EvaluateWith(c.ID, c.Says, c.Check, sc, o))
		if d := c.Decision; d != nil {
			rv.Decision = &record.Decision{When: d.When, Pick: d.Pick, Then: d.Then}
		}
		out = append(out, rv)
	}
	return out
}

// RecordVerdict is the on-disk shape of a verdict: method, deciding point
// and every unit kept; undefined numbers absent or null, never 0.
func RecordVerdict(v stats.Verdict) record.Verdict {
	rv := record.Verdict{ID: v.ID, Says: v.Says, Status: v.Status, Reason: v.Reason, Leans: v.Leans,
		Evidence: v.Evidence, Point: v.Point, Ratio: record.Finite(v.Ratio), Low: record.Finite(v.Low),
		High: record.Finite(v.High), P: record.Finite(v.P), Method: v.Method, Flags: v.Flags,
		Open: v.Open, Look: v.Look, MaxLooks: v.MaxLooks, Level: v.Level, Version: v.Version}
	for _, p := range v.Points {
		rv.Points = append(rv.Points, record.Point{Point: p.Point, Ratio: record.Num(p.Ratio), Low: record.Num(p.Low),
			High: record.Num(p.High), P: record.Num(p.P), PAdj: record.Num(p.PAdj), Status: p.Status, Reason: p.Reason})
	}
	return rv
}
