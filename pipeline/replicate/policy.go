package replicate

import (
	"fmt"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/judge/verdicts"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// Policy is the run's bookkeeping of forks x iterations: retries spent per
// cell, which cells stopped early and why. The orchestrator keeps one per
// run and writes Stops to run.json (cells). Its methods take the manifest
// as run: a resumed run reads it back from the run directory after the
// policy exists.
type Policy struct {
	logf    func(format string, a ...any)
	cells   map[CellID]*Tally
	stopped map[CellID]string // cells a sequential design stopped, with why
	// decided caches the last look at the claims until another fork ends.
	decided     map[CellID]bool
	decidedLook int
	forksDone   int // forks finished in this process: invalidates decided
	decidedAt   int
}

// Tally counts one cell's forks, runs and retries; the trials stage
// updates it as forks start and end.
type Tally struct {
	Forks    int    // forks with at least one valid iteration
	Runs     int    // target processes started
	Retries  int    // re-runs spent from the budget
	Trial    int    // last trial number used in trials.csv
	NextFork int    // id for a replacement fork
	Spent    string // why the retry budget ran out, "" while it lasts
	Short    int    // forks that ended with fewer valid iterations than planned
}

// New is an empty policy; logf (nil for none) gets a line when a cell
// stops early.
func New(logf func(format string, a ...any)) *Policy {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Policy{logf: logf, cells: map[CellID]*Tally{}, stopped: map[CellID]string{}}
}

// Cell returns a cell's counters, seeded from trials.csv rows on first use
// so that a resumed run continues its numbering and its retry budget.
func (p *Policy) Cell(m *experiments.Manifest, id CellID, rows []record.Trial) *Tally {
	c := p.cells[id]
	if c != nil {
		return c
	}
	c = &Tally{NextFork: m.Forks.Max + 1}
	forks := map[int]bool{}
	valid := map[int]bool{}
	for _, t := range rows {
		if t.Variant != id.Variant || t.Point != id.Point || t.Group != m.Load.Measure {
			continue
		}
		c.Trial = max(c.Trial, t.Trial)
		c.NextFork = max(c.NextFork, t.Fork+1)
		forks[t.Fork] = true
		if t.Valid {
			valid[t.Fork] = true
		}
		// What Spend took: one for each window past the planned
		// iterations (a re-run of an invalid one). Every row of a
		// replacement fork carries the retry flag, yet the fork took one.
		if t.Retry && t.Iteration > m.Iterations {
			c.Retries++
		}
	}
	for f := range forks {
		if f > m.Forks.Max { // a replacement fork (NextFork starts past forks.max)
			c.Retries++
		}
	}
	c.Runs, c.Forks = len(forks), len(valid)
	p.cells[id] = c
	return c
}

// Spend takes one re-run from a cell's budget; false when none is left.
func (p *Policy) Spend(m *experiments.Manifest, c *Tally) bool {
	if c.Retries >= *m.Retries {
		c.Spent = fmt.Sprintf("retry budget (%d) spent", *m.Retries)
		return false
	}
	c.Retries++
	return true
}

// Stop takes a cell out of the run, saying why (a skipped variant): no
// fork of it runs, and Stops gives the reason.
func (p *Policy) Stop(id CellID, why string) { p.stopped[id] = why }

// Stopped is why a cell was stopped, "" when it was not.
func (p *Policy) Stopped(id CellID) string { return p.stopped[id] }

// ForkDone counts a fork that ended in this process: the next look at the
// claims of a sequential order is taken on its data.
func (p *Policy) ForkDone() { p.forksDone++ }

// Decide looks at the data on disk after a fork has ended and returns the
// cells no undecided claim needs any more. look is the fork (round) about
// to run and maxLooks the most a cell may get, for a group-sequential
// boundary (Pocock, alpha spending) to take the place of a fixed alpha.
type Decide func(look, maxLooks int) (map[CellID]bool, error)

// ByClaims is the default Decide of the run in dir: every claim is
// evaluated on the valid trials so far as look k of a group-sequential
// design, with the rules of the claims stage (verdicts.Pending), and a cell
// is decided when no claim still pending reads it. Without claims nothing
// is ever decided, so a sequential design runs to its max.
func ByClaims(dir string, m *experiments.Manifest, o stats.Options) Decide {
	return func(look, maxLooks int) (map[CellID]bool, error) {
		trials, err := record.ReadCSV[record.Trial](dir, record.TrialsFile)
		if err != nil {
			return nil, err
		}
		decided := map[CellID]bool{}
		for _, c := range Cells(m) {
			decided[c.ID()] = len(m.Claims) > 0
		}
		series, err := record.ReadCSV[record.Sample](dir, record.SeriesFile)
		if err != nil {
			return nil, err
		}
		for _, k := range verdicts.Pending(m, trials, series, o) {
			for _, cell := range Cells(m) {
				if verdicts.DependsOn(k, cell.Variant.Name, cell.Point) {
					decided[cell.ID()] = false
				}
			}
		}
		return decided, nil
	}
}

// Wanted tells whether job j should run: every fork up to forks.min does;
// one past it only while a claim that reads its cell is undecided, as
// decide says.
func (p *Policy) Wanted(m *experiments.Manifest, j Job, decide Decide) (bool, error) {
	id := j.Cell.ID()
	if _, ok := p.stopped[id]; ok {
		return false, nil
	}
	f := m.Forks
	if j.Fork <= f.Min || !f.Sequential() {
		return true, nil
	}
	// Interleaved: one look per round, on the data of the rounds before it,
	// so every cell of a round is judged on the same data. Sequential order
	// runs a cell's forks in a row: look again after each fork.
	stale := p.decided == nil || p.decidedLook != j.Fork || (m.Order == "sequential" && p.decidedAt != p.forksDone)
	if stale {
		d, err := decide(j.Fork, f.Max)
		if err != nil {
			return false, fmt.Errorf("sequential rounds: look at the claims before fork %d: %w", j.Fork, err)
		}
		p.decided, p.decidedAt, p.decidedLook = d, p.forksDone, j.Fork
	}
	if p.decided[id] {
		c := p.Cell(m, id, nil)
		p.stopped[id] = fmt.Sprintf("decided at n=%d", c.Forks)
		p.logf("%s: every claim that reads it is decided at n=%d; no more forks", id, c.Forks)
		return false, nil
	}
	return true, nil
}

// Stops lists where every cell stopped and why, for run.json.
func (p *Policy) Stops(m *experiments.Manifest) []record.CellStop {
	var out []record.CellStop
	for _, cell := range Cells(m) {
		id := cell.ID()
		c := p.cells[id]
		if c == nil {
			c = &Tally{}
		}
		st := record.CellStop{Variant: id.Variant, Point: id.Point, Planned: m.Forks.Min, Max: m.Forks.Max,
			Forks: c.Forks, Runs: c.Runs, Retries: c.Retries}
		switch {
		case p.stopped[id] != "":
			st.Reason = p.stopped[id]
		case c.Forks < m.Forks.Min && c.Spent != "":
			st.Reason = fmt.Sprintf("%s: %d of %d forks valid", c.Spent, c.Forks, m.Forks.Min)
		case c.Forks < m.Forks.Min:
			st.Reason = fmt.Sprintf("%d of %d forks valid (the run ended early)", c.Forks, m.Forks.Min)
		case m.Forks.Sequential() && c.Forks >= m.Forks.Max:
			st.Reason = "max reached"
		default:
			st.Reason = "planned n reached"
		}
		if c.Short > 0 {
			st.Reason += fmt.Sprintf(" (%d fork(s) with fewer valid iterations than planned: %s)", c.Short, c.Spent)
		}
		out = append(out, st)
	}
	return out
}
