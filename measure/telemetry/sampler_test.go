package telemetry

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadlab/threadlab/env"
)

// fakeJVM serves Prometheus text whose GC counters grow by 2 pauses and
// 10 ms per scrape, its pinned-event counter by 3 and its JIT time by 7 ms,
// as a JVM collecting (pinning, compiling) steadily would, and restart from a small value at scrape
// number resetAt (a JVM that restarted).
type fakeJVM struct {
	scrapes atomic.Int64
	resetAt int64
}

func (f *fakeJVM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.scrapes.Add(1) // 1 is the sampler's baseline scrape
	count, sum, pinned, jit := float64(100+2*n), 1.0+0.010*float64(n), float64(50+3*n), float64(9000+7*n)
	if f.resetAt > 0 && n >= f.resetAt {
		count, sum, pinned, jit = float64(1+2*(n-f.resetAt)), 0.005+0.010*float64(n-f.resetAt), float64(1+3*(n-f.resetAt)), float64(2+7*(n-f.resetAt))
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintf(w, `# TYPE jvm_threads_live_threads gauge
jvm_threads_live_threads 21.0
jvm_threads_peak_threads 25.0
jvm_memory_used_bytes{area="heap",id="G1 Eden Space"} 2097152.0
jvm_memory_used_bytes{area="heap",id="G1 Old Gen"} 1048576.0
jvm_memory_used_bytes{area="nonheap",id="Metaspace"} 9.9E7
jvm_gc_pause_seconds_count{action="end of minor GC",gc="G1 Young Generation"} %g
jvm_gc_pause_seconds_sum{action="end of minor GC",gc="G1 Young Generation"} %g
hikaricp_connections_active{pool="HikariPool-1"} 4.0
hikaricp_connections_pending{pool="HikariPool-1"} 9.0
threadlab_virtual_inflight 7.0
threadlab_virtual_pinned_total %g
# TYPE jvm_compilation_time_ms_total counter
jvm_compilation_time_ms_total{compiler="HotSpot 64-Bit Tiered Compilers"} %g
a malformed line
`, count, sum, pinned, jit)
}

// burn keeps one core busy until stop is closed, so the sampled process
// (this test binary) has CPU to measure.
func burn(stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	x := 1.0
	for {
		select {
		case <-stop:
			_ = x
			return
		default:
			for i := 0; i < 10000; i++ {
				x = math.Sqrt(x + float64(i))
			}
		}
	}
}

func TestSamplerOnSelf(t *testing.T) {
	jvm := &fakeJVM{resetAt: 5}
	srv := httptest.NewServer(jvm)
	defer srv.Close()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go burn(stop, &wg)

	const interval = 150 * time.Millisecond
	s := Start(context.Background(), os.Getpid(), srv.URL, interval)
	// Wait for the event, not the clock: the baseline scrape and 6
	// samples' (a busy host's ticker drops ticks, so 6.5 intervals of
	// sleep may hold fewer).
	for deadline := time.Now().Add(30 * time.Second); jvm.scrapes.Load() < 7; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d scrapes in 30 s at a %v interval", jvm.scrapes.Load(), interval)
		}
	}
	samples := s.Stop()
	close(stop)
	wg.Wait()

	// Each sample is one scrape after the baseline (Stop's partial one
	// too, when it takes it).
	if len(samples) < 6 || int64(len(samples)) != jvm.scrapes.Load()-1 {
		t.Fatalf("%d samples for %d scrapes after the baseline, want one each and at least 6: %+v", len(samples), jvm.scrapes.Load()-1, samples)
	}
	// Intervals tile the run: each starts where the previous ended, the
	// first at 0, so int(T) lines up with the client's per-second buckets.
	if samples[0].T != 0 {
		t.Errorf("first sample starts at %v, want 0", samples[0].T)
	}
	for i, x := range samples {
		if i > 0 && math.Abs(x.T-(samples[i-1].T+samples[i-1].Dur)) > 0.002 {
			t.Errorf("sample %d starts at %v, previous ended at %v", i, x.T, samples[i-1].T+samples[i-1].Dur)
		}
		if x.Dur <= 0 || x.Dur > 3*interval.Seconds() {
			t.Errorf("sample %d: dur %v", i, x.Dur)
		}
		if !x.JVM {
			t.Errorf("sample %d: scrape failed: %v", i, msgs(s))
			continue
		}
		if x.Threads < 2 || x.RSSMB < 1 {
			t.Errorf("sample %d: os threads %d, rss %.1f MB: a Go test binary has several threads and MBs of RSS", i, x.Threads, x.RSSMB)
		}
		if x.JVMLiveThreads != 21 || x.JVMPeakThreads != 25 || x.HikariActive != 4 || x.HikariPending != 9 || !x.Virtual || x.VirtualThreads != 7 {
			t.Errorf("sample %d: gauges %+v", i, x)
		}
		// Heap pools only: 2 MiB eden + 1 MiB old = 3 MiB; metaspace excluded.
		if x.HeapUsedMB != 3 {
			t.Errorf("sample %d: heap %v MB, want 3", i, x.HeapUsedMB)
		}
		// Scrape i+2 (i+1 after the baseline) adds 2 pauses and 10 ms to the
		// cumulative counters: the delta is 2 and 10 ms every interval, never
		// the running total (102, 104, ...). At scrape 5 the JVM "restarted"
		// and reports 1 pause / 5 ms since: the delta is that, not negative.
		// The pinned-event counter likewise: +3 a scrape, 1 after the restart.
		wantCount, wantMs, wantPinned, wantJIT := 2.0, 10.0, 3.0, 7.0
		if i+2 == int(jvm.resetAt) {
			wantCount, wantMs, wantPinned, wantJIT = 1, 5, 1, 2
		}
		if x.GCCount != wantCount || math.Abs(x.GCPauseMs-wantMs) > 1e-6 {
			t.Errorf("sample %d: gc %v pauses %v ms, want %v and %v", i, x.GCCount, x.GCPauseMs, wantCount, wantMs)
		}
		if !x.Pinned || x.PinnedEvents != wantPinned {
			t.Errorf("sample %d: pinned events %v (counter seen %v), want %v", i, x.PinnedEvents, x.Pinned, wantPinned)
		}
		if !x.JIT || x.JITMs != wantJIT {
			t.Errorf("sample %d: JIT %v ms (counter seen %v), want %v: the growth of the compile-time counter, not its total", i, x.JITMs, x.JIT, wantJIT)
		}
		// Host figures are % of one core: at most 100 per CPU.
		if lim := 100 * float64(runtime.NumCPU()); x.HostCPUPct < 0 || x.HostCPUPct > lim || x.HostStealPct < 0 || x.HostStealPct > lim {
			t.Errorf("sample %d: host %v%% steal %v%%", i, x.HostCPUPct, x.HostStealPct)
		}
	}
	// The busy goroutine runs in this process, which is both target and
	// generator here: /proc/<pid>/stat ticks and getrusage are two independent
	// measurements of the same CPU and must agree (ticks are 10 ms, so compare
	// means). How much of a core the goroutine gets depends on what else the
	// shared machine runs, so only a floor is asserted on the level.
	var target, gen float64
	for _, x := range samples {
		target += x.CPUUserPct + x.CPUSysPct
		gen += x.GenCPUPct
	}
	target /= float64(len(samples))
	gen /= float64(len(samples))
	if target < 5 || gen < 5 {
		t.Errorf("mean cpu while burning a core: target %.0f%%, generator %.0f%%; want both above 5%%", target, gen)
	}
	if math.Abs(target-gen) > 20 {
		t.Errorf("same process measured two ways: /proc %.0f%% vs getrusage %.0f%%", target, gen)
	}
	w := strings.Join(msgs(s), "\n")
	if !strings.Contains(w, "went backwards") || !strings.Contains(w, "malformed lines") {
		t.Errorf("warnings should report the counter reset and the malformed line: %q", w)
	}
	if again := s.Stop(); len(again) != len(samples) {
		t.Errorf("second Stop returned %d samples, want the same %d", len(again), len(samples))
	}
}

