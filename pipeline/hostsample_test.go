package pipeline

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadlab/threadlab/env/remote"
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/measure/telemetry"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/pipeline/trial"
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

// loadEdges: a multi-host trial's window is told afterwards where the
// load began and ended on the controller's clock: the earliest group's
// release (a burst's once its connections are up, not the agreed start
// before its connects) and the latest group's last answer.
func TestLoadEdges(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	ms := time.Millisecond
	tests := []struct {
		why         string
		groups      []load.GroupResult
		first, last time.Duration // after Start
	}{
		{why: "one burst of one generator, released 140 ms after the start (its 600 connects), answered in 400 ms",
			groups: []load.GroupResult{{Model: "burst", Release: 140 * ms, Wall: 400 * ms}}, first: 140 * ms, last: 540 * ms},
		{why: "a burst and a closed group: the closed one sends at the start and ends last",
			groups: []load.GroupResult{{Model: "burst", Release: 50 * ms, Wall: 300 * ms}, {Model: "closed", Wall: 900 * ms}}, first: 0, last: 900 * ms},
		{why: "two bursts: the earlier release, the later last answer",
			groups: []load.GroupResult{{Model: "burst", Release: 80 * ms, Wall: 100 * ms}, {Model: "burst", Release: 30 * ms, Wall: 400 * ms}}, first: 30 * ms, last: 430 * ms},
		{why: "no groups: an empty window at the start", first: 0, last: 0},
	}
	for _, tt := range tests {
		first, last := loadEdges(&load.Result{Start: t0, Groups: tt.groups})
		if first.Sub(t0) != tt.first || last.Sub(t0) != tt.last {
			t.Errorf("%s: %v..%v after the start, want %v..%v", tt.why, first.Sub(t0), last.Sub(t0), tt.first, tt.last)
		}
	}
}

// edgesRecorder is a host window (like hostSampling) that records when it
// opened and the edges it was told.
type edgesRecorder struct {
	fakeWindow
	edges [][2]time.Duration
}

func (w *edgesRecorder) endAt(from, to time.Duration) {
	w.mu.Lock()
	w.edges = append(w.edges, [2]time.Duration{from, to})
	w.mu.Unlock()
}

// A multi-host trial's host window opens at the agents' planned release,
// which for one generator's burst is the agreed start, before its
// connects; it is told afterwards the burst's actual release (after the
// connects, the first request) and its last answer, so the target's CPU
// for accepting the connections stays out of it, as on one machine (where
// the window opens at load.Run's release: TestLocalWindow).
func TestHostWindowEdges(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		hits.Add(1)
		time.Sleep(20 * time.Millisecond)
	}))
	defer srv.Close()
	ag := &inprocAgents{}
	hr := &hostRun{rec: &record.Hosts{}, load: make([]*remote.Host, 1), spawn: ag.spawn, warned: map[string]bool{}}
	defer hr.close()
	s := &State{M: parse(t, 1)}
	plan := load.Plan{Target: srv.URL, Groups: []load.Group{{Name: "b", Model: load.Burst, Burst: 50, Requests: []load.Request{{Path: "/"}}}}}
	w := &edgesRecorder{}
	atBegin := int64(-1)
	w.onBegin = func() { atBegin = hits.Load() }
	res, err := hr.drive(context.Background(), s, plan, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.begins) != 1 || len(w.edges) != 1 || len(w.ends) != 0 {
		t.Fatalf("window opened %d times, told its edges %d times, closed without them %d times; want 1, 1, 0", len(w.begins), len(w.edges), len(w.ends))
	}
	g := res.Groups[0]
	from, to := w.edges[0][0], w.edges[0][1]
	release := res.Start.Add(g.Release)
	if atBegin != 0 || from < 0 {
		t.Errorf("the window opened with %d requests served, %v before the release; want it open before the first request", atBegin, from)
	}
	if d := w.begins[0].Add(from).Sub(release).Abs(); d > time.Millisecond {
		t.Errorf("told the release at %v after the window opened, the burst left %v after it: want the burst's release (within 1 ms)", from, release.Sub(w.begins[0]))
	}
	if d := (to - from - g.Wall).Abs(); d > time.Millisecond || g.Wall < 20*time.Millisecond {
		t.Errorf("told the last answer %v after the release, the burst's wall is %v: want them equal (and at least one 20 ms answer)", to-from, g.Wall)
	}
}

