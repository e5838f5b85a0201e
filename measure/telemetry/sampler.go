// Package telemetry is the server's side of a trial: while the load
// generator measures from the client, a Sampler reads the target process
// from /proc (CPU, RSS, OS threads), the JVM from its Prometheus endpoint
// (threads, heap, GC, HikariCP pool), this process's own CPU (the load
// generator runs in-process), the CPU of every other process on the host
// and the hypervisor's steal, once per
// interval, on the same clock as the client's per-second series.
//
// Data flow: the pipeline calls Start when measurement begins and Stop when
// it ends, and joins the samples with the client series into series.csv;
// CoolDown gates each trial on an idle host. Cumulative counters (CPU ticks,
// GC count and pause time) become per-interval deltas here, once, with
// counter resets handled, so no consumer ever sums a cumulative value (the
// mistake in seed 002's history). A CPUWindow (cpuwindow.go) reads the
// target's cumulative CPU time only at the load's release and its last
// answer (Sampler.Begin and End on one machine, remote-helper sample on
// the target's host), for the trial's CPU-seconds.
package telemetry

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/threadlab/threadlab/env"
)

// Sample is the server's view of one interval. Percentages of CPU are of
// one core (200% = two cores busy), for processes and the host alike. T is
// the start of the interval in seconds since Start, so with a 1s interval
// int(T) is the same bucket index as the client's per-second series
// (load.Second.T, requests completed in [T, T+1)); Dur is its length,
// shorter for the last, partial interval that Stop samples.
type Sample struct {
	T          float64 `json:"t" csv:"t_s"`
	Dur        float64 `json:"dur_s" csv:"dur_s"`
	CPUUserPct float64 `json:"cpu_user_pct" csv:"cpu_user_pct"` // target process, % of one core
	CPUSysPct  float64 `json:"cpu_sys_pct" csv:"cpu_sys_pct"`
	RSSMB      float64 `json:"rss_mb" csv:"rss_mb"`
	Threads    int     `json:"threads" csv:"threads"` // OS threads, /proc/<pid>/status
	// JVM is true when the fields from JVMLiveThreads to VirtualThreads come
	// from a scrape in this interval; false (and the fields 0) without a
	// metrics URL or when the scrape failed. 0 is not NaN because NaN cannot
	// be written as JSON; the flag says whether 0 was measured.
	JVM            bool    `json:"jvm" csv:"jvm"`
	JVMLiveThreads float64 `json:"jvm_live_threads" csv:"jvm_live_threads"`
	JVMPeakThreads float64 `json:"jvm_peak_threads" csv:"jvm_peak_threads"`
	HeapUsedMB     float64 `json:"heap_used_mb" csv:"heap_used_mb"`
	GCCount        float64 `json:"gc_count" csv:"gc_count"`       // pauses in this interval
	GCPauseMs      float64 `json:"gc_pause_ms" csv:"gc_pause_ms"` // pause time in this interval
	HikariActive   float64 `json:"hikari_active" csv:"hikari_active"`
	HikariPending  float64 `json:"hikari_pending" csv:"hikari_pending"`
	// VirtualThreads is the built-in targets' threadlab_virtual_inflight:
	// requests being handled on virtual threads at the scrape (Micrometer
	// has no live virtual-thread gauge; jvm_threads_live_threads counts
	// platform threads only). 0 for a target without the gauge, which
	// Virtual tells apart from a measured 0.
	VirtualThreads float64 `json:"virtual_threads" csv:"virtual_threads"`
	Virtual        bool    `json:"virtual" csv:"virtual"` // the scrape had threadlab_virtual_inflight
	// PinnedEvents is the growth in this interval of the spring-mvc target's
	// threadlab_virtual_pinned_total: jdk.VirtualThreadPinned events the JVM's
	// JFR recorded (an in-process RecordingStream counts them; env/targets,
	// threadlab.pinned-events.enabled). Pinned is true when the scrape had the
	// counter, which tells a measured 0 from a target that does not count.
	PinnedEvents float64 `json:"pinned_events" csv:"pinned_events"`
	Pinned       bool    `json:"pinned" csv:"pinned"`
	// JITMs is the growth in this interval of jvm_compilation_time_ms_total
	// (Micrometer's JvmCompilationMetrics, the JVM's CompilationMXBean): the
	// time the JIT compilers spent compiling, summed over their threads, in
	// ms. It tells a fork that is still compiling from one whose level moved
	// for another reason (JMH's -prof comp reports the same per iteration).
	// JIT is true when the scrape had the counter.
	JITMs     float64 `json:"jit_ms" csv:"jit_ms"`
	JIT       bool    `json:"jit" csv:"jit"`
	GenCPUPct float64 `json:"gen_cpu_pct" csv:"gen_cpu_pct"` // this process (the generator), % of one core
	// HostCPUPct is CPU used on the host outside threadlab: the CPU time of
	// every process but this one and those of the experiment's own process
	// groups (the target's, see Options.Groups), kernel threads included,
	// with processes that died in the interval counted through their
	// reapers (otherDelta), in % of one core, so that the in-trial noise
	// gate reads "10% of one core" directly. It comes from the processes'
	// own accounting, as the target's and this process's figures do, not
	// from /proc/stat: see otherTicks.
	HostCPUPct float64 `json:"host_cpu_pct" csv:"host_cpu_pct"`
	// HostStealPct is CPU time the hypervisor gave to other guests, % of one core.
	HostStealPct float64 `json:"host_steal_pct" csv:"host_steal_pct"`
}

