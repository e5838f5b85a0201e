package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/store/record"
)

// stageFunc is a stage made of a function, for driving Run's control flow.
type stageFunc struct {
	name string
	run  func(ctx context.Context, s *State) error
}

func (f stageFunc) Name() string                            { return f.name }
func (f stageFunc) Run(ctx context.Context, s *State) error { return f.run(ctx, s) }

// TestSignalStopsTheRemainingStages is the host-check bug: a stage that
// finishes despite the signal (the host check swallows it and returns nil)
// used to let every later stage run, trials included, on a context that
// could no longer be cancelled, and the run ended "complete".
func TestSignalStopsTheRemainingStages(t *testing.T) {
	tests := []struct {
		name   string
		first  func(ctx context.Context, cancel context.CancelFunc) error
		reason string
	}{
		{"swallowed", func(ctx context.Context, cancel context.CancelFunc) error { cancel(); return nil },
			"the stage ignores the signal and returns nil"},
		{"honoured", func(ctx context.Context, cancel context.CancelFunc) error { cancel(); <-ctx.Done(); return ctx.Err() },
			"the stage stops and returns the context's error"},
		{"panics", func(ctx context.Context, cancel context.CancelFunc) error { cancel(); panic("boom") },
			"the stage panics after the signal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var ran []string
			var finishCtxErr error
			o := opts(t, &inproc{})
			o.NoReport = true
			o.Stages = []Stage{
				stageFunc{"host check", func(ctx context.Context, s *State) error {
					ran = append(ran, "host check")
					return tt.first(ctx, cancel)
				}},
				stageFunc{"trials", func(ctx context.Context, s *State) error { ran = append(ran, "trials"); return nil }},
				nil,
				stageFunc{"after", func(ctx context.Context, s *State) error { ran = append(ran, "after"); return nil }},
			}
			// A finishing stage that records its context: it must be live.
			o.Stages[2] = wrapFinishing{Aggregate{}, func(ctx context.Context) { finishCtxErr = ctx.Err() }}
			s, err := Run(ctx, parse(t, 1), o)
			if err == nil {
				t.Fatalf("%s: Run returned nil, want an interruption", tt.reason)
			}
			if strings.Join(ran, ",") != "host check" {
				t.Errorf("%s: stages run %v, want only the host check (and the finishing ones)", tt.reason, ran)
			}
			if finishCtxErr != nil {
				t.Errorf("%s: the finishing stage got a dead context (%v)", tt.reason, finishCtxErr)
			}
			var meta record.Meta
			if err := record.ReadJSON(s.Dir, record.RunFile, &meta); err != nil || meta.State != "interrupted" {
				t.Errorf("%s: run.json state %q (%v), want interrupted", tt.reason, meta.State, err)
			}
		})
	}
}

// wrapFinishing is Aggregate (a finishing stage) with a hook on its context.
type wrapFinishing struct {
	Aggregate
	hook func(ctx context.Context)
}

func (w wrapFinishing) Run(ctx context.Context, s *State) error { w.hook(ctx); return nil }

func (wrapFinishing) Finishing() bool { return true }

// TestPanicSettlesFailed: a panicking stage becomes an error naming the
// bug, run.json says "failed" (not "running"), and cleanups still run.
func TestPanicSettlesFailed(t *testing.T) {
	cleaned := false
	o := opts(t, &inproc{})
	o.NoReport = true
	o.Stages = []Stage{
		stageFunc{"services", func(ctx context.Context, s *State) error { s.OnCleanup(func() { cleaned = true }); return nil }},
		stageFunc{"trials", func(ctx context.Context, s *State) error {
			var m map[string]int
			m["x"]++ // nil map: a real runtime panic
			return nil
		}},
	}
	s, err := Run(context.Background(), parse(t, 1), o)
	if err == nil || !strings.Contains(err.Error(), "internal error") || !strings.Contains(err.Error(), "trials") {
		t.Fatalf("err = %v, want an internal error naming the stage", err)
	}
	var meta record.Meta
	if err := record.ReadJSON(s.Dir, record.RunFile, &meta); err != nil || meta.State != "failed" {
		t.Errorf("run.json state %q (%v), want failed", meta.State, err)
	}
	if !cleaned {
		t.Error("cleanups did not run after the panic")
	}
}

// TestBadReadyPathIsAnError: "/ready%zz" cannot make a request; waitReady
// used to ignore that error and dereference a nil request.
func TestBadReadyPathIsAnError(t *testing.T) {
	tg := &fixedTarget{url: "http://127.0.0.1:1"}
	err := trial.WaitReady(context.Background(), tg, "/ready%zz", "x.log", time.Second)
	if err == nil || !strings.Contains(err.Error(), `ready path "/ready%zz"`) {
		t.Fatalf("err = %v, want one naming the ready path", err)
	}
	// The loader refuses such a path up front (file:line:col, the fix); the
	// run must still fail cleanly if a manifest reaches it by another way
	// (built in code, or a loader change): failed, not running.
	if _, perr := experiments.Parse("bad-ready.yaml", []byte(badReady("/ready%zz")), ""); perr == nil || !strings.Contains(perr.Error(), "variants.a.ready") {
		t.Errorf("loader err = %v, want the field variants.a.ready named", perr)
	}
	m, perr := experiments.Parse("bad-ready.yaml", []byte(badReady("/ready")), "")
	if perr != nil {
		t.Fatal(perr)
	}
	m.Variants[0].Ready = "/ready%zz"
	o := opts(t, trial.Processes{})
	o.NoReport = true
	s, err := Run(context.Background(), m, o)
	if err == nil || !strings.Contains(err.Error(), "ready path") {
		t.Fatalf("run err = %v, want the ready path named", err)
	}
	var meta record.Meta
	if err := record.ReadJSON(s.Dir, record.RunFile, &meta); err != nil || meta.State != "failed" {
		t.Errorf("run.json state %q (%v), want failed", meta.State, err)
	}
}

func badReady(path string) string {
	return `name: bad-ready
title: t
question: q
variants:
  a: {command: [sleep, "30", "{port}"], ready: "` + path + `"}
load: {model: burst, burst: 1, requests: [{path: /}]}
trials: 1
cooldown: {max_busy_pct: 100, pause: 1ms}
`
}

type fixedTarget struct{ url string }

func (f *fixedTarget) URL() string        { return f.url }
func (f *fixedTarget) Pid() int           { return 0 }
func (f *fixedTarget) MetricsURL() string { return "" }
func (f *fixedTarget) Exited() error      { return nil }
func (f *fixedTarget) Stop() error        { return nil }
func (f *fixedTarget) Argv() []string     { return nil }
