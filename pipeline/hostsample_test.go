package pipeline

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/measure/telemetry"
	"github.com/threadlab/threadlab/store/record"
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

// cpuColumns: target_cpu_s from the target host's sampler under --hosts,
// else from the local sampler's window; per request over every group's
// requests (the one target served them all), in ms; 0 and 0 when not
// measured.
func TestCPUColumns(t *testing.T) {
	idle := telemetry.StartWith(context.Background(), os.Getpid(), "", telemetry.Options{Interval: time.Hour})
	idle.Stop() // its window never opened: nothing measured
	groups := func(n ...int64) *load.Result {
		r := &load.Result{}
		for _, x := range n {
			r.Groups = append(r.Groups, load.GroupResult{Requests: x})
		}
		return r
	}
	tests := []struct {
		why       string
		onHosts   *hostSampling
		res       *load.Result
		sec, perQ float64
	}{
		{"the target host's figure: 0.46 CPU-s over 600 requests is 0.7667 CPU-ms each",
			&hostSampling{cpu: telemetry.CPUSeconds{Sec: 0.46, OK: true}}, groups(600), 0.46, 0.7667},
		{"every group's requests count: 0.4 CPU-s over 300+100",
			&hostSampling{cpu: telemetry.CPUSeconds{Sec: 0.4, OK: true}}, groups(300, 100), 0.4, 1},
		{"CPU-seconds kept to 0.1 ms",
			&hostSampling{cpu: telemetry.CPUSeconds{Sec: 0.123456789, OK: true}}, groups(1000), 0.1235, 0.1235},
		{"no request completed: no cost per request",
			&hostSampling{cpu: telemetry.CPUSeconds{Sec: 0.2, OK: true}}, groups(0), 0.2, 0},
		{"not measured on the target host (a flag says why): 0, not the local figure",
			&hostSampling{cpu: telemetry.CPUSeconds{Sec: 9, OK: false}}, groups(600), 0, 0},
		{"one machine, a window never opened", nil, groups(600), 0, 0},
	}
	for _, tt := range tests {
		sec, perQ := cpuColumns(idle, tt.onHosts, tt.res)
		if sec != tt.sec || perQ != tt.perQ {
			t.Errorf("%s: %v CPU-s, %v CPU-ms per request; want %v, %v", tt.why, sec, perQ, tt.sec, tt.perQ)
		}
	}

	// One machine: the local sampler's window, opened and closed by the
	// trial's window (trialWindow), measures the target (here: this
	// process, burning 50 ms of CPU inside it).
	s := telemetry.StartWith(context.Background(), os.Getpid(), "", telemetry.Options{Interval: time.Hour})
	w := trialWindow(s, nil)
	w.begin()
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	w.end()
	s.Stop()
	if sec, perQ := cpuColumns(s, nil, groups(10)); sec <= 0 || math.Abs(perQ-sec*100) > 0.01 {
		t.Errorf("a local window around 50 ms of busy loop: %v CPU-s, %v CPU-ms per request; want > 0 and a tenth in ms", sec, perQ)
	}
	if hs := (&hostSampling{}); trialWindow(s, hs) != window(hs) {
		t.Errorf("under --hosts the trial's window is the host samplers'")
	}
}

// A single-machine run fills target_cpu_s and target_cpu_ms_per_req of
// every trial from the target's window (the in-process target is this
// process, so its CPU-seconds are the load generator's and the server's).
func TestTrialCPUSeconds(t *testing.T) {
	s, err := Run(context.Background(), parse(t, 2), opts(t, &inproc{}))
	if err != nil {
		t.Fatal(err)
	}
	trials, err := record.ReadCSV[record.Trial](s.Dir, record.TrialsFile)
	if err != nil || len(trials) != 4 {
		t.Fatalf("%d trials (%v), want 2 variants x 2", len(trials), err)
	}
	for _, tr := range trials {
		if tr.TargetCPUSec <= 0 || strings.Contains(tr.Flags, telemetry.FlagCPUWindowLost) {
			t.Errorf("%s trial %d: %v CPU-s, flags %q; want measured", tr.Variant, tr.Trial, tr.TargetCPUSec, tr.Flags)
		}
		// 40 requests a burst: CPU-ms per request is CPU-s x 1000 / 40.
		if want := tr.TargetCPUSec * 1000 / 40; math.Abs(tr.TargetCPUMsPerReq-want) > 0.01 {
			t.Errorf("%s trial %d: %v CPU-ms per request, want %v (%v CPU-s over 40 requests)", tr.Variant, tr.Trial, tr.TargetCPUMsPerReq, want, tr.TargetCPUSec)
		}
	}
}
