package replicate

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/store/record"
)

// plan is a manifest of two variants at two sweep points (four cells),
// with the given replication lines.
func plan(t *testing.T, replication string) *experiments.Manifest {
	t.Helper()
	m, err := experiments.Parse("r.yaml", []byte(`name: r
title: Replication
question: Does the policy replicate as told?
variants:
  a: {command: [x, "{port}"], ready: /health}
  b: {command: [x, "{port}"], ready: /health}
sweep:
  users: {load: users, values: [1, 2]}
load:
  model: closed
  users: 1
  duration: 1s
  requests: [{path: /}]
`+replication), "")
	if err != nil && (m == nil || !experiments.HostOnly(err)) {
		t.Fatal(err)
	}
	return m
}

func keys(jobs []Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Key())
	}
	return out
}

func TestScheduleInterleavedIsSeeded(t *testing.T) {
	m := plan(t, "forks: 3\n")
	a, b := Schedule(m, 7), Schedule(m, 7)
	if !slices.Equal(keys(a), keys(b)) {
		t.Fatalf("same seed, different order:\n%s\n%s", keys(a), keys(b))
	}
	if len(a) != 12 {
		t.Fatalf("%d jobs, want 4 cells x 3 forks = 12", len(a))
	}
	for i, j := range a {
		if j.Fork != i/4+1 {
			t.Errorf("job %d (%s) is fork %d, want round %d: interleaved runs fork k of every cell before fork k+1", i, j.Key(), j.Fork, i/4+1)
		}
	}
	m.Order = "sequential"
	seq := Schedule(m, 7)
	if seq[0].Fork != 1 || seq[1].Fork != 2 || seq[0].Cell.Variant.Name != seq[1].Cell.Variant.Name {
		t.Errorf("sequential order should run a cell's trials in a row: %s, %s", seq[0].Key(), seq[1].Key())
	}
}

// TestCellSeedsFromDisk: a resumed run continues a cell's numbering and
// retry budget from its trials.csv rows, counting only the measured
// group's rows of that cell, and counting what Spend took: one for a
// replacement fork, whose every row carries the retry flag, and one for
// each window re-run past a fork's planned iterations.
func TestCellSeedsFromDisk(t *testing.T) {
	m := plan(t, "forks: 3\niterations: 2\nretries: 4\n")
	id := CellID{Variant: "a", Point: "users=1"}
	main := m.Load.Measure
	rows := []record.Trial{
		{Variant: "a", Point: "users=1", Group: main, Trial: 1, Fork: 1, Iteration: 1, Valid: true},
		{Variant: "a", Point: "users=1", Group: main, Trial: 2, Fork: 1, Iteration: 2, Valid: false, Reason: "host noise"},
		{Variant: "a", Point: "users=1", Group: main, Trial: 3, Fork: 1, Iteration: 3, Valid: true, Retry: true}, // a re-run window: one
		{Variant: "a", Point: "users=1", Group: main, Trial: 4, Fork: 2, Valid: false, Reason: "target failed to start"},
		{Variant: "a", Point: "users=1", Group: main, Trial: 5, Fork: 4, Iteration: 1, Valid: true, Retry: true}, // a replacement fork: one,
		{Variant: "a", Point: "users=1", Group: main, Trial: 6, Fork: 4, Iteration: 2, Valid: true, Retry: true}, // not one a window
		{Variant: "a", Point: "users=1", Group: "other", Trial: 9, Fork: 9, Valid: true},                         // another group: not counted
		{Variant: "b", Point: "users=1", Group: main, Trial: 7, Fork: 7, Valid: true},                            // another cell
	}
	p := New(nil)
	c := p.Cell(m, id, rows)
	// forks 1, 2 and 4 ran (3 runs); 1 and 4 have a valid iteration (2
	// forks); 2 retries taken; the last trial is 6 and the next replacement
	// fork is 5.
	want := Tally{Forks: 2, Runs: 3, Retries: 2, Trial: 6, NextFork: 5}
	if *c != want {
		t.Errorf("tally %+v, want %+v", *c, want)
	}
	if again := p.Cell(m, id, nil); again != c {
		t.Error("a second look at the cell made new counters; want the same tally")
	}
	for range 2 {
		if !p.Spend(m, c) {
			t.Fatalf("spend with %d of 4 retries used: want true", c.Retries-1)
		}
	}
	if p.Spend(m, c) || c.Spent != "retry budget (4) spent" {
		t.Errorf("spend past the budget: want false and why, got %q", c.Spent)
	}
}

// TestWantedAndStops: forks up to min always run; past min one look per
// round decides, and each cell's stop says why.
func TestWantedAndStops(t *testing.T) {
	m := plan(t, "forks: {min: 2, max: 4}\nretries: 1\n")
	var logged []string
	p := New(func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) })
	looks := 0
	decide := func(look, maxLooks int) (map[CellID]bool, error) {
		looks++
		if maxLooks != 4 {
			t.Errorf("maxLooks %d, want forks.max 4", maxLooks)
		}
		return map[CellID]bool{{Variant: "a", Point: "users=1"}: true}, nil
	}
	cells := Cells(m)
	for _, c := range cells {
		ok, err := p.Wanted(m, Job{Cell: c, Fork: 2}, decide)
		if err != nil || !ok {
			t.Fatalf("fork 2 of %s (forks.min 2): wanted %v, %v; want true without a look", c.ID(), ok, err)
		}
	}
	if looks != 0 {
		t.Fatalf("%d looks before forks.min was passed, want 0", looks)
	}
	for _, c := range cells {
		p.Cell(m, c.ID(), nil).Forks = 2
		ok, err := p.Wanted(m, Job{Cell: c, Fork: 3}, decide)
		if err != nil {
			t.Fatal(err)
		}
		if want := c.ID() != (CellID{Variant: "a", Point: "users=1"}); ok != want {
			t.Errorf("fork 3 of %s: wanted %v, want %v", c.ID(), ok, want)
		}
	}
	if looks != 1 {
		t.Errorf("%d looks in round 3, want 1 (one look per interleaved round)", looks)
	}
	p.Stop(CellID{Variant: "b", Point: "users=2"}, "variant skipped: no JDK")
	short := p.Cell(m, CellID{Variant: "a", Point: "users=2"}, nil)
	short.Forks, short.Spent = 1, "retry budget (1) spent"
	long := p.Cell(m, CellID{Variant: "b", Point: "users=1"}, nil)
	long.Forks = 4
	got := map[string]string{}
	for _, st := range p.Stops(m) {
		got[st.Variant+" "+st.Point] = st.Reason
		if st.Planned != 2 || st.Max != 4 {
			t.Errorf("%s %s: planned %d max %d, want 2 and 4", st.Variant, st.Point, st.Planned, st.Max)
		}
	}
	want := map[string]string{
		"a users=1": "decided at n=2",
		"a users=2": "retry budget (1) spent: 1 of 2 forks valid",
		"b users=1": "max reached",
		"b users=2": "variant skipped: no JDK",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("cell %s stopped with %q, want %q", k, got[k], w)
		}
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "a users=1") || !strings.Contains(logged[0], "decided at n=2") {
		t.Errorf("log %q, want one line naming the decided cell", logged)
	}
}
