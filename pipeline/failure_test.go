package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/store/record"
)

// A real process that dies before it is ready: the error quotes the tail of
// its log, and startup.on_failure decides whether the run stops or goes on.
const dying = `name: dying
title: A target that dies at start
question: Does threadlab say why?
variants:
  dies: {command: [sh, -c, "echo boom-from-target >&2; exit 3", "{port}"], ready: /}
load: {model: burst, burst: 5, requests: [{path: /}]}
trials: 2
cooldown: {max_busy_pct: 100, pause: 1ms}
noise: {max_outside_pct: 100000, max_steal_pct: 100000}
startup: {timeout: 10s, on_failure: %s}
`

func TestTargetDiesAtStart(t *testing.T) {
	tests := []struct {
		onFailure, reason string
		wantErr           bool
		wantRows          int
	}{
		{"stop", "the default: end the run, keep what finished, say why", true, 0},
		{"continue", "record each failed start as an invalid trial, re-run it as a new fork while the retry budget (3) lasts, and go on", false, 2 + 3},
	}
	for _, tt := range tests {
		t.Run(tt.onFailure, func(t *testing.T) {
			m, err := experiments.Parse("dying.yaml", []byte(fmt.Sprintf(dying, tt.onFailure)), "")
			if err != nil {
				t.Fatal(err)
			}
			o := opts(t, trial.Processes{})
			o.NoReport = true
			s, err := Run(context.Background(), m, o)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "boom-from-target") || !strings.Contains(err.Error(), "exit status 3") {
					t.Fatalf("%s: want the exit status and the log tail in the error, got: %v", tt.reason, err)
				}
			} else if err != nil {
				t.Fatalf("%s: %v", tt.reason, err)
			}
			trials, _ := record.ReadCSV[record.Trial](s.Dir, record.TrialsFile)
			if len(trials) != tt.wantRows {
				t.Fatalf("%s: %d trial rows, want %d", tt.reason, len(trials), tt.wantRows)
			}
			retries := 0
			for _, tr := range trials {
				if tr.Valid || tr.Reason != "target failed to start" {
					t.Errorf("%s: row %+v", tt.reason, tr)
				}
				if tr.Retry {
					retries++
				}
			}
			if tt.wantErr {
				return
			}
			if retries != 3 {
				t.Errorf("%s: %d rows marked retry, want 3", tt.reason, retries)
			}
			if c := s.Meta.Cells; len(c) != 1 || c[0].Forks != 0 || c[0].Retries != 3 || !strings.Contains(c[0].Reason, "retry budget (3) spent: 0 of 2 forks valid") {
				t.Errorf("%s: run.json cells %+v, want the budget spent and 0 of 2 forks", tt.reason, c)
			}
		})
	}
}
