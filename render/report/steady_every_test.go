package report

import (
	"strings"
	"testing"

	"github.com/threadlab/threadlab/judge/verdicts"
	"github.com/threadlab/threadlab/store/record"
)

// TestSteadyEvery: the steady-state section names the counts that read
// every iteration (per-metric selection), only those this run summarised,
// and the warm-up rule the run's steady.json recorded.
func TestSteadyEvery(t *testing.T) {
	old := "selection; warm-up until steady: last 4 rounds fluctuate and no longer improve on the 4 before"
	tests := []struct {
		why        string
		st         record.Steady
		wantEvery  string
		wantWarmup string
	}{
		{"per-metric run: the summarised counts, in steady.json's order; today's rule",
			record.Steady{Metric: "wall_ms", Rule: verdicts.SteadyRule, EveryIteration: []string{"errors", "asked_rate", "distinct_threads"}},
			"errors, server threads used", verdicts.WarmupClause(verdicts.SteadyRule)},
		{"a run judged before per-metric selection: no sentence; its own warm-up rule",
			record.Steady{Metric: "wall_ms", Rule: old}, "", "last 4 rounds fluctuate and no longer improve on the 4 before"},
		{"steady.json without a rule (before issue 20): the first rule's words",
			record.Steady{Metric: "wall_ms"}, "", "last 4 no longer improve on the 4 before"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		tt.st.Cells = []record.SteadyCell{{Variant: "a", Group: "main", Consistency: "flat"}}
		if err := record.WriteJSON(dir, record.SteadyFile, tt.st); err != nil {
			t.Fatal(err)
		}
		r := &record.Run{Dir: dir, Meta: record.Meta{Measured: "main"}}
		for _, m := range []string{"wall_ms", "errors", "distinct_threads"} {
			r.Summary = append(r.Summary, record.Summary{Variant: "a", Group: "main", Metric: m, N: 5})
		}
		if _, ok, err := record.ReadSteady(dir); err != nil || !ok {
			t.Fatalf("%s: steady.json: ok=%v err=%v", tt.why, ok, err)
		}
		got := (&runView{run: r}).Steady()
		if got == nil {
			t.Fatalf("%s: no steady section", tt.why)
		}
		if got.Every != tt.wantEvery {
			t.Errorf("%s: Every = %q, want %q", tt.why, got.Every, tt.wantEvery)
		}
		if got.Warmup != tt.wantWarmup {
			t.Errorf("%s: Warmup = %q, want %q", tt.why, got.Warmup, tt.wantWarmup)
		}
		if strings.Contains(got.Every, "asked") {
			t.Errorf("%s: names a metric the run did not summarise: %q", tt.why, got.Every)
		}
	}
}