// rowSamples: under --hosts a trial's row reads the samples taken between
// the load's release and its last answer, as on one machine, while the
// series keeps every sample. The host samplers opened 0.2 s after this
// machine's sampler started; the agents' connects took 2.3 s after that,
// and the burst's last answer came 0.95 s after its release: 2.5..3.45 s
// after this machine's origin. This machine's scrapes read at 1, 2, 3 and
// 3.5 s: those at 3 (inside) and 3.5 s (closing the window) count, with
// 130 MiB of heap, 41 live threads and 1 GC; those at 1 and 2 s (90 MiB,
// 50 threads, 3 GCs while the connections were accepted) do not. The
// target host's samples within the edges (remote.Sampling.Window) read
// 305 MiB and 36 threads at most; the series' connect-phase reading of
// 340 MiB and 44 threads does not count. target_cpu_pct is their mean
// weighted by length: (80×1 + 60×0.3)/1.3 = 75.38.
func TestRowSamples(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	jvm := func(at, dur, heap, live, gc float64) telemetry.Sample {
		return telemetry.Sample{T: at, Dur: dur, JVM: true, HeapUsedMB: heap, JVMLiveThreads: live, GCCount: gc}
	}
	local := []telemetry.Sample{jvm(0, 1, 80, 50, 1), jvm(1, 1, 90, 48, 2), jvm(2, 1, 120, 40, 1), jvm(3, 0.5, 130, 41, 0)}
	target := []telemetry.Sample{
		{T: 2.04, Dur: 1, CPUUserPct: 70, CPUSysPct: 10, RSSMB: 300, Threads: 35, GenCPUPct: 2},
		{T: 3.04, Dur: 0.3, CPUUserPct: 60, RSSMB: 305, Threads: 36},
	}
	// What stop returned for the series: this machine's samples with every
	// target-host sample merged in, the connects' reading among them.
	series := withProcess(slices.Clone(local), append([]telemetry.Sample{{T: 1.04, Dur: 1, CPUUserPct: 20, RSSMB: 340, Threads: 44}}, target...))
	edged := func(mod func(*hostSampling)) *hostSampling {
		hs := &hostSampling{origin: t0, opened: t0.Add(200 * time.Millisecond), from: 2300 * time.Millisecond, to: 3250 * time.Millisecond,
			edged: true, local: local, target: target, targetOK: true}
		if mod != nil {
			mod(hs)
		}
		return hs
	}
	tests := []struct {
		why        string
		hs         *hostSampling
		rss        float64
		threads    int
		cpu        float64 // target_cpu_pct
		heap, live float64
		gc         int64
	}{
		{"under --hosts, told its edges: the readings within them", edged(nil), 305, 36, 75.38, 130, 41, 1},
		{"one machine: the samples as stop would give them (here, the series)", nil, 340, 44, 0, 130, 50, 4},
		{"the window was not told its edges (the load failed before its release): every sample", edged(func(hs *hostSampling) { hs.edged = false }), 340, 44, 0, 130, 50, 4},
		{"the target host's report did not come back (the trial is invalid for it): every sample", edged(func(hs *hostSampling) { hs.targetOK = false }), 340, 44, 0, 130, 50, 4},
	}
	j := replicate.Job{Cell: replicate.Cell{Variant: experiments.Variant{Name: "virtual"}}, Fork: 1}
	res := &load.Result{Groups: []load.GroupResult{{Name: "burst", Requests: 600}}}
	for _, tt := range tests {
		r := trial.Rows("burst", j, 1, "", res, tt.hs.rowSamples(series), nil)[0]
		if r.TargetRSSMB != tt.rss || r.TargetThreads != tt.threads || r.PeakHeapMB != tt.heap || float64(r.JVMLiveThreads) != tt.live || r.GCCount != tt.gc {
			t.Errorf("%s: peak RSS %v MiB, %d threads, heap %v MiB, %d live threads, %d GCs; want %v, %d, %v, %v, %d",
				tt.why, r.TargetRSSMB, r.TargetThreads, r.PeakHeapMB, r.JVMLiveThreads, r.GCCount, tt.rss, tt.threads, tt.heap, tt.live, tt.gc)
		}
		if tt.cpu > 0 && math.Abs(r.TargetCPUPct-tt.cpu) > 0.01 {
			t.Errorf("%s: target CPU %.2f%% of one core, want %.2f%%", tt.why, r.TargetCPUPct, tt.cpu)
		}
	}
	if rss, _ := gaugePeaks(series); len(series) != 4 || rss != 340 {
		t.Errorf("the series: %d samples, peak RSS %v MiB; want every second (4) with the connects' 340 MiB, untouched by the row's window", len(series), rss)
	}
}
