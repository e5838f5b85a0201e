package pipeline

import (
	"testing"

	"github.com/threadlab/threadlab/pipeline/telemetry"
)

// withProcess: the target host's process and host columns replace this
// machine's second by second, the JVM columns scraped here stay, and a
// second only the target host sampled is added in its place.
func TestWithProcess(t *testing.T) {
	local := []telemetry.Sample{
		{T: 0, Dur: 1, JVM: true, HeapUsedMB: 50, GenCPUPct: 3},
		{T: 1, Dur: 1, JVM: true, HeapUsedMB: 60, GenCPUPct: 3},
	}
	remote := []telemetry.Sample{
		{T: 0.02, Dur: 1, CPUUserPct: 80, CPUSysPct: 20, RSSMB: 300, Threads: 220, HostCPUPct: 4, HostStealPct: 1},
		{T: 1.02, Dur: 1, CPUUserPct: 60, RSSMB: 310, Threads: 221, HostCPUPct: 2},
		{T: 2.02, Dur: 0.5, CPUUserPct: 10, RSSMB: 310, Threads: 221, GenCPUPct: 9},
	}
	got := withProcess(local, remote)
	if len(got) != 3 {
		t.Fatalf("%d samples, want 3 (two merged, one added): %+v", len(got), got)
	}
	if x := got[0]; x.CPUUserPct != 80 || x.CPUSysPct != 20 || x.RSSMB != 300 || x.Threads != 220 || x.HostCPUPct != 4 || x.HostStealPct != 1 || !x.JVM || x.HeapUsedMB != 50 {
		t.Errorf("second 0: %+v, want the target host's process and host figures beside this machine's JVM scrape", x)
	}
	if x := got[2]; x.T != 2.02 || x.CPUUserPct != 10 || x.GenCPUPct != 0 {
		t.Errorf("second 2: %+v, want the target host's sample, without the sampler's own CPU as the generator's", x)
	}
}

func TestHostNoiseText(t *testing.T) {
	ns := []noiseOn{{"target tl-target", 3.14, 0}, {"load tl-load1", 12, 0.5}}
	if got, want := noiseText(ns), "target tl-target 3.1% (steal 0.0%); load tl-load1 12.0% (steal 0.5%)"; got != want {
		t.Errorf("noiseText = %q, want %q", got, want)
	}
	if o, s := worst(ns); o != 12 || s != 0.5 {
		t.Errorf("worst = %g, %g; want 12, 0.5 (the busiest host gates the columns)", o, s)
	}
}
