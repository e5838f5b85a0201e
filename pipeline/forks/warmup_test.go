package forks

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/measure/telemetry"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/stats/steady"
	"github.com/threadlab/threadlab/store/record"
)

// rounds is a target whose warm-up rounds take a flat wall time (2% noise)
// while their CPU falls 5x over the first cpuRounds rounds and then stays
// (3% noise): the burst of issue 20's pilot, whose CPU settled 30-50
// bursts after its wall time. cpu false: the target's CPU is not read.
type rounds struct {
	noStart
	n         int
	cpuRounds int
	cpu       bool
	sleep     time.Duration
	rng       *rand.Rand
	// jitRounds: the JIT compiles for half the target's CPU over the
	// first jitRounds rounds, then 1% (background compilation); 0: the
	// target has no JIT counter.
	jitRounds int
	// idle: the target mostly waits: 10 ms of CPU a 100-ms round; the JIT
	// compiles 50 ms a round over the first jitRounds, then 3 ms (30% of
	// its CPU, 3% of the round's wall time), as jep491-pinning's sleeps.
	idle bool
}

func (h *rounds) Round(context.Context, trial.Target, load.Plan) (Window, error) {
	h.n++
	time.Sleep(h.sleep)
	wall := 100 * (1 + 0.02*h.rng.NormFloat64())
	w := Window{Started: "2026-12-02T00:00:00Z", Result: &load.Result{Groups: []load.GroupResult{
		{Name: "main", Requests: 4, OK: 4, Wall: time.Duration(wall * float64(time.Millisecond))}}}}
	if h.cpu {
		level := 0.2
		if h.idle {
			level = 0.01
		}
		if h.n < h.cpuRounds {
			level = 0.2 * math.Pow(5, 1-float64(h.n)/float64(h.cpuRounds))
		}
		w.CPUSec = level * (1 + 0.03*h.rng.NormFloat64())
		w.CPUMsPerReq = w.CPUSec * 1000 / 4
		if h.jitRounds > 0 {
			share := 0.01
			if h.n <= h.jitRounds {
				share = 0.5
			}
			jit := share * w.CPUSec * 1000
			if h.idle { // 50 ms of compiling a 100-ms round, then 3 ms
				jit = 50
				if h.n > h.jitRounds {
					jit = 3
				}
			}
			w.Samples = []telemetry.Sample{{Dur: 1, JVM: true, JIT: true, JITMs: jit}}
		}
	}
	return w, nil
}

