package report

import (
	"math"
	"slices"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// TestTrialsTableSpoiled: the trials table shows "–" where a trial has no
// measurement, as the claims read it (metric.Measured), not the 0 or NaN
// stored in trials.csv.
func TestTrialsTableSpoiled(t *testing.T) {
	rows := []struct {
		why   string
		trial record.Trial
		want  string // the target CPU cell
	}{
		{"a measured value is printed", record.Trial{Seq: 1, Variant: "a", Group: "main", Valid: true, TargetCPUPct: 87.5}, num(87.5)},
		{"a lost pid leaves target CPU at 0, which is no measurement", record.Trial{Seq: 2, Variant: "a", Group: "main", Valid: true, Flags: "pid_gone"}, "–"},
		{"a flag among others still spoils the column", record.Trial{Seq: 3, Variant: "a", Group: "main", Valid: true, Flags: "scrape_failed;pid_reused", TargetCPUPct: 3}, "–"},
		{"a flag that does not touch the column leaves it alone", record.Trial{Seq: 4, Variant: "a", Group: "main", Valid: true, Flags: "scrape_failed", TargetCPUPct: 12}, num(12)},
		{"a NaN is no measurement either", record.Trial{Seq: 5, Variant: "a", Group: "main", Valid: true, TargetCPUPct: math.NaN()}, "–"},
	}
	var ts []record.Trial
	for _, r := range rows {
		ts = append(ts, r.trial)
	}
	v := &runView{run: &record.Run{Trials: ts}, layout: layout{Variants: []string{"a"}, Points: []string{""}, Groups: []string{"main"}, Measured: "main", Primary: "wall_ms"}}
	v.trials()
	col := slices.Index(v.TrialCols, "target CPU (% of one core)")
	if col < 0 {
		t.Fatalf("no target CPU column in %q", v.TrialCols)
	}
	if len(v.Trials) != len(rows) {
		t.Fatalf("%d rows for %d trials", len(v.Trials), len(rows))
	}
	for i, r := range rows {
		if got := v.Trials[i].Cells[col]; got != r.want {
			t.Errorf("%s: cell %q, want %q", r.why, got, r.want)
		}
	}
}
