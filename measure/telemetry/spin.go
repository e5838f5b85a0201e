package telemetry

import (
	"math"
	"runtime"
	"time"
)

// The host speed probe (wave 3). A CPU-bound fork can change its level in
// steps while the host looks quiet: cpu-bound 20261203T102928Z's forks
// moved 30-40% in per-request CPU with steal near 0 and 2% of a core used
// outside threadlab. Either the JIT recompiled the request's loop (jit_ms
// tells) or the virtual CPU itself ran slower or faster: a hypervisor that
// shares the physical core with another guest's hyper-thread, or changes
// its frequency, slows every instruction without any steal being counted.
// SpinNs times a fixed integer workload on this machine between windows,
// when the target is idle, so a change in the machine's speed shows in a
// column of its own (trials.csv host_spin_ns) instead of in the target's.
// Krun reads the CPU's APERF/MPERF counters for the same purpose; those
// need a kernel module and are not exposed inside most virtual machines.

const (
	spinSteps = 50_000 // one run: ~50-100 µs on a current core
	spinRuns  = 7      // the fastest run is the machine's speed; the slower ones met a preemption
)

// spinSink keeps the workload's result alive so the compiler cannot drop
// the loop.
var spinSink uint64

// SpinNs runs a fixed xorshift chain of spinSteps dependent steps
// spinRuns times on a locked OS thread and returns the fastest run in ns
// per 1000 steps: lower is a faster machine. Each step depends on the one
// before, so the figure is the core's latency for three shift-xor pairs,
// which no cache, memory or frequency-independent unit hides. About 0.5 ms
// in all. It measures this machine only: a target on another host is not
// probed (pipeline/forks).
func SpinNs() float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	x := uint64(88172645463325252)
	best := math.Inf(1)
	for range spinRuns {
		t0 := time.Now()
		for range spinSteps {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
		best = min(best, float64(time.Since(t0).Nanoseconds()))
	}
	spinSink += x
	return best * 1000 / spinSteps
}
