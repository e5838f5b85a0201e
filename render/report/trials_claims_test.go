package report

import (
	"slices"
	"testing"

	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// TestClaimColumns: the trials table adds a column for each metric a claim
// judges that the default columns do not show, once, in the claims' order.
func TestClaimColumns(t *testing.T) {
	shown := []string{"rps", "p99_ms", "errors"}
	checks := map[string]*stats.Check{
		"err":     {Metric: "error_pct"},
		"err2":    {Metric: "error_pct"},
		"tail":    {Metric: "p99_ms"},
		"gc":      {Metric: "gc_count"},
		"unknown": {Metric: "no_such_metric"},
	}
	rows := []struct {
		why      string
		recorded []string
		want     []string
	}{
		{"no claims: the defaults only", nil, nil},
		{"a claim on a shown metric adds nothing", []string{"tail"}, nil},
		{"a claim on error_pct adds its column", []string{"err"}, []string{"error_pct"}},
		{"two claims on one metric add one column", []string{"err", "err2"}, []string{"error_pct"}},
		{"columns follow the claims' order", []string{"gc", "tail", "err"}, []string{"gc_count", "error_pct"}},
		{"a metric the registry does not know is left out", []string{"unknown", "gc"}, []string{"gc_count"}},
		{"a verdict without a check (manifest changed since) adds nothing", []string{"gone"}, nil},
	}
	for _, r := range rows {
		var rec []record.Verdict
		for _, id := range r.recorded {
			rec = append(rec, record.Verdict{ID: id})
		}
		if got := claimColumns(rec, checks, shown); !slices.Equal(got, r.want) {
			t.Errorf("%s: %q, want %q", r.why, got, r.want)
		}
	}
}

// TestTrialsTableClaimColumn: a trial's error_pct shows in the table when a
// claim judges it.
func TestTrialsTableClaimColumn(t *testing.T) {
	v := &runView{
		run:      &record.Run{Trials: []record.Trial{{Seq: 1, Variant: "a", Group: "main", Valid: true, Requests: 200, Errors: 5, ErrorPct: 2.5}}},
		layout:   layout{Variants: []string{"a"}, Points: []string{""}, Groups: []string{"main"}, Measured: "main", Primary: "wall_ms"},
		recorded: []record.Verdict{{ID: "err"}},
		checks:   map[string]*stats.Check{"err": {Metric: "error_pct"}},
	}
	v.trials()
	col := slices.Index(v.TrialCols, "error_pct")
	if col < 0 {
		t.Fatalf("no error_pct column in %q", v.TrialCols)
	}
	if got := v.Trials[0].Cells[col]; got != num(2.5) {
		t.Errorf("error_pct cell %q, want %q", got, num(2.5))
	}
	if last := v.TrialCols[len(v.TrialCols)-1]; last != "reason" {
		t.Errorf("last column %q, want reason", last)
	}
}
