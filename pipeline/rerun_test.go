package pipeline

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/telemetry"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/store/record"
)

// noisyWindows makes the listed sampled windows (1-based, in run order;
// warm-up rounds are sampled too, so its manifests have none)
// report 80% of one core outside threadlab; the rest are quiet. The real
// measurement is tested in telemetry and in TestHogMidTrialIsReRun; this
// pins down what the pipeline does with it, deterministically.
func noisyWindows(t *testing.T, noisy ...int) {
	var n atomic.Int32
	measureNoise = func([]telemetry.Sample) (float64, float64) {
		k := int(n.Add(1))
		for _, x := range noisy {
			if x == k {
				return 80, 0
			}
		}
		return 0, 0
	}
	t.Cleanup(func() { measureNoise = trial.HostNoise })
}

const rerunManifest = `name: rerun
title: re-runs
question: are noisy windows re-run?
variants:
  fast: {command: [inproc, "{port}"], ready: /health}
load: {model: burst, burst: 4, requests: [{path: "/io?ms=5"}], warmup: 0s} # no warm-up rounds: noisyWindows counts measured windows
forks: 2
iterations: 2
retries: %s
seed: 3
cooldown: {max_busy_pct: 100, max_wait: 1ms, pause: 1ms, iteration: 1ms}
`

func rerunRun(t *testing.T, retries string) (*record.Run, *State) {
	t.Helper()
	m, err := experiments.Parse("rerun.yaml", []byte(strings.Replace(rerunManifest, "%s", retries, 1)), "")
	if err != nil {
		t.Fatal(err)
	}
	o := opts(t, &inproc{})
	o.NoReport = true
	s, err := Run(context.Background(), m, o)
	if err != nil {
		t.Fatal(err)
	}
	r, err := record.Read(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, s
}

func TestNoisyIterationIsReRun(t *testing.T) {
	tests := []struct {
		name, retries string
		noisy         []int
		rows, valid   int
		retried       int
		reason        string
		why           string
	}{
		{"one noisy window", "3", []int{2}, 5, 4, 1, "planned n reached",
			"the 2nd window (fork 1, iteration 2) is invalid and re-run as iteration 3 of the same fork"},
		{"budget spent", "1", []int{2, 3, 4}, 5, 2, 1, "planned n reached (2 fork(s) with fewer valid iterations than planned: retry budget (1) spent)",
			"one re-run allowed: fork 1 ends with 1 valid iteration of 2, fork 2 loses one window and cannot replace it, yet both forks count"},
		{"no window valid", "0", []int{1, 2, 3, 4}, 4, 0, 0, "retry budget (0) spent: 0 of 2 forks valid",
			"no budget and every window noisy: the cell says why it has no forks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noisyWindows(t, tt.noisy...)
			r, _ := rerunRun(t, tt.retries)
			valid, retried := 0, 0
			for _, tr := range r.Trials {
				if tr.Valid {
					valid++
				} else if !strings.Contains(tr.Reason, "host noise: 80% of one core used outside threadlab") {
					t.Errorf("%s: invalid row without the noise reason: %q", tt.why, tr.Reason)
				}
				if tr.Retry {
					retried++
				}
			}
			if len(r.Trials) != tt.rows || valid != tt.valid || retried != tt.retried {
				t.Errorf("%s: %d rows, %d valid, %d re-runs; want %d, %d, %d", tt.why, len(r.Trials), valid, retried, tt.rows, tt.valid, tt.retried)
			}
			if c := r.Meta.Cells; len(c) != 1 || c[0].Reason != tt.reason || c[0].Retries != tt.retried {
				t.Errorf("%s: run.json cells %+v, want reason %q and %d retries", tt.why, c, tt.reason, tt.retried)
			}
		})
	}
}

// TestDecideStopsCells: a Decide that declares every cell decided stops a
// sequential design at min; one that never does runs it to max.
func TestDecideStopsCells(t *testing.T) {
	for _, tt := range []struct {
		decided bool
		forks   int
		reason  string
	}{{true, 2, "decided at n=2"}, {false, 4, "max reached"}} {
		m := parse(t, 1)
		m.Forks = experiments.Rounds{Min: 2, Max: 4}
		o := opts(t, &inproc{})
		o.NoReport = true
		looks := 0
		o.Stages = []Stage{Trials{Decide: func(s *State, look, maxLooks int) (map[replicate.CellID]bool, error) {
			looks++
			if look != 3 && look != 4 || maxLooks != 4 {
				t.Errorf("look %d of %d: want looks 3 and 4 of 4 (forks past min)", look, maxLooks)
			}
			out := map[replicate.CellID]bool{}
			for _, c := range replicate.Cells(s.M) {
				out[c.ID()] = tt.decided
			}
			return out, nil
		}}}
		s, err := Run(context.Background(), m, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range s.Meta.Cells {
			if c.Forks != tt.forks || c.Reason != tt.reason {
				t.Errorf("decided=%v: cell %s has %d forks, %q; want %d, %q", tt.decided, c.Variant, c.Forks, c.Reason, tt.forks, tt.reason)
			}
		}
		if looks == 0 {
			t.Errorf("decided=%v: Decide never called", tt.decided)
		}
	}
}
