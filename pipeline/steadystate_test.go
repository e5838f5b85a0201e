package pipeline

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/record"
)

// TestSteadyLine: the console line of a cell that is not all flat names
// each class, the iterations left out, the excluded fork and the forks too
// short to classify; a cold cell says nothing.
func TestSteadyLine(t *testing.T) {
	// verdicts.Steady's record of four forks: flat, warm-up (4 iterations
	// left out), too short to classify, and one that never settled.
	c := record.SteadyCell{Variant: "v", Group: "main", Consistency: "bad inconsistent", Excluded: 16,
		Counts:        map[string]int{"flat": 1, "warmup": 1, "no steady state": 1},
		ExcludedForks: []int{4}, SteadyForks: 3,
		Forks: []record.SteadyFork{{Fork: 1, Class: "flat"}, {Fork: 2, Class: "warmup"}, {Fork: 3, Basis: "too few points"},
			{Fork: 4, Class: "no steady state", Dropped: true}}}
	line := steadyLine(c)
	for _, want := range []string{"v: forks 1 flat, 1 warmup, 1 no steady state (bad inconsistent)", "16 iteration(s) excluded",
		"fork 4 never reached a steady state and is excluded (3 steady fork(s) left)", "1 fork(s) with fewer than 10 points"} {
		if !strings.Contains(line, want) {
			t.Errorf("summary line %q lacks %q", line, want)
		}
	}
	c.Cold = true
	if got := steadyLine(c); got != "" {
		t.Errorf("a cold cell has nothing to say about steady state: %q", got)
	}
}

func TestSteadyLinesSkipsFlat(t *testing.T) {
	dir := t.TempDir()
	st := record.Steady{Metric: "rps", Cells: []record.SteadyCell{
		{Variant: "a", Group: "main", Counts: map[string]int{"flat": 3}, Consistency: "flat"},
		{Variant: "b", Group: "main", Counts: map[string]int{"flat": 2, "slowdown": 1}, Consistency: "bad inconsistent", Excluded: 2},
	}}
	if err := record.WriteJSON(dir, record.SteadyFile, st); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := steadyLines(&b, dir, record.Meta{Measured: "main"}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "a:") || !strings.Contains(out, "b: forks 2 flat, 1 slowdown (bad inconsistent)") {
		t.Errorf("summary:\n%s\nwant a line for b only", out)
	}
}

// TestAggregateFlagsUnsettled runs the aggregate stage on a trials.csv
// with one fork still climbing: it is excluded, the primary metric's
// summary row carries the unsettled flag and steady.json names the fork.
func TestAggregateFlagsUnsettled(t *testing.T) {
	dir := t.TempDir()
	var ts []record.Trial
	fork := func(id int, rps ...float64) {
		for i, x := range rps {
			ts = append(ts, record.Trial{Variant: "v", Group: "main", Trial: len(ts) + 1, Seq: len(ts) + 1, Valid: true, Fork: id, Iteration: i + 1, RPS: x})
		}
	}
	fork(1, 990, 1000, 1010, 995, 1005, 990, 1000, 1010, 995, 1005)               // flat at 1000 (±1%)
	fork(2, 495, 500, 505, 497.5, 502.5, 495, 500, 505, 497.5, 502.5, 1000, 1000) // still climbing when it ended
	if err := record.WriteCSV(dir, record.TrialsFile, ts); err != nil {
		t.Fatal(err)
	}
	m := &experiments.Manifest{Variants: experiments.Variants{{Name: "v"}},
		Load: experiments.LoadSpec{Measure: "main"}}
	s := &State{M: m, Dir: dir, Meta: record.Meta{Groups: []string{"main"}}, Opt: Options{Log: io.Discard}}
	if m.Primary() != "rps" {
		t.Fatalf("primary metric %s, want rps for a manifest without a burst group", m.Primary())
	}
	if err := (Aggregate{}).Run(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	rows, err := record.ReadCSV[record.Summary](dir, record.SummaryFile)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rows {
		if r.Metric == "rps" {
			found = true
			if !strings.Contains(r.Flags, FlagUnsettled) || r.N != 1 {
				t.Errorf("rps: n %d, flags %q; want n 1 (fork 2 excluded) and %s", r.N, r.Flags, FlagUnsettled)
			}
		} else if strings.Contains(r.Flags, FlagUnsettled) {
			t.Errorf("%s flagged %s: only the primary metric is classified", r.Metric, FlagUnsettled)
		}
	}
	if !found {
		t.Fatal("no rps row in summary.csv")
	}
	st, ok, err := record.ReadSteady(dir)
	if err != nil || !ok || len(st.Cells) != 1 || len(st.Cells[0].ExcludedForks) != 1 || st.Cells[0].Forks[1].Class != "no steady state" || st.Rule == "" {
		t.Errorf("steady.json %+v (ok %v, err %v), want one cell with fork 2 excluded and the rule named", st, ok, err)
	}
}