// Metric names read from the scrape (Micrometer's Prometheus names).
const (
	mLive    = "jvm_threads_live_threads"
	mPeak    = "jvm_threads_peak_threads"
	mHeap    = `jvm_memory_used_bytes{area="heap"}`
	mGCCount = "jvm_gc_pause_seconds_count"
	mGCSum   = "jvm_gc_pause_seconds_sum"
	mActive  = "hikaricp_connections_active"
	mPending = "hikaricp_connections_pending"
	mVirtual = "threadlab_virtual_inflight"     // the built-in targets' own gauge (env/targets)
	mPinned  = "threadlab_virtual_pinned_total" // jdk.VirtualThreadPinned events counted in the spring-mvc target
	mJIT     = "jvm_compilation_time_ms_total"  // Micrometer's JvmCompilationMetrics (Spring Boot's actuator binds it)
)

const mib = 1 << 20

// Sampler samples one target process until Stop.
type Sampler struct {
	pid      int
	url      string
	interval time.Duration
	client   *http.Client
	start    time.Time

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once

	// owned by the sampling goroutine until done is closed
	samples []Sample
	flags   []Flag
	warned  map[string]bool
	prev    reading
	groups  []int     // process groups whose CPU is the experiment's
	exe     string    // base name of threadlab's executable (Options.Exe)
	gc      *counters // last successful scrape's cumulative GC counters
	skipped int       // malformed metric lines over all scrapes
	lost    bool      // the target exited (or its pid was reused): no more process figures

	cpu *CPUWindow // the target's CPU-seconds from the load's release to its last answer (Begin, End)
}

// reading is the cumulative state at one instant.
type reading struct {
	at      time.Time
	procAt  time.Time // when proc was read
	hostAt  time.Time // when host was read
	proc    env.PidStat
	procOK  bool
	selfSec float64 // this process's user+sys CPU seconds
	host    env.CPUTimes
	hostOK  bool
	other   map[int]procTicks // processes outside the experiment, by pid (otherTicks)
	otherOK bool
	otherAt time.Time // when the process list was read
}

// counters are the cumulative counters of one scrape: GC pauses and their
// time, and pinned events (pinnedOK when the scrape had the counter).
type counters struct {
	count, sumSec float64
	pinned        float64
	pinnedOK      bool
	jit           float64
	jitOK         bool
}

// Start samples pid every interval until Stop or until ctx ends. metricsURL
// is the target's Prometheus endpoint, or "" when it has none (then the JVM
// fields stay 0 with JVM false). The first reading is taken before Start
// returns, so the first interval is exact.
func Start(ctx context.Context, pid int, metricsURL string, interval time.Duration) *Sampler {
	return StartWith(ctx, pid, metricsURL, Options{Interval: interval})
}

