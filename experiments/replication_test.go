package experiments

import (
	"strings"
	"testing"
)

const repBase = `name: rep
title: replication
question: how often?
variants: {a: {command: [x, "{port}"]}}
load: {burst: 5, requests: [{path: /}]}
`

// TestReplicationSchema has a row per way of writing forks, iterations and
// their older names, with what it normalizes to or the problem it earns.
func TestReplicationSchema(t *testing.T) {
	tests := []struct {
		name, yaml string
		forks      Rounds
		iterations int
		problem    string
		why        string
	}{
		{"default", "", Rounds{5, 5}, 1, "", "no replication keys: five fresh JVMs, one iteration each"},
		{"trials number", "trials: 6\n", Rounds{6, 6}, 1, "", "trials keeps its meaning: forks, a fresh JVM each"},
		{"forks x iterations", "forks: 3\niterations: 4\n", Rounds{3, 3}, 4, "", "JMH's forks and iterations"},
		{"sequential trials", "trials: {min: 5, max: 20}\n", Rounds{5, 20}, 1, "", "sequential rounds under the older name"},
		{"sequential forks", "forks: {min: 4, max: 8}\niterations: 2\n", Rounds{4, 8}, 2, "", "sequential rounds"},
		{"min only", "forks: {min: 4}\n", Rounds{4, 4}, 1, "", "max defaults to min: a fixed design"},
		{"both", "trials: 3\nforks: 3\n", Rounds{}, 0, "rep.yaml:6:9: trials: set together with forks: keep one", "two names for one number"},
		{"fresh_jvm", "trials: 5\nfresh_jvm: false\n", Rounds{}, 0, "fresh_jvm: was removed: a cell now runs forks (fresh JVMs) x iterations (measured windows per JVM); write forks: 1 and iterations: N", "the old switch says how to write it now"},
		{"max below min", "forks: {min: 5, max: 3}\n", Rounds{}, 0, "forks.max: 3 is below min 5", "an empty sequential range"},
		{"zero iterations", "iterations: -1\n", Rounds{}, 0, "iterations: must be at least 1 (got -1)", "a fork measures at least once"},
		{"word", "forks: many\n", Rounds{}, 0, `forks: "many" is not a number of forks`, "a word where a count belongs"},
		{"unknown key", "forks: {min: 4, maks: 8}\n", Rounds{}, 0, `forks.maks: unknown key "maks", did you mean "max"?`, "typos in the mapping are caught"},
		{"negative retries", "retries: -1\n", Rounds{}, 0, "retries: must not be negative", "a budget below zero means nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse("rep.yaml", []byte(repBase+tt.yaml), "")
			if tt.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tt.problem) {
					t.Fatalf("%s: error %v, want it to contain %q", tt.why, err, tt.problem)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tt.why, err)
			}
			if m.Forks != tt.forks || m.Iterations != tt.iterations || m.Trials != nil || *m.Retries != DefaultRetries {
				t.Errorf("%s: forks %v iterations %d trials %v; want %v, %d and trials moved to forks", tt.why, m.Forks, m.Iterations, m.Trials, tt.forks, tt.iterations)
			}
			// The normalized manifest written with a run loads back the same.
			b, err := Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse("back.yaml", b, "")
			if err != nil {
				t.Fatalf("%s: normalized manifest does not load back: %v\n%s", tt.why, err, b)
			}
			if back.Forks != m.Forks || back.Iterations != m.Iterations || back.Noise != m.Noise || back.CoolDown.Iteration != m.CoolDown.Iteration {
				t.Errorf("%s: round trip changed the replication: %+v vs %+v", tt.why, back.Forks, m.Forks)
			}
		})
	}
}
