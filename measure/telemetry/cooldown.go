package telemetry

import (
	"context"
	"os"
	"time"

	"github.com/threadlab/threadlab/env"
)

// coolWindow is how long one busy measurement watches the host: long enough
// to average over scheduler ticks (10 ms) and short enough that an idle host
// costs only half a second per trial.
const coolWindow = 500 * time.Millisecond

// CoolDown waits until the CPU used on this host outside this process is
// below maxBusyPct (a share of all CPUs) over a ~500 ms window, for at most
// maxWait. It returns how long it waited and the busy share last measured,
// which the pipeline records with the trial and compares to maxBusyPct to
// mark a trial started on a busy host. A non-positive maxBusyPct or maxWait
// measures once and returns: the host load is still recorded. It never
// fails: without /proc/stat it reports 0 after one window.
func CoolDown(ctx context.Context, maxBusyPct float64, maxWait time.Duration) (waited time.Duration, busyPct float64) {
	start := time.Now()
	for {
		busy, ok := busyOutside(ctx, coolWindow)
		waited = time.Since(start)
		if !ok {
			return waited, busyPct
		}
		busyPct = busy
		if maxBusyPct <= 0 || maxWait <= 0 || busy < maxBusyPct || waited+coolWindow > maxWait {
			return waited, busyPct
		}
	}
}

// busyOutside measures the busy share of all CPUs over window, minus what
// this process used in it. ok is false when the context ended or /proc/stat
// cannot be read.
func busyOutside(ctx context.Context, window time.Duration) (pct float64, ok bool) {
	h0, ok0 := hostTimes()
	s0 := selfCPUSeconds()
	select {
	case <-ctx.Done():
		return 0, false
	case <-time.After(window):
	}
	h1, ok1 := hostTimes()
	s1 := selfCPUSeconds()
	if !ok0 || !ok1 {
		return 0, false
	}
	return outsidePct(h1.Sub(h0), s1-s0), true
}

// outsidePct is the busy share of all CPUs in d after removing selfSec of
// this process's own CPU time (both in the same unit once ticks are seconds).
func outsidePct(d env.CPUTimes, selfSec float64) float64 {
	tot := float64(d.TotalTicks())
	if tot <= 0 {
		return 0
	}
	busy := float64(d.BusyTicks()) - selfSec*env.UserHZ
	return max(0, busy) / tot * 100
}

func hostTimes() (env.CPUTimes, bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return env.CPUTimes{}, false
	}
	defer f.Close()
	ps, err := env.ParseProcStat(f)
	return ps.All, err == nil
}