// TestWarmupWaitsForCPU: an until-steady warm-up waits for every metric of
// Manifest.WarmupMetrics, the target's CPU too when the manifest reads it;
// a CPU that cannot be read holds nothing back; max still bounds it and
// names what had not settled.
func TestWarmupWaitsForCPU(t *testing.T) {
	tests := []struct {
		why       string
		warmup    string
		cpu       bool
		sleep     time.Duration
		least     int // rounds at the least
		most      int // rounds at the most (0: no bound)
		stop      string
		cpuSecond bool // warmup.csv carries each round's CPU
		cpuRounds int  // the CPU falls over this many rounds
		jitRounds int  // the JIT compiles for half the CPU over this many rounds (0: no counter)
		idle      bool // the target mostly waits (rounds.idle)
	}{
		{"the wall time alone: stops long before the CPU has settled", "{min: 1ms, max: 20m, until: steady}", true, 0, 8, 25, "stop: steady", true, 40, 0, false},
		{"also: target_cpu_s: waits until the CPU has settled too", "{min: 1ms, max: 20m, until: steady, also: [target_cpu_s]}", true, 0, 40, 0, "stop: steady (wall_ms from round ", true, 40, 0, false},
		{"a CPU that cannot be read holds nothing back", "{min: 1ms, max: 20m, until: steady, also: [target_cpu_s]}", false, 0, 8, 25, "stop: steady", false, 40, 0, false},
		{"max bounds it and names the metric that had not settled", "{min: 1ms, max: 400ms, until: steady, also: [target_cpu_ms_per_req]}", true, 2 * time.Millisecond, 15, 0, "stop: max (target_cpu_ms_per_req not steady)", true, 200, 0, false},
		{"the JIT compiling half the CPU for 30 rounds holds a settled wall time back until 4 rounds are quiet", "{min: 1ms, max: 20m, until: steady}", true, 0, 34, 0, "stop: steady (wall_ms from round ", true, 1, 30, false},
		{"a JIT that never goes quiet: max says so", "{min: 1ms, max: 400ms, until: steady}", true, 2 * time.Millisecond, 15, 0, "stop: max (JIT still compiling: 50% of the target's CPU (or of one core, for a target using less) in the last round)", true, 1, 100000, false},
		{"a target that mostly waits: 3 ms of background compilation is 30% of its 10 ms of CPU but 3% of the round, so the JIT is quiet once the 30 compiling rounds are over",
			"{min: 1ms, max: 20m, until: steady}", true, 0, 34, 60, "stop: steady (wall_ms from round ", true, 1, 30, true},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			src := strings.Replace(manifest, "%s", "stop", 1)
			src = strings.Replace(src, `requests: [{path: "/"}]}`, `requests: [{path: "/"}], warmup: `+tt.warmup+`}`, 1)
			m, err := experiments.Parse("forks.yaml", []byte(src), "")
			if err != nil {
				t.Fatal(err)
			}
			h := &rounds{cpuRounds: tt.cpuRounds, cpu: tt.cpu, sleep: tt.sleep, rng: rand.New(rand.NewPCG(7, 9)), jitRounds: tt.jitRounds, idle: tt.idle}
			l := &Loop{M: m, Dir: t.TempDir(), Rep: replicate.New(t.Logf), Jobs: 1, Hooks: h}
			j := replicate.Schedule(m, m.Seed)[0]
			plan := load.Plan{Groups: []load.Group{{Name: "main", Model: load.Burst}}}
			if err := l.warmup(context.Background(), nil, j, 1, 1, plan); err != nil {
				t.Fatal(err)
			}
			rows, err := record.ReadCSV[record.Trial](l.Dir, record.WarmupFile)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) < tt.least || (tt.most > 0 && len(rows) > tt.most) {
				t.Errorf("%d rounds, want %d to %d", len(rows), tt.least, tt.most)
			}
			last := rows[len(rows)-1]
			if want := steady.RoundReason(len(rows)) + "; " + tt.stop; !strings.HasPrefix(last.Reason, want) {
				t.Errorf("last round's reason %q, want %q", last.Reason, want)
			}
			for i, r := range rows {
				if r.Valid || r.Fork != 1 || (r.TargetCPUSec > 0) != tt.cpuSecond {
					t.Errorf("round %d: valid %v fork %d cpu %v: want an invalid row of fork 1, with the round's CPU %v", i+1, r.Valid, r.Fork, r.TargetCPUSec, tt.cpuSecond)
				}
			}
			t.Log(fmt.Sprintf("%d rounds, last: %s", len(rows), last.Reason))
		})
	}
}

// TestJITShare: a round's compile time is held to the target's CPU time,
// or to one core for the round's length when the target used less.
func TestJITShare(t *testing.T) {
	for _, tt := range []struct {
		why               string
		jit, cpuSec, wall float64
		want              float64
	}{
		{"a busy target (2 cores for 400 ms): its CPU time", 40, 0.8, 400, 0.05},
		{"a waiting target (8 ms of CPU in a 305-ms sleep): the round's wall time", 15, 0.008, 305, 15.0 / 305},
		{"exactly one core: either", 20, 0.4, 400, 0.05},
		{"a timed window's wall is its length", 250, 0.68, 4487, 250.0 / 4487},
	} {
		got := jitShare(record.Trial{JITMs: tt.jit, TargetCPUSec: tt.cpuSec, WallMs: tt.wall})
		if math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tt.why, got, tt.want)
		}
	}
}
