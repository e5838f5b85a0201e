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

// TestSteadyOwn: steady.json's own cells (the target's CPU, classified
// again on its own series) get a table of their own, measured group only,
// whose warm-up column says whether the warm-up waited for the CPU.
func TestSteadyOwn(t *testing.T) {
	dir := t.TempDir()
	fork := func(n int, stop string) record.SteadyFork {
		return record.SteadyFork{Fork: n, WarmupRounds: 40 + n, WarmupMs: 1000 * float64(40+n), WarmupStop: stop}
	}
	st := record.Steady{Metric: "wall_ms", Rule: verdicts.SteadyRule,
		Cells: []record.SteadyCell{{Variant: "a", Group: "main", Consistency: "flat", Forks: []record.SteadyFork{fork(1, "steady"), fork(2, "steady")}}},
		Own: []record.SteadyOwn{{Metric: "target_cpu_s", Cells: []record.SteadyCell{
			{Variant: "a", Group: "main", Consistency: "mixed", ExcludedForks: []int{2}, SteadyForks: 1, Excluded: 3,
				Forks: []record.SteadyFork{fork(1, "steady"), fork(2, "max")}},
			{Variant: "b", Group: "main", Consistency: "flat", SteadyForks: 2,
				Forks: []record.SteadyFork{fork(1, verdicts.NotWaited), fork(2, verdicts.NotWaited)}},
			{Variant: "a", Group: "background", Consistency: "flat"},
		}}}}
	if err := record.WriteJSON(dir, record.SteadyFile, st); err != nil {
		t.Fatal(err)
	}
	got := (&runView{run: &record.Run{Dir: dir, Meta: record.Meta{Measured: "main"}}}).Steady()
	if got == nil || len(got.Own) != 1 {
		t.Fatalf("steady view %+v: want one own table", got)
	}
	o := got.Own[0]
	if o.Metric != "target_cpu_s" || o.Rule == "" || len(o.Rows) != 2 {
		t.Fatalf("own table %+v: want target_cpu_s's two cells of the measured group, under today's rule", o)
	}
	a, b := o.Rows[0], o.Rows[1]
	if a.Dropped != "2" || !a.Bad || a.Excluded != 3 || a.WarmupNote != "1 of 2 steady after 41-42 rounds (41.0-42.0 s); 1 reached max" {
		t.Errorf("a: %+v, want fork 2 excluded, 3 iterations left out, one warm-up at max", a)
	}
	if b.WarmupNote != "not waited for: the warm-up stopped on the primary alone after 41-42 rounds (41.0-42.0 s)" {
		t.Errorf("b: warm-up %q, want it to say the warm-up did not wait for the CPU", b.WarmupNote)
	}
	var out strings.Builder
	if err := pages.ExecuteTemplate(&out, "steady", &runView{run: &record.Run{Dir: dir, Meta: record.Meta{Measured: "main"}}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"target CPU time of the trial (CPU-s), on its own series", "not waited for: the warm-up stopped on the primary alone"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the steady section lacks %q", want)
		}
	}
}

