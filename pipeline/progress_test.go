package pipeline

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/record"
)

// etaPlan is 4 cells x 1 fork x 3 iterations whose fork costs 48 s by the
// estimate: start 15 + warm-up 5 + stop 0.5 + gate 1.5 + 3 windows of 8 s
// + 2 pauses of 1 s; one more iteration is 9 s.
func etaPlan() *Estimate {
	return &Estimate{Iterations: 3, From: "data/x/1", Costs: Costs{StartS: 15, WarmupS: 5, StopS: 0.5, ForkPauseS: 1.5, WindowS: 8, PauseS: 1}}
}

// TestETA: the time left from the estimate at the start, refined by the
// forks measured, against what a naive extrapolation would say.
func TestETA(t *testing.T) {
	type ev struct {
		fork bool    // a fork starts (Progress.Trial); else an iteration ends (Progress.Done)
		at   float64 // seconds after the start
	}
	forkOf := func(start float64, iters ...float64) []ev {
		out := []ev{{true, start}}
		for _, x := range iters {
			out = append(out, ev{false, x})
		}
		return out
	}
	join := func(evs ...[]ev) []ev {
		var out []ev
		for _, e := range evs {
			out = append(out, e...)
		}
		return out
	}
	tests := []struct {
		name, reason string
		plan         *Estimate
		events       []ev
		at           float64
		remaining    int
		want         float64 // seconds; -1: unknown
	}{
		{"start", "before anything ran, the estimate: 4 forks of 48 s", etaPlan(), nil, 0, 12, 192},
		{"first iteration", "the first iteration carries the fork's start and warm-up; the naive 29 s x 11 = 319 s would overstate it, the estimate leaves 19 s of this fork and 3 forks",
			etaPlan(), forkOf(0, 29), 29, 11, 163},
		{"behind the estimate in a fork", "a fork slower than estimated still has its iterations to go: 2 x 9 s, not a negative rest",
			etaPlan(), forkOf(0, 50), 50, 11, 18 + 3*48},
		{"forks slower than estimated", "two forks of 60 s pull the fork cost from 48 to (48 + 60 + 60) / 3 = 56 s",
			etaPlan(), join(forkOf(0, 40, 49, 58), forkOf(60, 100, 109, 118), []ev{{true, 120}}), 120, 6, 56 + 56},
		{"a lost fork", "a fork whose target never became ready is a retry, not the cost of a fork",
			etaPlan(), join(forkOf(0), []ev{{true, 3}}), 3, 12, 48 + 3*48},
		{"done", "nothing left", etaPlan(), forkOf(0, 29), 29, 0, 0},
		{"no estimate, nothing ran", "nothing to go on", nil, nil, 0, 12, -1},
		{"no estimate, first iteration", "the time so far, extrapolated, until a fork is measured", nil, forkOf(0, 29), 29, 11, 29 * 11},
		{"no estimate, one fork measured", "a measured fork of 60 s with 3 iterations: this fork's 60 s and two more",
			nil, join(forkOf(0, 40, 49, 58), []ev{{true, 60}}), 60, 9, 60 + 2*60},
	}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := NewETA(tt.plan)
			x.begin(t0)
			for _, e := range tt.events {
				if e.fork {
					x.forkStarted(at(e.at))
				} else {
					x.iterationDone(at(e.at))
				}
			}
			got, ok := x.Left(at(tt.at), tt.remaining)
			if tt.want < 0 {
				if ok {
					t.Errorf("%s: ETA %s, want unknown", tt.reason, got)
				}
				return
			}
			if !ok || got.Round(time.Millisecond) != time.Duration(tt.want*float64(time.Second)) {
				t.Errorf("%s: ETA %s (known %v), want %gs", tt.reason, got, ok, tt.want)
			}
		})
	}
	if x := NewETA(etaPlan()); x.ForkS != 48 || x.IterationS != 9 || x.Iterations != 3 {
		t.Errorf("NewETA: fork %g s, iteration %g s, %d iterations; want EstimateRun's 48, 9 and 3", x.ForkS, x.IterationS, x.Iterations)
	}
}

// TestLinesETA: the line display prints the estimate's ETA before the
// first fork and the refined one after each iteration; without an
// estimate it extrapolates as before.
func TestLinesETA(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := t0
	j := Job{Cell: Cell{Variant: experiments.Variant{Name: "virtual"}}, Fork: 1}
	r := record.Trial{Iteration: 1, Valid: true, RPS: 1000}
	for _, tt := range []struct {
		name, reason string
		eta          *ETA
		want         []string
	}{
		{"estimate", "ETA from EstimateRun from the start", NewETA(etaPlan()),
			[]string{"[0/12] ETA 3m12s, estimated from data/x/1\n", "[1/12] virtual fork 1 iteration 1: ", "(ETA 2m43s)\n"}},
		{"no estimate", "the naive extrapolation: 29 s x 11", nil,
			[]string{"[1/12] virtual fork 1 iteration 1: ", "(ETA 5m19s)\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			clock = t0
			l := &Lines{W: &buf, ETA: tt.eta, now: func() time.Time { return clock }}
			l.Start(12, 0)
			l.Trial(j, 1)
			clock = t0.Add(29 * time.Second)
			l.Done(j, r)
			out := buf.String()
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s: output lacks %q:\n%s", tt.reason, w, out)
				}
			}
			if tt.eta == nil && strings.Contains(out, "estimated from") {
				t.Errorf("%s: an estimate line without an estimate:\n%s", tt.reason, out)
			}
		})
	}
}
