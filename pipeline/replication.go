package pipeline

import (
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/record"
	"github.com/threadlab/threadlab/pipeline/stats"
	"github.com/threadlab/threadlab/pipeline/verdicts"
)

// replication is the run's bookkeeping of forks x iterations: retries
// spent per cell, which cells stopped early and why, and where the wall
// time went. It lives in State and is written to run.json (cells, time).
type replication struct {
	cells   map[CellID]*cellState
	stopped map[CellID]string // cells a sequential design stopped, with why
	// decided caches the last look at the claims until another fork ends.
	decided     map[CellID]bool
	decidedLook int
	forksDone   int // forks finished in this process: invalidates decided
	decidedAt   int
	// groups are the process groups of services threadlab started (the
	// PostgreSQL cluster): their CPU is the experiment's, not host noise.
	groups []int
	// before holds the wall-clock buckets as the trials stage began, so a
	// resumed run's earlier seconds are not booked twice.
	before map[string]float64
}

// cellState counts one cell's forks, runs and retries.
type cellState struct {
	forks    int // forks with at least one valid iteration
	runs     int // target processes started
	retries  int // re-runs spent from the budget
	trial    int // last trial number used in trials.csv
	nextFork int // id for a replacement fork
	spent    string
	short    int // forks that ended with fewer valid iterations than planned
}

func newReplication() *replication {
	return &replication{cells: map[CellID]*cellState{}, stopped: map[CellID]string{}}
}

// cell returns a cell's counters, seeded from trials.csv rows on first use
// so that a resumed run continues its numbering and its retry budget.
func (r *replication) cell(s *State, id CellID, rows []record.Trial) *cellState {
	c := r.cells[id]
	if c != nil {
		return c
	}
	c = &cellState{nextFork: s.M.Forks.Max + 1}
	forks := map[int]bool{}
	valid := map[int]bool{}
	for _, t := range rows {
		if t.Variant != id.Variant || t.Point != id.Point || t.Group != s.M.Load.Measure {
			continue
		}
		c.trial = max(c.trial, t.Trial)
		c.nextFork = max(c.nextFork, t.Fork+1)
		forks[t.Fork] = true
		if t.Valid {
			valid[t.Fork] = true
		}
		if t.Retry {
			c.retries++
		}
	}
	c.runs, c.forks = len(forks), len(valid)
	r.cells[id] = c
	return c
}

// spend takes one re-run from a cell's budget; false when none is left.
func (r *replication) spend(s *State, c *cellState) bool {
	if c.retries >= *s.M.Retries {
		c.spent = fmt.Sprintf("retry budget (%d) spent", *s.M.Retries)
		return false
	}
	c.retries++
	return true
}

// Decide looks at the data on disk after a fork has ended and returns the
// cells no undecided claim needs any more. look is the fork (round) about
// to run and maxLooks the most a cell may get, for a group-sequential
// boundary (Pocock, alpha spending) to take the place of a fixed alpha.
type Decide func(s *State, look, maxLooks int) (map[CellID]bool, error)

// DecideByClaims is the default Decide: every claim is evaluated on the
// valid trials so far as look k of a group-sequential design, with the
// rules of the claims stage (verdicts.Pending), and a cell is decided when
// no claim still pending reads it. Without claims nothing is ever decided,
// so a sequential design runs to its max.
func DecideByClaims(s *State, look, maxLooks int) (map[CellID]bool, error) {
	trials, err := record.ReadCSV[record.Trial](s.Dir, record.TrialsFile)
	if err != nil {
		return nil, err
	}
	decided := map[CellID]bool{}
	for _, c := range Cells(s.M) {
		decided[c.ID()] = len(s.M.Claims) > 0
	}
	series, err := record.ReadCSV[record.Sample](s.Dir, record.SeriesFile)
	if err != nil {
		return nil, err
	}
	for _, k := range verdicts.Pending(s.M, trials, series, stats.Options{Seed: s.M.Seed, Version: Version()}) {
		for _, cell := range Cells(s.M) {
			if verdicts.DependsOn(k, cell.Variant.Name, cell.Point) {
				decided[cell.ID()] = false
			}
		}
	}
	return decided, nil
}

// wanted tells whether job j should run: every fork up to forks.min does;
// one past it only while a claim that reads its cell is undecided.
func (r *replication) wanted(s *State, t Trials, j Job) (bool, error) {
	id := j.Cell.ID()
	if _, ok := r.stopped[id]; ok {
		return false, nil
	}
	f := s.M.Forks
	if j.Fork <= f.Min || !f.Sequential() {
		return true, nil
	}
	// Interleaved: one look per round, on the data of the rounds before it,
	// so every cell of a round is judged on the same data. Sequential order
	// runs a cell's forks in a row: look again after each fork.
	stale := r.decided == nil || r.decidedLook != j.Fork || (s.M.Order == "sequential" && r.decidedAt != r.forksDone)
	if stale {
		decide := t.Decide
		if decide == nil {
			decide = DecideByClaims
		}
		d, err := decide(s, j.Fork, f.Max)
		if err != nil {
			return false, fmt.Errorf("sequential rounds: look at the claims before fork %d: %w", j.Fork, err)
		}
		r.decided, r.decidedAt, r.decidedLook = d, r.forksDone, j.Fork
	}
	if r.decided[id] {
		c := r.cell(s, id, nil)
		r.stopped[id] = fmt.Sprintf("decided at n=%d", c.forks)
		s.Logf("%s: every claim that reads it is decided at n=%d; no more forks", id, c.forks)
		return false, nil
	}
	return true, nil
}