// TestSteadyJIT: the steady-state table says how often the JIT was still
// compiling in each cell's valid measured windows, when the run measured it
// (series.csv has jit_ms), and has no such column for a run without it
// (before the column, or a target without the counter), where trials.csv's
// jit_ms reads 0 and would claim "never compiling" untruthfully.
func TestSteadyJIT(t *testing.T) {
	dir := twoFlatCells(t)
	trial := func(v, group string, valid bool, jit float64) record.Trial {
		return record.Trial{Variant: v, Group: group, Valid: valid, JITMs: jit}
	}
	trials := []record.Trial{
		trial("a", "main", true, 12), trial("a", "main", true, 0), trial("a", "main", true, 3), trial("a", "main", true, 0),
		trial("a", "main", false, 500),     // invalid: not a measured window
		trial("a", "background", true, 90), // another group: the server's figure again
		trial("b", "main", true, 0), trial("b", "main", true, 0),
	}
	tests := []struct {
		why      string
		series   []record.Sample
		wantA    string
		wantB    string
		wantHead bool
	}{
		{"measured: 2 of a's 4 valid main windows compiled, 15 ms over 4; b none",
			[]record.Sample{{JITMs: record.Missing()}, {JITMs: 0}}, "2 of 4 windows, 3.75 ms a window", "0 of 2 windows, 0 ms a window", true},
		{"not measured: every second of series.csv lacks jit_ms, no column",
			[]record.Sample{{JITMs: record.Missing()}}, "", "", false},
	}
	for _, tt := range tests {
		r := &record.Run{Dir: dir, Meta: record.Meta{Measured: "main"}, Trials: trials, Series: tt.series}
		got := (&runView{run: r}).Steady()
		if got == nil || len(got.Rows) != 2 {
			t.Fatalf("%s: steady view %+v", tt.why, got)
		}
		if got.JIT != tt.wantHead || got.Rows[0].JIT != tt.wantA || got.Rows[1].JIT != tt.wantB {
			t.Errorf("%s: column %v, a %q, b %q; want %v, %q, %q", tt.why, got.JIT, got.Rows[0].JIT, got.Rows[1].JIT, tt.wantHead, tt.wantA, tt.wantB)
		}
		if has := strings.Contains(steadySection(t, r), "<th>JIT compiling</th>"); has != tt.wantHead {
			t.Errorf("%s: the table's JIT column shown %v, want %v", tt.why, has, tt.wantHead)
		}
	}
}

// TestSteadySpin: the steady-state table gives the host speed probe's
// median and range over each cell's measured windows (valid, measured
// group), "–" for a cell whose windows were not probed, and no column for a
// run without the probe (before the column, or a target on another host).
func TestSteadySpin(t *testing.T) {
	dir := twoFlatCells(t)
	trial := func(v, group string, valid bool, spin float64) record.Trial {
		return record.Trial{Variant: v, Group: group, Valid: valid, HostSpinNs: spin}
	}
	probed := []record.Trial{
		trial("a", "main", true, 600), trial("a", "main", true, 700), trial("a", "main", true, 620), trial("a", "main", true, 610),
		trial("a", "main", false, 9000),    // invalid: not a window the verdicts read
		trial("a", "background", true, 10), // another group
		trial("b", "main", true, 0),        // b not probed
	}
	unprobed := []record.Trial{trial("a", "main", true, 0), trial("b", "main", true, 0)}
	for _, tt := range []struct {
		why          string
		trials       []record.Trial
		wantA, wantB string
		wantColumn   bool
	}{
		{"probed: a's median of 600, 610, 620, 700 and its range; b unprobed", probed, "615 (600–700) ns", "", true},
		{"no window probed: no column", unprobed, "", "", false},
	} {
		r := &record.Run{Dir: dir, Meta: record.Meta{Measured: "main"}, Trials: tt.trials}
		got := (&runView{run: r}).Steady()
		if got == nil || len(got.Rows) != 2 {
			t.Fatalf("%s: steady view %+v", tt.why, got)
		}
		if got.Spin != tt.wantColumn || got.Rows[0].Spin != tt.wantA || got.Rows[1].Spin != tt.wantB {
			t.Errorf("%s: column %v, a %q, b %q; want %v, %q, %q", tt.why, got.Spin, got.Rows[0].Spin, got.Rows[1].Spin, tt.wantColumn, tt.wantA, tt.wantB)
		}
		if has := strings.Contains(steadySection(t, r), "<th>host speed probe</th>"); has != tt.wantColumn {
			t.Errorf("%s: the spin column shown %v, want %v", tt.why, has, tt.wantColumn)
		}
	}
}

// twoFlatCells writes a steady.json of two flat cells, a and b, of group
// main under today's rule, and returns its directory.
func twoFlatCells(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st := record.Steady{Metric: "wall_ms", Rule: verdicts.SteadyRule, Cells: []record.SteadyCell{
		{Variant: "a", Group: "main", Consistency: "flat"}, {Variant: "b", Group: "main", Consistency: "flat"}}}
	if err := record.WriteJSON(dir, record.SteadyFile, st); err != nil {
		t.Fatal(err)
	}
	return dir
}

// steadySection renders the run page's steady-state block of r.
func steadySection(t *testing.T, r *record.Run) string {
	t.Helper()
	var out strings.Builder
	if err := pages.ExecuteTemplate(&out, "steady", &runView{run: r}); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
