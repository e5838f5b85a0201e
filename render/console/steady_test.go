package console

import (
	"bytes"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
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
	line := SteadyLine(c)
	for _, want := range []string{"v: forks 1 flat, 1 warmup, 1 no steady state (bad inconsistent)", "16 iteration(s) excluded",
		"fork 4 never reached a steady state and is excluded (3 steady fork(s) left)", "1 fork(s) with fewer than 10 points"} {
		if !strings.Contains(line, want) {
			t.Errorf("summary line %q lacks %q", line, want)
		}
	}
	c.Cold = true
	if got := SteadyLine(c); got != "" {
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