// Options tune a Sampler beyond Start's arguments.
type Options struct {
	Interval time.Duration // default 1s
	// Groups are process groups whose CPU belongs to the experiment (a
	// database cluster, say) and so is not host noise. The target's own
	// process group is always included.
	Groups []int
	// Exe, when set, is the base name of threadlab's executable: every
	// other process running an executable of that name is threadlab's too
	// (on a remote host, the load agents and helpers next to this sampler),
	// and its CPU is not host noise either.
	Exe string
}

// StartWith is Start with Options.
func StartWith(ctx context.Context, pid int, metricsURL string, o Options) *Sampler {
	interval := o.Interval
	if interval <= 0 {
		interval = time.Second
	}
	timeout := max(interval*3/4, 200*time.Millisecond)
	s := &Sampler{pid: pid, url: metricsURL, interval: interval, client: &http.Client{Timeout: timeout},
		stop: make(chan struct{}), done: make(chan struct{}), warned: map[string]bool{}}
	s.groups = append(s.groups, o.Groups...)
	s.exe = o.Exe
	s.cpu = NewCPUWindow(pid)
	if g, ok := processGroup(pid); ok {
		s.groups = append(s.groups, g)
	}
	s.start = time.Now()
	s.prev = s.read(s.start)
	if !s.prev.procOK {
		s.lost = true
		s.warnOnce(FlagPidUnreadable, "target pid %d not readable at start: its CPU, RSS and threads are 0", pid)
	}
	if s.url != "" {
		// Baseline for the GC deltas, before the load starts: without it
		// the first interval would carry every collection since the JVM
		// started. Taken here, not beside the load, so that it neither
		// competes with the window's first requests nor times out behind
		// them (a 0.3 s burst on a busy host lost its baseline, and with
		// it the pinned-event count); one retry.
		for try := 0; try < 2 && s.gc == nil && ctx.Err() == nil; try++ {
			if m, err := s.scrape(ctx); err == nil {
				s.gc = gcCounters(m)
			}
		}
	}
	go s.loop(ctx)
	return s
}

// Stop ends sampling, takes a last sample for the partial interval since
// the previous one (when it is at least a tenth of an interval long) and
// returns all samples. It may be called more than once.
func (s *Sampler) Stop() []Sample {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
	return append([]Sample(nil), s.samples...)
}

func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for {
		select {
		case now := <-tick.C:
			s.sample(ctx, now)
		case <-s.stop:
			if now := time.Now(); now.Sub(s.prev.at) >= s.interval/10 {
				s.sample(ctx, now)
			}
			if s.url != "" && (len(s.samples) == 0 || !s.samples[len(s.samples)-1].JVM) {
				s.warnOnce(FlagFinalScrapeFailed, "metrics: the last scrape of the window failed or was not taken: counters miss their last interval")
			}
			s.finish()
			return
		case <-ctx.Done():
			s.finish()
			return
		}
	}
}

func (s *Sampler) finish() {
	if s.skipped > 0 {
		s.warnOnce(FlagMalformed, "metrics: skipped %d malformed lines over all scrapes of %s", s.skipped, s.url)
	}
}

// warnOnce records a flag the first time code occurs.
func (s *Sampler) warnOnce(code, format string, a ...any) {
	if s.warned[code] {
		return
	}
	s.warned[code] = true
	s.flags = append(s.flags, Flag{Code: code, Msg: fmt.Sprintf(format, a...)})
}

// Flags returns what went wrong while sampling (target gone, scrapes
// failing, malformed metric lines, counter resets, a CPU window lost) as
// flags, each code once. Call after Stop.
func (s *Sampler) Flags() []Flag {
	<-s.done
	_, lost := s.cpu.CPU()
	return append(append([]Flag(nil), s.flags...), lost...)
}

// Begin opens the target's CPU window (CPUWindow.Begin): call it at the
// load's release, which on one machine comes after Start.
func (s *Sampler) Begin() { s.cpu.Begin() }