func TestSamplerWithoutMetrics(t *testing.T) {
	s := Start(context.Background(), os.Getpid(), "", 50*time.Millisecond)
	// 12 intervals for the 3 samples asked: a time.Ticker drops ticks when
	// the host is busy, so a window of just over 3 intervals flakes.
	time.Sleep(600 * time.Millisecond)
	samples := s.Stop()
	if len(samples) < 3 {
		t.Fatalf("%d samples", len(samples))
	}
	for _, x := range samples {
		if x.JVM || x.JVMLiveThreads != 0 || x.GCCount != 0 || x.HeapUsedMB != 0 {
			t.Errorf("no metrics url: JVM fields must be 0 with jvm=false, got %+v", x)
		}
		if x.Threads == 0 {
			t.Errorf("process figures still sampled: %+v", x)
		}
	}
	if w := msgs(s); len(w) != 0 {
		t.Errorf("no metrics url is not a problem: %q", w)
	}
}

func TestSamplerFailingEndpoint(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	s := Start(context.Background(), os.Getpid(), srv.URL+"/actuator/prometheus", 50*time.Millisecond)
	time.Sleep(130 * time.Millisecond)
	samples := s.Stop()
	for _, x := range samples {
		if x.JVM {
			t.Errorf("404 endpoint counted as a scrape: %+v", x)
		}
	}
	if w := strings.Join(msgs(s), "\n"); !strings.Contains(w, "404") || !strings.Contains(w, "prometheus on the classpath") {
		t.Errorf("warning should name the status and how to fix it: %q", w)
	}
}

