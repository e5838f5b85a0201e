package pipeline

import (
	"bytes"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/cost"
	"github.com/threadlab/threadlab/pipeline/forks"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/render/console"
	"github.com/threadlab/threadlab/store/record"
)

// TestNewETA: the console's ETA gets cost.Predict's costs. A fork of 3
// iterations: start 15 + warm-up 5 + stop 0.5 + gate 1.5 + 3 windows of
// 8 s + 2 pauses of 1 s = 48 s; one more iteration is a window and a
// pause, 9 s.
func TestNewETA(t *testing.T) {
	e := &cost.Estimate{Iterations: 3, From: "data/x/1", Costs: cost.Model{StartS: 15, WarmupS: 5, StopS: 0.5, ForkPauseS: 1.5, WindowS: 8, PauseS: 1}}
	if x := NewETA(e); x.ForkS != 48 || x.IterationS != 9 || x.Iterations != 3 || x.From != "data/x/1" {
		t.Errorf("NewETA: fork %g s, iteration %g s, %d iterations, from %q; want the estimate's 48, 9, 3 and data/x/1", x.ForkS, x.IterationS, x.Iterations, x.From)
	}
	if x := NewETA(nil); x.ForkS != 0 || x.Iterations != 0 {
		t.Errorf("NewETA(nil): %+v, want no estimate", x)
	}
}

// TestShow: the display gets each job and outcome in the orchestrator's
// words, the same as the log's.
func TestShow(t *testing.T) {
	var buf bytes.Buffer
	p := Show(&console.Lines{W: &buf})
	j := replicate.Job{Cell: replicate.Cell{Variant: experiments.Variant{Name: "virtual"}}, Fork: 2}
	r := record.Trial{Iteration: 3, Valid: true, RPS: 1000}
	p.Start(4, 0)
	p.Trial(j, 1)
	p.Done(j, r)
	p.Close()
	if want := "[1/4] virtual fork 2 iteration 3: " + forks.Describe(r) + " (ETA "; !strings.HasPrefix(buf.String(), want) {
		t.Errorf("got %q, want it to start %q", buf.String(), want)
	}
}