// End closes the target's CPU window: call it at the load's last answer.
func (s *Sampler) End() { s.cpu.End() }

// CPU is the target's CPU-seconds between Begin and End (not OK without
// them; Flags says why when they could not be measured).
func (s *Sampler) CPU() CPUSeconds {
	c, _ := s.cpu.CPU()
	return c
}

// read takes the cumulative counters now. Failures leave the *OK flags
// false; the caller decides what a gap means.
func (s *Sampler) read(at time.Time) reading {
	r := reading{at: at, selfSec: selfCPUSeconds()}
	r.other, r.otherOK = otherTicks(s.groups, s.exe)
	r.otherAt = time.Now()
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(s.pid) + "/stat"); err == nil {
		if st, err := env.ParsePidStat(b); err == nil {
			r.proc, r.procOK, r.procAt = st, true, time.Now()
		}
	}
	if f, err := os.Open("/proc/stat"); err == nil {
		if ps, err := env.ParseProcStat(f); err == nil {
			r.host, r.hostOK, r.hostAt = ps.All, true, time.Now()
		}
		f.Close()
	}
	return r
}

func selfCPUSeconds() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func (s *Sampler) sample(ctx context.Context, now time.Time) {
	// The counters are read now, whatever the tick's stamp says: a tick
	// waits in its channel while a slow scrape or a busy host delays the
	// loop, and dividing the ticks of the real interval by the stamps'
	// shorter one inflated the host's CPU (405% of one core on 2 CPUs, seen
	// in a CI run), which gates trials as host noise.
	now = time.Now()
	r := s.read(now)
	dt := now.Sub(s.prev.at).Seconds()
	if dt <= 0 {
		return
	}
	x := Sample{T: round3(s.prev.at.Sub(s.start).Seconds()), Dur: round3(dt)}
	x.GenCPUPct = max(0, r.selfSec-s.prev.selfSec) / dt * 100

	switch {
	case s.lost:
	case !r.procOK:
		s.lost = true
		s.warnOnce(FlagPidGone, "target pid %d gone at t=%.1fs: later samples have no process figures", s.pid, x.T+x.Dur)
	case s.prev.procOK && r.proc.StartTime != s.prev.proc.StartTime:
		// Same pid, another process: the old one died and the pid was reused.
		s.lost = true
		s.warnOnce(FlagPidReused, "pid %d was reused by another process at t=%.1fs", s.pid, x.T+x.Dur)
	default:
		if s.prev.procOK {
			// Over the time between the two reads of the counters, not
			// between the samples' stamps: a sampler preempted after its
			// stamp (a loaded host) read more ticks than its interval held.
			dp := between(r.procAt, s.prev.procAt, dt)
			x.CPUUserPct = tickDelta(r.proc.UTime, s.prev.proc.UTime) / env.UserHZ / dp * 100
			x.CPUSysPct = tickDelta(r.proc.STime, s.prev.proc.STime) / env.UserHZ / dp * 100
		}
		if f, err := os.Open("/proc/" + strconv.Itoa(s.pid) + "/status"); err == nil {
			if st, err := env.ParsePidStatus(f); err == nil {
				x.RSSMB, x.Threads = float64(st.RSSBytes)/mib, st.Threads
			}
			f.Close()
		}
	}
	if r.hostOK && s.prev.hostOK {
		d := r.host.Sub(s.prev.host)
		// As the process's: the host's ticks over the time between their
		// reads (a test on a host at load 8 read 765% of one core on 2 CPUs
		// when a stamp and its read were apart).
		dh := between(r.hostAt, s.prev.hostAt, dt)
		x.HostStealPct = float64(d.Steal) / env.UserHZ / dh * 100
		if !r.otherOK || !s.prev.otherOK {
			// No process list: all busy time but this process's, which
			// errs towards re-running a window.
			busy := float64(d.BusyTicks())/env.UserHZ - max(0, r.selfSec-s.prev.selfSec)
			x.HostCPUPct = max(0, busy) / dh * 100
		}
	}
	if r.otherOK && s.prev.otherOK {
		x.HostCPUPct = otherDelta(r.other, s.prev.other) / between(r.otherAt, s.prev.otherAt, dt) * 100
	}
	if s.url != "" {
		s.jvm(ctx, &x)
	}
	s.prev = r
	s.samples = append(s.samples, x)
}

