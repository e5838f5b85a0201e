package forks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/store/record"
)

// noStart is Hooks whose targets never start: the loop must still run
// without an orchestrator, and only Launch, Spent and Warn may be asked.
type noStart struct {
	err      error
	launches []int // the fork of each Launch
	warnings []string
	spent    map[string]int
}

func (h *noStart) Launch(_ context.Context, _ replicate.Job, _, fork int) (trial.Target, error) {
	h.launches = append(h.launches, fork)
	return nil, h.err
}
func (h *noStart) Round(context.Context, trial.Target, load.Plan) (Window, error) {
	panic("Round without a target")
}
func (h *noStart) Measure(context.Context, trial.Target, load.Plan) (Window, error) {
	panic("Measure without a target")
}
func (h *noStart) ReadBack(trial.Target)                { panic("ReadBack without a target") }
func (h *noStart) Spent(bucket string, _ time.Duration) { h.spent[bucket]++ }
func (h *noStart) Warn(format string, a ...any) {
	h.warnings = append(h.warnings, fmt.Sprintf(format, a...))
}
func (h *noStart) Logf(string, ...any) {}
func (h *noStart) SaveMeta() error     { panic("SaveMeta without a row") }

const manifest = `name: forks
title: forks
question: do lost forks get replaced?
variants:
  fast: {command: [sh, "{port}"], ready: /health}
load: {model: burst, burst: 4, requests: [{path: "/"}]}
forks: 1
iterations: 2
retries: 2
startup: {on_failure: %s}
seed: 3
cooldown: {max_busy_pct: 100, max_wait: 1ms, pause: 1ms, iteration: 1ms}
`

func loop(t *testing.T, onFailure string, h Hooks) (*Loop, replicate.Job) {
	t.Helper()
	m, err := experiments.Parse("forks.yaml", []byte(strings.Replace(manifest, "%s", onFailure, 1)), "")
	if err != nil {
		t.Fatal(err)
	}
	jobs := replicate.Schedule(m, m.Seed)
	if len(jobs) != 1 {
		t.Fatalf("schedule: %d jobs, want 1", len(jobs))
	}
	return &Loop{M: m, Dir: t.TempDir(), Rep: replicate.New(t.Logf), Jobs: 1, Hooks: h}, jobs[0]
}

// TestLostForksAreReplaced: with startup.on_failure: continue, a target
// that does not start is an invalid row and a lost fork; replacements
// (forks 2 and 3) follow while retries: 2 lasts, then the cell gives up
// without an error.
func TestLostForksAreReplaced(t *testing.T) {
	h := &noStart{err: fmt.Errorf("%w: fast: exit 1", ErrStartup), spent: map[string]int{}}
	l, j := loop(t, "continue", h)
	if err := l.Cell(context.Background(), 1, j); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(h.launches); got != "[1 2 3]" {
		t.Errorf("launched forks %s, want [1 2 3]: the fork, then one replacement per retry", got)
	}
	if len(h.warnings) != 3 || !strings.Contains(h.warnings[0], "fork 1 lost: target failed to start: fast: exit 1") {
		t.Errorf("warnings %q, want one per lost fork naming why", h.warnings)
	}
	if h.spent[record.StageStarts] != 3 {
		t.Errorf("starts booked %d times, want 3", h.spent[record.StageStarts])
	}
	rows, err := record.ReadCSV[record.Trial](l.Dir, record.TrialsFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3 (one per failed start)", len(rows))
	}
	for i, r := range rows {
		if r.Valid || r.Reason != "target failed to start" || r.Fork != i+1 || r.Retry != (i > 0) || r.Trial != i+1 {
			t.Errorf("row %d: %+v, want an invalid 'target failed to start' row of fork %d", i, r, i+1)
		}
	}
}

// TestStartupErrors: a failed start stops the run under on_failure: stop,
// and any error that is not ErrStartup does so whatever the manifest says.
func TestStartupErrors(t *testing.T) {
	other := errors.New("no free port")
	for _, tt := range []struct {
		name, onFailure string
		err             error
	}{
		{"stop: the run ends at the first target that does not start", "stop", fmt.Errorf("%w: fast", ErrStartup)},
		{"continue covers only a target that did not come up", "continue", other},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := &noStart{err: tt.err, spent: map[string]int{}}
			l, j := loop(t, tt.onFailure, h)
			if err := l.Cell(context.Background(), 1, j); !errors.Is(err, tt.err) {
				t.Errorf("Cell: %v, want %v", err, tt.err)
			}
			if len(h.launches) != 1 || len(h.warnings) != 0 {
				t.Errorf("%d launches, warnings %q: want one launch and none", len(h.launches), h.warnings)
			}
		})
	}
}

// TestLabelAndDescribe: the console's and the log's words for a job and
// an iteration.
func TestLabelAndDescribe(t *testing.T) {
	j := replicate.Job{Cell: replicate.Cell{Variant: experiments.Variant{Name: "virtual"}, Point: map[string]string{"c": "8"}}, Fork: 2}
	if got, want := Label(j), "virtual c=8 fork 2"; got != want {
		t.Errorf("Label = %q, want %q", got, want)
	}
	r := record.Trial{RPS: 1234.4, WallMs: 810.6, P99Ms: 12.34, Errors: 1, DistinctThreads: 9, Reason: "host noise"}
	if got, want := Describe(r), "1234 rps, wall 811 ms, p99 12.3 ms, 1 errors, 9 threads (invalid: host noise)"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}
