package pipeline

import (
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/record"
	"github.com/threadlab/threadlab/pipeline/stats"
)

// EvaluateClaims decides every claim of m from a run's trials with today's
// rules: the Claims stage and `threadlab report --reevaluate` both call it,
// so a re-evaluated run is judged exactly as a new one would be. o carries
// the bootstrap seed (the run's), the deciding version and, for a
// sequential run, the look. h is the host the preconditions read
// (HostFacts): a claim whose precondition fails, or that reads a variant
// that did not run here, is not applicable here (preconditions.go).
func EvaluateClaims(m *experiments.Manifest, trials []record.Trial, o stats.Options, h ClaimHost) []record.Verdict {
	// Claims see the iterations summary.csv sees: a fork's iterations before
	// its steady state are left out (pipeline/steady).
	cells := steadyOnly(groupTrials(trials), m.Primary())
	var out []record.Verdict
	for _, c := range m.Claims {
		sc := claimCells(m, c, cells)
		co := o
		if m.Forks.Sequential() && co.Sequential.MaxLooks == 0 {
			// The last look of a sequential design: judged at the level its
			// alpha spending leaves, so stopping early and going on to max
			// keep the same error rates.
			co.Sequential = stats.TrialLooks(replicates(sc), m.Forks.Min, m.Forks.Max)
		}
		v := stats.EvaluateWith(c.ID, c.Says, c.Check, sc, co)
		capByForks(&v, c.Check, sc)
		applyPreconditions(&v, checkPreconditions(m, c, cells, trials, h))
		rv := RecordVerdict(v)
		if d := c.Decision; d != nil {
			rv.Decision = &record.Decision{When: d.When, Pick: d.Pick, Then: d.Then}
		}
		out = append(out, rv)
	}
	return out
}

// replicates is the most forks any of a claim's cells has: the look a
// sequential design has reached for that claim.
func replicates(cells []stats.Cell) int {
	n := 0
	for _, c := range cells {
		n = max(n, len(c.Values))
	}
	return n
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