// between is the seconds from prev to cur, two reads of a counter; dt when
// either read has no time.
func between(cur, prev time.Time, dt float64) float64 {
	if cur.IsZero() || prev.IsZero() || !cur.After(prev) {
		return dt
	}
	return cur.Sub(prev).Seconds()
}

// tickDelta is the growth of a cumulative counter; one that went backwards
// belongs to a new process and counts from zero.
func tickDelta(cur, prev uint64) float64 {
	if cur < prev {
		return float64(cur)
	}
	return float64(cur - prev)
}

func (s *Sampler) jvm(ctx context.Context, x *Sample) {
	m, err := s.scrape(ctx)
	if err != nil {
		s.warnOnce(FlagScrapeFailed, "metrics: scrape of %s failed at t=%.1fs (JVM fields 0, jvm=false there): %v", s.url, x.T+x.Dur, err)
		return
	}
	x.JVM = true
	x.JVMLiveThreads, x.JVMPeakThreads = m[mLive], m[mPeak]
	x.HeapUsedMB = m[mHeap] / mib
	x.HikariActive, x.HikariPending = m[mActive], m[mPending]
	x.VirtualThreads, x.Virtual = m[mVirtual]
	cur := gcCounters(m)
	if s.gc == nil {
		s.warnOnce(FlagNoGCBaseline, "metrics: no GC baseline before t=%.1fs; collections before it are not attributed to any interval", x.T+x.Dur)
	} else {
		dc, reset1 := CounterDelta(cur.count, s.gc.count)
		ds, reset2 := CounterDelta(cur.sumSec, s.gc.sumSec)
		if reset1 || reset2 {
			s.warnOnce(FlagCounterReset, "metrics: GC counters went backwards at t=%.1fs (JVM restarted?); counted from zero", x.T+x.Dur)
		}
		x.GCCount, x.GCPauseMs = dc, ds*1000
		if cur.pinnedOK && s.gc.pinnedOK {
			dp, reset := CounterDelta(cur.pinned, s.gc.pinned)
			if reset {
				s.warnOnce(FlagCounterReset, "metrics: the pinned-event counter went backwards at t=%.1fs (JVM restarted?); counted from zero", x.T+x.Dur)
			}
			x.PinnedEvents, x.Pinned = dp, true
		}
		if cur.jitOK && s.gc.jitOK {
			dj, reset := CounterDelta(cur.jit, s.gc.jit)
			if reset {
				s.warnOnce(FlagCounterReset, "metrics: the JIT compilation-time counter went backwards at t=%.1fs (JVM restarted?); counted from zero", x.T+x.Dur)
			}
			x.JITMs, x.JIT = dj, true
		}
	}
	s.gc = cur
}

func gcCounters(m map[string]float64) *counters {
	p, ok := m[mPinned]
	j, jok := m[mJIT]
	return &counters{count: m[mGCCount], sumSec: m[mGCSum], pinned: p, pinnedOK: ok, jit: j, jitOK: jok}
}

// CounterDelta is how much a cumulative counter grew between two readings.
// A counter that went backwards was reset (the process restarted), so the
// whole current value is new, as Prometheus' rate() assumes; reset says so.
func CounterDelta(cur, prev float64) (delta float64, reset bool) {
	if cur < prev {
		return cur, true
	}
	return cur - prev, false
}

func (s *Sampler) scrape(ctx context.Context) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics url %q: %w", s.url, err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s (is micrometer-registry-prometheus on the classpath and the endpoint exposed?)", s.url, resp.Status)
	}
	m, err := ParseProm(resp.Body)
	if pe, ok := err.(*ParseError); ok {
		s.skipped += pe.Skipped
		return m, nil
	}
	return m, err
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
