package console

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// etaPlan is 4 cells x 1 fork x 3 iterations whose fork costs 48 s by the
// estimate: start 15 + warm-up 5 + stop 0.5 + gate 1.5 + 3 windows of 8 s
// + 2 pauses of 1 s; one more iteration is 9 s (pipeline.NewETA works
// them out from the estimate).
func etaPlan() *ETA { return NewETA(3, 48, 9, "data/x/1") }

// noPlan is the ETA of a run without an estimate.
func noPlan() *ETA { return NewETA(0, 0, 0, "") }

// TestETA: the time left from the estimate at the start, refined by the
// forks measured, against what a naive extrapolation would say.
func TestETA(t *testing.T) {
	type ev struct {
		fork bool    // a fork of job seq starts (Progress.Trial); else an iteration ends (Progress.Done)
		at   float64 // seconds after the start
		seq  int
	}
	forkOf := func(seq int, start float64, iters ...float64) []ev {
		out := []ev{{true, start, seq}}
		for _, x := range iters {
			out = append(out, ev{false, x, 0})
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
		plan         *ETA
		total, done  int // planned iterations, those on disk before the run
		events       []ev
		at           float64
		want         float64 // seconds; -1: unknown
	}{
		{"start", "before anything ran, the estimate: 4 forks of 48 s", etaPlan(), 12, 0, nil, 0, 192},
		{"first iteration", "the first iteration carries the fork's start and warm-up; the naive 29 s x 11 = 319 s would overstate it, the estimate leaves 19 s of this fork and 3 forks",
			etaPlan(), 12, 0, forkOf(1, 0, 29), 29, 19 + 3*48},
		{"behind the estimate in a fork", "a fork slower than estimated still has its iterations to go: 2 x 9 s, not a negative rest",
			etaPlan(), 12, 0, forkOf(1, 0, 50), 50, 18 + 3*48},
		{"forks slower than estimated", "two forks of 60 s pull the fork cost from 48 to (48 + 60 + 60) / 3 = 56 s",
			etaPlan(), 12, 0, join(forkOf(1, 0, 40, 49, 58), forkOf(2, 60, 100, 109, 118), forkOf(3, 120)), 120, 56 + 56},
		{"a lost fork", "a fork whose target never became ready is a retry of the same job, not the cost of a fork",
			etaPlan(), 12, 0, join(forkOf(1, 0), forkOf(1, 3)), 3, 48 + 3*48},
		{"re-run iterations", "invalid iterations re-run within a fork (5 done for 3 planned) do not use up the forks left: 3 forks, not 12 - 5 = 7 iterations",
			etaPlan(), 12, 0, forkOf(1, 0, 29, 38, 47, 56, 65), 65, 3 * 48},
		{"last fork ending", "after the last iteration, what the fork's cost leaves: its stop and gate", etaPlan(), 3, 0, forkOf(1, 0, 10, 19, 28), 28, 20},
		{"resumed", "2 forks were on disk before: 2 forks of 48 s left", etaPlan(), 12, 6, nil, 0, 96},
		{"no estimate, nothing ran", "nothing to go on", noPlan(), 12, 0, nil, 0, -1},
		{"no estimate, first iteration", "the time so far, extrapolated, until a fork is measured", noPlan(), 12, 0, forkOf(1, 0, 29), 29, 29 * 11},
		{"no estimate, one fork measured", "a measured fork of 60 s with 3 iterations: this fork's 60 s and two more",
			noPlan(), 12, 0, join(forkOf(1, 0, 40, 49, 58), forkOf(2, 60)), 60, 60 + 2*60},
	}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := tt.plan
			x.begin(t0, tt.total, tt.done)
			for _, e := range tt.events {
				if e.fork {
					x.forkStarted(at(e.at), e.seq)
				} else {
					x.iterationDone(at(e.at))
				}
			}
			got, ok := x.Left(at(tt.at))
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
}

// TestLinesETA: the line display prints the estimate's ETA before the
// first fork and the refined one after each iteration; without an
// estimate it extrapolates as before.
func TestLinesETA(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := t0
	for _, tt := range []struct {
		name, reason string
		eta          *ETA
		want         []string
	}{
		{"estimate", "ETA from cost.Predict from the start", etaPlan(),
			[]string{"[0/12] ETA 3m12s, estimated from data/x/1\n", "[1/12] virtual fork 1 iteration 1: 1000 rps (ETA 2m43s)\n"}},
		{"no estimate", "the naive extrapolation: 29 s x 11", nil,
			[]string{"[1/12] virtual fork 1 iteration 1: 1000 rps (ETA 5m19s)\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			clock = t0
			l := &Lines{W: &buf, ETA: tt.eta, now: func() time.Time { return clock }}
			l.Start(12, 0)
			l.Trial("virtual fork 1", 1)
			clock = t0.Add(29 * time.Second)
			l.Done("virtual fork 1", 1, "1000 rps")
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