func TestSamplerTargetExits(t *testing.T) {
	cmd := exec.Command("sleep", "0.15")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := Start(context.Background(), cmd.Process.Pid, "", 50*time.Millisecond)
	_ = cmd.Wait() // reaped: /proc/<pid> disappears
	time.Sleep(150 * time.Millisecond)
	samples := s.Stop()
	if len(samples) == 0 {
		t.Fatal("no samples")
	}
	last := samples[len(samples)-1]
	if last.Threads != 0 || last.RSSMB != 0 || last.CPUUserPct != 0 {
		t.Errorf("sample after exit has process figures: %+v", last)
	}
	if w := strings.Join(msgs(s), "\n"); !strings.Contains(w, "gone") {
		t.Errorf("no warning about the exited target: %q", w)
	}
}

func TestSamplerContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := Start(ctx, os.Getpid(), "", 20*time.Millisecond)
	time.Sleep(70 * time.Millisecond)
	cancel()
	done := make(chan []Sample)
	go func() { done <- s.Stop() }()
	select {
	case got := <-done:
		if len(got) == 0 {
			t.Error("samples taken before the context ended were lost")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Stop hangs after the context ended")
	}
}

func TestOutsidePct(t *testing.T) {
	for _, tt := range []struct {
		why     string
		d       env.CPUTimes
		selfSec float64
		want    float64
	}{
		// 2 cpus x 0.5 s = 100 ticks: 60 busy, 40 idle. This process used
		// 0.2 s = 20 ticks of them: (60-20)/100 = 40% busy outside.
		{"some of the busy time is ours", env.CPUTimes{User: 50, System: 10, Idle: 40}, 0.2, 40},
		// All busy time is ours: nothing outside.
		{"only us", env.CPUTimes{User: 30, Idle: 70}, 0.3, 0},
		// getrusage and /proc/stat tick at different moments: ours may exceed
		// the busy ticks by a tick; never negative.
		{"clock skew", env.CPUTimes{User: 10, Idle: 90}, 0.11, 0},
		// Steal is not busy: the hypervisor ran someone else.
		{"steal is not ours or theirs", env.CPUTimes{User: 10, Idle: 60, Steal: 30}, 0, 10},
		{"no time passed", env.CPUTimes{}, 0, 0},
	} {
		if got := outsidePct(tt.d, tt.selfSec); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", tt.why, got, tt.want)
		}
	}
}

