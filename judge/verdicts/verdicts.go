package verdicts

import (
	"fmt"
	"slices"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// OfRun judges every claim of m on the run in dir: trials are its
// trials.csv rows as the caller read them, meta its run.json and
// fingerprint its fingerprint.json (nil when absent: the core count is
// unknown); the header of trials.csv and series.csv are read from dir.
// o carries the bootstrap seed (the run's) and the deciding version. The
// Claims stage and `threadlab report --reevaluate` both call it, so a
// re-evaluated run is judged exactly as a new one would be.
func OfRun(dir string, m *experiments.Manifest, meta record.Meta, fingerprint []byte, trials []record.Trial, o stats.Options) ([]record.Verdict, error) {
	h := HostFacts(m, fingerprint, meta)
	var err error
	// A column the run's trials.csv lacks (recorded before threadlab
	// measured it) keeps the claims on it inconclusive, not decided on 0s.
	if h.Columns, err = TrialColumns(dir); err != nil {
		return nil, err
	}
	if h.Series, err = record.ReadCSV[record.Sample](dir, record.SeriesFile); err != nil {
		return nil, err
	}
	return Evaluate(m, trials, o, h), nil
}

// Evaluate decides every claim of m from a run's trials with today's
// rules. o carries the bootstrap seed (the run's), the deciding version
// and, for a sequential run, the look. h is the host the preconditions
// read (HostFacts): a claim whose precondition fails, or that reads a
// variant that did not run here, is not applicable here (preconditions.go).
func Evaluate(m *experiments.Manifest, trials []record.Trial, o stats.Options, h Host) []record.Verdict {
	// Claims see the iterations summary.csv sees: a fork's iterations before
	// its steady state are left out, and forks with none are excluded
	// (steady.go); a cell left with too few steady forks makes the
	// claims on it inconclusive, "not in steady state".
	r := read(m, GroupTrials(trials), h.Series)
	var out []record.Verdict
	for _, c := range m.Claims {
		sc := claimCells(m, c, r.Cells(c.Check.Metric))
		co := o
		if m.Forks.Sequential() && co.Sequential.MaxLooks == 0 {
			// The last look of a sequential design: judged at the level its
			// alpha spending leaves, so stopping early and going on to max
			// keep the same error rates.
			co.Sequential = stats.TrialLooks(replicates(sc), m.Forks.Min, m.Forks.Max)
		}
		var v stats.Verdict
		if col, missing := h.unrecorded(c.Check.Metric); missing {
			v = notRecorded(c, col, co)
		} else {
			v = stats.EvaluateWith(c.ID, c.Says, c.Check, sc, co)
			r.steadyRule(&v, m, c)
			capByForks(&v, c.Check, sc)
		}
		applyPreconditions(&v, checkPreconditions(m, c, r, trials, h))
		rv := toRecord(v)
		if d := c.Decision; d != nil {
			rv.Decision = &record.Decision{When: d.When, Pick: d.Pick, Then: d.Then, TestedBy: d.TestedBy}
		}
		rv.DesignFact = c.DesignFact
		if d := c.Differs; d != nil {
			rv.Differs = &record.Differs{Cause: d.Cause, Why: d.Why}
		}
		out = append(out, rv)
	}
	return out
}

// Pending lists the checks of the claims of m that are not decided yet on
// these trials and more forks could decide: each claim is evaluated as
// look k of a group-sequential design (stats.TrialLooks: Lan-DeMets alpha
// spending over the rounds from forks.min to max), so the error rates hold
// across the repeated looks, with the same steady-state and minimum-forks
// rules as Evaluate. o carries the seed and version. The sequential rounds
// of a run (pipeline.DecideByClaims) stop a cell once no pending check
// reads it (DependsOn).
func Pending(m *experiments.Manifest, trials []record.Trial, series []record.Sample, o stats.Options) []stats.Check {
	r := read(m, GroupTrials(trials), series)
	var out []stats.Check
	for _, c := range m.Claims {
		sc := claimCells(m, c, r.Cells(c.Check.Metric))
		co := o
		co.Sequential = stats.TrialLooks(replicates(sc), m.Forks.Min, m.Forks.Max)
		v := stats.EvaluateWith(c.ID, c.Says, c.Check, sc, co)
		r.steadyRule(&v, m, c)
		capByForks(&v, c.Check, sc) // no decision below stats.MinReplicates forks
		if !stats.Decided(v) {
			out = append(out, c.Check)
		}
	}
	return out
}

// claimGroup is the request group a claim reads.
func claimGroup(m *experiments.Manifest, c experiments.Claim) string {
	if c.Check.Group != "" {
		return c.Check.Group
	}
	return m.Load.Measure
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

// toRecord is the on-disk shape of a verdict: method, deciding point and
// every unit kept; undefined numbers absent or null, never 0.
func toRecord(v stats.Verdict) record.Verdict {
	rv := record.Verdict{ID: v.ID, Says: v.Says, Status: v.Status, Reason: v.Reason, Leans: v.Leans,
		Evidence: v.Evidence, Point: v.Point, Ratio: record.Finite(v.Ratio), Low: record.Finite(v.Low),
		High: record.Finite(v.High), P: record.Finite(v.P), Method: v.Method, Flags: v.Flags,
		Open: v.Open, Look: v.Look, MaxLooks: v.MaxLooks, Level: v.Level, Version: v.Version,
		Direction: v.Direction, DirectionP: record.Finite(v.DirectionP), DirectionText: v.DirectionText, Outcome: v.Outcome}
	for _, p := range v.Points {
		rv.Points = append(rv.Points, record.Point{Point: p.Point, Ratio: record.Num(p.Ratio), Low: record.Num(p.Low),
			High: record.Num(p.High), P: record.Num(p.P), PAdj: record.Num(p.PAdj), Status: p.Status, Reason: p.Reason})
	}
	return rv
}

// notRecorded is the verdict of a claim on a metric whose column the
// run's trials.csv does not have: a run recorded before threadlab
// measured it (gc_count, peak_hikari_pending, ...) reads the column as 0,
// so testing it would decide the claim on numbers nobody measured.
// Inconclusive, leaning nowhere, and closed: more forks of this run's
// design would not record the column either.
func notRecorded(c experiments.Claim, column string, o stats.Options) stats.Verdict {
	why := fmt.Sprintf("this run's %s has no %s column: it was recorded before threadlab measured %s, "+
		"and reading the missing column as 0 would decide the claim on numbers never measured (rerun the experiment to decide it)",
		record.TrialsFile, column, c.Check.Metric)
	v := stats.EvaluateWith(c.ID, c.Says, c.Check, nil, o) // the level, version and undefined numbers of a verdict without data
	v.Status, v.Reason, v.Leans, v.Open = stats.Inconclusive, why, "", false
	v.Evidence, v.Points, v.Flags = []string{why}, nil, nil
	return v
}

// unrecorded reports the trials.csv column of a metric when the run's
// header lacks it; never when the header is unknown (Columns nil). A
// metric's name is its column (measure/metric).
func (h Host) unrecorded(name string) (column string, missing bool) {
	if h.Columns == nil || name == "" {
		return "", false
	}
	return name, !slices.Contains(h.Columns, name)
}

// TrialColumns reads the header of a run's trials.csv (record.ReadHeader):
// the columns the threadlab that recorded the run wrote. Claims on a
// column it lacks are inconclusive (notRecorded) instead of decided on
// zeros. nil without error when the file is absent or empty.
func TrialColumns(dir string) ([]string, error) {
	return record.ReadHeader(dir, record.TrialsFile)
}