// stops lists where every cell stopped and why, for run.json.
func (r *replication) stops(s *State) []record.CellStop {
	var out []record.CellStop
	for _, cell := range Cells(s.M) {
		id := cell.ID()
		c := r.cells[id]
		if c == nil {
			c = &cellState{}
		}
		st := record.CellStop{Variant: id.Variant, Point: id.Point, Planned: s.M.Forks.Min, Max: s.M.Forks.Max,
			Forks: c.forks, Runs: c.runs, Retries: c.retries}
		switch {
		case r.stopped[id] != "":
			st.Reason = r.stopped[id]
		case c.forks < s.M.Forks.Min && c.spent != "":
			st.Reason = fmt.Sprintf("%s: %d of %d forks valid", c.spent, c.forks, s.M.Forks.Min)
		case c.forks < s.M.Forks.Min:
			st.Reason = fmt.Sprintf("%d of %d forks valid (the run ended early)", c.forks, s.M.Forks.Min)
		case s.M.Forks.Sequential() && c.forks >= s.M.Forks.Max:
			st.Reason = "max reached"
		default:
			st.Reason = "planned n reached"
		}
		if c.short > 0 {
			st.Reason += fmt.Sprintf(" (%d fork(s) with fewer valid iterations than planned: %s)", c.short, c.spent)
		}
		out = append(out, st)
	}
	return out
}

// serviceGroup records the process group of a service from its pid file
// (PostgreSQL's postmaster.pid: the pid on the first line leads its
// group, since pg_ctl starts the server in a new session) and returns it,
// 0 when it cannot be read.
func (r *replication) serviceGroup(pidFile string) int {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if pid, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && pid > 0 {
		if g, err := syscall.Getpgid(pid); err == nil {
			r.groups = append(r.groups, g)
			return g
		}
	}
	return 0
}

// Wall-clock buckets of run.json's time.stages_s (record owns the names).
const (
	tSetup     = record.StageSetup
	tBuild     = record.StageBuild
	tStarts    = record.StageStarts
	tWarmups   = record.StageWarmups
	tCoolDowns = record.StageCoolDowns
	tMeasure   = record.StageMeasure
	tStops     = record.StageStops
	tFinishing = record.StageFinishing
	tOther     = record.StageOther
)

// spent adds d to a bucket of the wall clock (the trials stage splits its
// own time this way; stageDone books the rest of it as other).
func (r *replication) spent(s *State, bucket string, d time.Duration) {
	w := s.clock()
	w.Stages[bucket] += d.Seconds()
	if bucket == tMeasure {
		w.Measured += d.Seconds()
	}
}

func (s *State) clock() *record.WallClock {
	if s.Meta.Time == nil {
		s.Meta.Time = &record.WallClock{}
	}
	if s.Meta.Time.Stages == nil {
		s.Meta.Time.Stages = map[string]float64{}
	}
	return s.Meta.Time
}

// stageDone books a stage's wall time. The trials stage books its parts
// as it goes; the part of it not booked is "other".
func (r *replication) stageDone(s *State, st Stage, d time.Duration) {
	if r == nil {
		return
	}
	w := s.clock()
	w.Wall += d.Seconds()
	switch st.(type) {
	case Build:
		w.Stages[tBuild] += d.Seconds()
	case Trials:
		booked := 0.0
		for _, b := range []string{tStarts, tWarmups, tCoolDowns, tMeasure, tStops} {
			booked += w.Stages[b] - r.bookedBefore(b)
		}
		w.Stages[tOther] += max(0, d.Seconds()-booked)
	case Aggregate, Claims, Report:
		w.Stages[tFinishing] += d.Seconds()
	default:
		w.Stages[tSetup] += d.Seconds()
	}
	r.snapshot(w)
	for k, v := range w.Stages {
		w.Stages[k] = round3(v)
	}
	w.Wall, w.Measured = round3(w.Wall), round3(w.Measured)
}

func (r *replication) bookedBefore(b string) float64 { return r.before[b] }

func (r *replication) snapshot(w *record.WallClock) { r.before = maps.Clone(w.Stages) }

func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }

// forksText is how run.json states the fork plan.
func forksText(m *experiments.Manifest) string { return m.Forks.String() }