func TestCoolDown(t *testing.T) {
	// A threshold no host exceeds: one window and done.
	waited, busy := CoolDown(context.Background(), 101, 5*time.Second)
	if waited < coolWindow || waited > 3*coolWindow || busy < 0 || busy > 100 {
		t.Errorf("idle gate: waited %v busy %.1f%%", waited, busy)
	}
	// An impossible threshold: bounded by maxWait, and the busy share is still reported.
	start := time.Now()
	waited, _ = CoolDown(context.Background(), 1e-9, 1200*time.Millisecond)
	if el := time.Since(start); el > 2*time.Second || waited > 1500*time.Millisecond {
		t.Errorf("gate not bounded by maxWait: waited %v, took %v", waited, el)
	}
	// A cancelled context returns at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	CoolDown(ctx, 1e-9, time.Minute)
	if time.Since(start) > 100*time.Millisecond {
		t.Error("cancelled context: CoolDown kept waiting")
	}
}

// TestSamplerWithoutPinnedCounter: a target that does not count pinned
// events (webflux, spring-mvc without threadlab.pinned-events.enabled) has
// no threadlab_virtual_pinned_total; its samples say so (Pinned false)
// rather than claim a measured 0.
func TestSamplerWithoutPinnedCounter(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "jvm_gc_pause_seconds_count %d\njvm_gc_pause_seconds_sum 0.1\n", n.Add(1))
	}))
	defer srv.Close()
	s := Start(context.Background(), os.Getpid(), srv.URL, 50*time.Millisecond)
	// The baseline scrape and two samples' (an event, not 3.6 intervals of
	// sleep, which a busy host's ticker may not fill).
	for deadline := time.Now().Add(30 * time.Second); n.Load() < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d scrapes in 30 s at a 50 ms interval", n.Load())
		}
	}
	samples := s.Stop()
	if len(samples) < 2 {
		t.Fatalf("%d samples", len(samples))
	}
	for i, x := range samples {
		if !x.JVM || x.Pinned || x.PinnedEvents != 0 || x.GCCount != 1 || x.JIT || x.JITMs != 0 {
			t.Errorf("sample %d: jvm %v pinned %v (%v events), jit %v (%v ms), gc %v; want a scrape without the pinned or JIT counters and 1 pause", i, x.JVM, x.Pinned, x.PinnedEvents, x.JIT, x.JITMs, x.GCCount)
		}
	}
}

// TestPinnedCounterSurvivesAStarvedScrape: on JDK 21 a pinned burst holds
// every carrier, so the actuator's scrape (a virtual thread too) times out
// in the middle of the window. The pinned-event counter is cumulative: the
// next good scrape's delta covers the gap, so a failed scrape in the middle
// spoils the gauges (scrape_failed) but not pinned_events; only a failed
// last scrape does (final_scrape_failed).
func TestPinnedCounterSurvivesAStarvedScrape(t *testing.T) {
	for _, tt := range []struct {
		name      string
		failFrom  int64 // scrapes from this number on fail (0: none)
		failOnly  int64 // only this scrape fails (0: none)
		wantFinal bool
		why       string
	}{
		{"middle scrape fails", 0, 3, false, "the 4th scrape's delta carries the 3rd's events: the total is whole"},
		{"last scrapes fail", 3, 0, true, "what happened after the last good scrape is lost: the count is short"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				k := n.Add(1) // 1 is the baseline
				if k == tt.failOnly || (tt.failFrom > 0 && k >= tt.failFrom) {
					http.Error(w, "starved", http.StatusServiceUnavailable)
					return
				}
				fmt.Fprintf(w, "jvm_gc_pause_seconds_count 1\njvm_gc_pause_seconds_sum 0.1\nthreadlab_virtual_pinned_total %d\n", 10+5*k)
			}))
			defer srv.Close()
			s := Start(context.Background(), os.Getpid(), srv.URL, 60*time.Millisecond)
			time.Sleep(5*60*time.Millisecond + 30*time.Millisecond)
			samples := s.Stop()
			scrapes := n.Load()
			var sum float64
			for _, x := range samples {
				sum += x.PinnedEvents
			}
			codes := map[string]bool{}
			for _, f := range s.Flags() {
				codes[f.Code] = true
			}
			if !codes[FlagScrapeFailed] {
				t.Errorf("flags %v: want scrape_failed", codes)
			}
			if codes[FlagFinalScrapeFailed] != tt.wantFinal {
				t.Errorf("final_scrape_failed = %v, want %v (%s)", codes[FlagFinalScrapeFailed], tt.wantFinal, tt.why)
			}
			if !tt.wantFinal {
				// counter = 10 + 5k at scrape k: the last good scrape (the last
				// one) minus the baseline (k=1) is 5 * (scrapes - 1).
				if want := float64(5 * (scrapes - 1)); sum != want {
					t.Errorf("pinned events over the window %v, want %v over %d scrapes (%s)", sum, want, scrapes, tt.why)
				}
			}
			if slices.Contains(Affects(FlagScrapeFailed), "pinned_events") || !slices.Contains(Affects(FlagFinalScrapeFailed), "pinned_events") {
				t.Errorf("pinned_events must be spoiled by final_scrape_failed only, not by a scrape failed in the middle")
			}
		})
	}
}

