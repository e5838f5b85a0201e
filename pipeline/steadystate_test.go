package pipeline

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/store/record"
)

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
