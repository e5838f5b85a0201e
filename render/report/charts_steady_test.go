package report

import (
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// TestForkCharts: one chart per measured cell, one line per classified
// fork, a pin at each steady start, the words in the alt text; a fork with
// no steady state is drawn without a pin and called excluded; other
// groups' cells are not drawn.
func TestForkCharts(t *testing.T) {
	v := &runView{run: &record.Run{Meta: record.Meta{Measured: "main"}}, assetsHost: "assets/"}
	v.layout.Variants = []string{"virtual"}
	st := record.Steady{Metric: "wall_ms", Cells: []record.SteadyCell{
		{Variant: "virtual", Group: "main", Point: "pool=40", Forks: []record.SteadyFork{
			{Fork: 1, Class: "warmup", Basis: "iterations", SteadyPoint: 2, Values: []float64{200, 150, 100, 101, 99, 100, 102, 98, 100, 101}},
			{Fork: 2, Class: "no steady state", Basis: "iterations", SteadyPoint: -1, Dropped: true, Values: []float64{300, 280, 260, 240, 220, 200, 180, 160, 150, 140}},
			{Fork: 3, Basis: "too few points"},
		}},
		{Variant: "virtual", Group: "background", Forks: []record.SteadyFork{{Fork: 1, Class: "flat", Values: []float64{1, 1, 1}}}},
	}}
	cs := v.forkCharts(st)
	if len(cs) != 1 {
		t.Fatalf("%d charts, want 1 (the measured group's cell only)", len(cs))
	}
	c := cs[0]
	if c.Title != "virtual pool=40" || c.ID != "chart_steady_0" {
		t.Errorf("title %q id %q", c.Title, c.ID)
	}
	script := string(c.Script)
	for _, want := range []string{`"markPoint"`, `"coord":[3,100]`, `"name":"fork 1"`, `"name":"fork 2"`, `"type":"dashed"`} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %s:\n%s", want, script)
		}
	}
	if strings.Count(script, `"coord"`) != 1 {
		t.Errorf("want one steady pin (fork 2 never settled):\n%s", script)
	}
	for _, want := range []string{"fork 1 warmup, steady from iteration 3 of 10", "fork 2 no steady state, never steady: excluded"} {
		if !strings.Contains(c.Alt, want) {
			t.Errorf("alt %q lacks %q", c.Alt, want)
		}
	}
}

// TestWarmupSummary: how a cell's warm-ups ended, from steady.json.
func TestWarmupSummary(t *testing.T) {
	tests := []struct {
		why   string
		forks []record.SteadyFork
		want  string
	}{
		{"two forks stopped steady after 8 and 14 rounds of 1 s",
			[]record.SteadyFork{{WarmupRounds: 8, WarmupMs: 8000, WarmupStop: "steady"}, {WarmupRounds: 14, WarmupMs: 14500, WarmupStop: "steady"}},
			"2 of 2 steady after 8-14 rounds (8.0-14.5 s)"},
		{"one reached max",
			[]record.SteadyFork{{WarmupRounds: 9, WarmupMs: 9000, WarmupStop: "steady"}, {WarmupRounds: 60, WarmupMs: 60000, WarmupStop: "max"}},
			"1 of 2 steady after 9-60 rounds (9.0-60.0 s); 1 reached max"},
		{"a fixed warm-up", []record.SteadyFork{{WarmupRounds: 10, WarmupMs: 15000, WarmupStop: "fixed"}}, "fixed: 10 rounds (15.0 s)"},
		{"no warm-up recorded", []record.SteadyFork{{}}, ""},
	}
	for _, tt := range tests {
		if got := warmupSummary(record.SteadyCell{Forks: tt.forks}); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.why, got, tt.want)
		}
	}
}

// TestWarmupText: the Method sentence reads both forms of load.warmup
// from manifest.yaml.
func TestWarmupText(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"load: {warmup: 10s}", "a warm-up of 10s"},
		{"load: {warmup: {min: 5s, max: 1m0s, until: steady}}", "a warm-up until each fork was steady, 5s to 1m0s (each fork's length and why it stopped are in steady.json)"},
	}
	for _, tt := range tests {
		m, err := record.ParseManifestInfo([]byte(tt.yaml))
		if err != nil {
			t.Fatalf("%s: %v", tt.yaml, err)
		}
		if got := warmupText(m.Load.Warmup.Text).phrase(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.yaml, got, tt.want)
		}
	}
}