// msgs are the sentences of the sampler's flags, one per code.
func msgs(s *Sampler) []string {
	var out []string
	for _, f := range s.Flags() {
		out = append(out, f.Msg)
	}
	return out
}

// A rate divides a counter's growth by the time between its two reads, not
// between the samples' stamps: a sampler preempted after its stamp read
// more ticks than its stamps' interval held (765% of one core on 2 CPUs).
func TestBetween(t *testing.T) {
	t0 := time.Unix(100, 0)
	for _, c := range []struct {
		why       string
		cur, prev time.Time
		dt, want  float64
	}{
		{"both reads stamped: their distance", t0.Add(650 * time.Millisecond), t0, 0.15, 0.65},
		{"no stamp on the current read: the samples' dt", time.Time{}, t0, 0.15, 0.15},
		{"no stamp on the previous read: the samples' dt", t0, time.Time{}, 0.15, 0.15},
		{"stamps out of order (a clock step): the samples' dt", t0, t0.Add(time.Second), 0.15, 0.15},
	} {
		if got := between(c.cur, c.prev, c.dt); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", c.why, got, c.want)
		}
	}
}

// TestBaselineBeforeStartReturns: the GC baseline is scraped before
// StartWith returns, so the load starts after it (the baseline neither
// competes with the window's first requests nor times out behind them),
// and a first scrape that fails is tried once more.
func TestBaselineBeforeStartReturns(t *testing.T) {
	tests := []struct {
		why      string
		failures int64 // scrapes answered 500 before the good ones
		flagged  bool
	}{
		{"a good first scrape: baseline taken before StartWith returns", 0, false},
		{"one failed scrape: the retry takes the baseline", 1, false},
		{"two failed scrapes: no baseline, and the flag says so", 2, true},
	}
	for _, tt := range tests {
		var n atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) <= tt.failures {
				http.Error(w, "busy", http.StatusInternalServerError)
				return
			}
			fmt.Fprint(w, "jvm_gc_pause_seconds_count 7\njvm_gc_pause_seconds_sum 0.1\n")
		}))
		s := StartWith(context.Background(), os.Getpid(), srv.URL, Options{Interval: 50 * time.Millisecond})
		atStart := n.Load()
		if atStart < min(tt.failures+1, 2) {
			t.Errorf("%s: %d scrapes when StartWith returned", tt.why, atStart)
		}
		// One sample's scrape after the start: the flag is raised there.
		for deadline := time.Now().Add(30 * time.Second); n.Load() <= atStart; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no sample scrape in 30 s at a 50 ms interval", tt.why)
			}
		}
		s.Stop()
		flagged := slices.ContainsFunc(s.Flags(), func(f Flag) bool { return f.Code == FlagNoGCBaseline })
		if flagged != tt.flagged {
			t.Errorf("%s: no_gc_baseline flagged = %v, want %v (flags %v)", tt.why, flagged, tt.flagged, s.Flags())
		}
		srv.Close()
	}
}
