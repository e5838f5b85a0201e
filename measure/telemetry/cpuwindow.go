package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/threadlab/threadlab/env"
)

// CPU-seconds of a trial (issue 25): target_cpu_pct is a time-weighted
// mean of once-a-second /proc samples, and on a 0.46 s burst it read
// anywhere from 40% to 163% of one core within one fork, burst to burst,
// because where the sampler's ticks fall against the burst decides which
// share of it each partial interval carries. A CPUWindow instead reads
// the target's cumulative CPU time exactly twice, at the load's release
// and at its last answer, and keeps the difference: the CPU-seconds the
// process spent on the trial, with no cadence in it.
//
// The source is the kernel's CPU clock of the process (clock_gettime on
// the clock id of MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)): the
// scheduler's runtime of every thread of the process, the exited ones
// included, in nanoseconds. Linux lets any process read another's process
// CPU clock (clock_getcpuclockid(3): EPERM "does not occur on Linux").
// /proc/PID/schedstat is no alternative: it is per thread (the leader's
// alone under /proc/PID), so a sum over /proc/PID/task misses threads that
// exited and takes a read per thread. Where the clock cannot be read the
// window falls back to utime+stime of /proc/PID/stat, process-wide too,
// in clock ticks of USER_HZ (the kernel's AT_CLKTCK; 10 ms at 100). The
// stat line is read at both edges in any case: its start time tells a
// recycled pid apart and its state an exited (zombie) process.

// FlagCPUWindowLost: the target's CPU-seconds over the load's window
// could not be measured (it exited, its pid was reused, or it could not be
// read at the release).
const FlagCPUWindowLost = "cpu_window_lost"

// CPUSeconds is what a CPUWindow measured.
type CPUSeconds struct {
	// Sec is the CPU time the process used between the two readings,
	// user plus system, all of its threads: 1.0 is one core busy for a
	// second or two cores for half a second.
	Sec float64 `json:"sec"`
	// Source is "clock" (the kernel's process CPU clock, ns) or "ticks"
	// (/proc/PID/stat utime+stime, 1/USER_HZ s).
	Source string `json:"source"`
	// OK is true when both edges were read from the same live process.
	OK bool `json:"ok"`
}

// CPUWindow reads one process's cumulative CPU time at the two edges of a
// load's window: Begin at the release, End at the last answer. Both may be
// called from any goroutine; each takes effect once.
type CPUWindow struct {
	proc  string                      // "/proc", or a fixture tree in tests
	pid   int                         // 0: no process, nothing to measure
	clock func(pid int) (int64, bool) // the process's CPU clock in ns; nil reads ticks only
	hz    float64                     // clock ticks per second of /proc/PID/stat
	now   func() time.Time            // nil: time.Now

	mu           sync.Mutex
	first, last  cpuReading
	begun, ended bool
	t0           time.Time  // when the first clock reading was taken
	points       []CPUPoint // the clock from Begin (At 0) through Marks to End; empty when a reading failed
	marksLost    bool       // a Mark could not read the clock
	closedAt     time.Duration
}

// CPUPoint is one reading of the process clock, At after the window's
// Begin.
type CPUPoint struct {
	At time.Duration
	NS int64
}

// cpuReading is one edge of the window.
type cpuReading struct {
	stat   env.PidStat
	statOK bool
	err    error // why the stat line could not be read
	ns     int64
	nsOK   bool
}

// NewCPUWindow measures process pid from this host's /proc and its CPU
// clock. A pid of 0 or less measures nothing (CPU reports not OK, no flag).
func NewCPUWindow(pid int) *CPUWindow {
	return &CPUWindow{proc: "/proc", pid: pid, clock: processClock, hz: ClockTicks()}
}

// Begin reads the counters now: the window opens (call it at the load's
// release). Later calls do nothing.
func (w *CPUWindow) Begin() {
	if w == nil || w.pid <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.begun {
		return
	}
	w.begun = true
	// The stat line first and the clock last: the clock is the figure,
	// read as close to the release (which follows) as can be.
	w.first = w.readStat()
	w.first.ns, w.first.nsOK = w.readClock()
	w.t0 = w.clockNow()
	if w.first.nsOK {
		w.points = append(w.points, CPUPoint{At: 0, NS: w.first.ns})
	}
}

// Mark reads the process clock now, between Begin and End (a sampler
// calls it every few ms), so that CPUBetween can read the counter at an
// instant it learns only later. It does nothing outside the window.
func (w *CPUWindow) Mark() {
	if w == nil || w.pid <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.begun || w.ended || !w.first.nsOK {
		return
	}
	ns, ok := w.readClock()
	if !ok {
		w.marksLost = true
		return
	}
	w.points = append(w.points, CPUPoint{At: w.clockNow().Sub(w.t0), NS: ns})
}

// Open is how long the window has been open (Begin to now, or to End).
func (w *CPUWindow) Open() time.Duration {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.begun {
		return 0
	}
	if w.ended {
		return w.closedAt
	}
	return w.clockNow().Sub(w.t0)
}

func (w *CPUWindow) clockNow() time.Time {
	if w.now == nil {
		return time.Now()
	}
	return w.now()
}

// End reads the counters now: the window closes (call it at the load's
// last answer). It does nothing before Begin or after an earlier End.
func (w *CPUWindow) End() {
	if w == nil || w.pid <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.begun || w.ended {
		return
	}
	w.ended = true
	ns, ok := w.readClock() // the clock first: it is closest to the last answer
	at := w.clockNow().Sub(w.t0)
	w.closedAt = at
	w.last = w.readStat()
	w.last.ns, w.last.nsOK = ns, ok
	if ok && w.first.nsOK {
		w.points = append(w.points, CPUPoint{At: at, NS: ns})
	}
}

func (w *CPUWindow) readClock() (int64, bool) {
	if w.clock == nil {
		return 0, false
	}
	return w.clock(w.pid)
}

func (w *CPUWindow) readStat() cpuReading {
	b, err := os.ReadFile(filepath.Join(w.proc, strconv.Itoa(w.pid), "stat"))
	if err != nil {
		return cpuReading{err: err}
	}
	st, err := env.ParsePidStat(b)
	if err != nil {
		return cpuReading{err: err}
	}
	return cpuReading{stat: st, statOK: true}
}

// CPU returns what the window measured and, when it was opened but could
// not be measured, a flag saying why (FlagCPUWindowLost). A window never
// opened (no process, or a load that failed before its release) measured
// nothing and has no flag.
func (w *CPUWindow) CPU() (CPUSeconds, []Flag) {
	if w == nil || w.pid <= 0 {
		return CPUSeconds{}, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cpuLocked()
}

func (w *CPUWindow) cpuLocked() (CPUSeconds, []Flag) {
	if !w.begun {
		return CPUSeconds{}, nil
	}
	lost := func(format string, a ...any) (CPUSeconds, []Flag) {
		return CPUSeconds{}, []Flag{{Code: FlagCPUWindowLost, Msg: fmt.Sprintf("target pid %d: ", w.pid) + fmt.Sprintf(format, a...) + ": its CPU-seconds (target_cpu_s) are not measured"}}
	}
	a, b := w.first, w.last
	switch {
	case !a.statOK:
		return lost("not readable at the load's release (%v)", a.err)
	case !w.ended:
		return lost("the window never closed")
	case !b.statOK:
		return lost("exited between the load's release and its last answer (%v)", b.err)
	case b.stat.State == "Z" || b.stat.State == "X":
		return lost("exited between the load's release and its last answer (state %s at the end)", b.stat.State)
	case b.stat.StartTime != a.stat.StartTime:
		return lost("the pid belongs to another process at the last answer (start time %d, was %d)", b.stat.StartTime, a.stat.StartTime)
	case a.nsOK && b.nsOK:
		if b.ns < a.ns { // a process CPU clock never goes back
			return lost("its CPU clock went back from %d to %d ns", a.ns, b.ns)
		}
		return CPUSeconds{Sec: float64(b.ns-a.ns) / 1e9, Source: "clock", OK: true}, nil
	}
	t0, t1 := a.stat.UTime+a.stat.STime, b.stat.UTime+b.stat.STime
	if t1 < t0 { // 64-bit tick counters do not wrap; the kernel keeps them monotonic
		return lost("utime+stime went back from %d to %d ticks", t0, t1)
	}
	return CPUSeconds{Sec: float64(t1-t0) / w.hz, Source: "ticks", OK: true}, nil
}

// CPUBetween is the process's CPU-seconds between from and to after the
// window's Begin (both within the window: the instants of the load's
// release and last answer, learnt after the window closed), read from the
// clock's readings (Begin, every Mark, End) interpolated linearly at both
// instants; an instant outside the readings takes the nearest one. It
// answers as CPU does when the window could not be measured, and with the
// whole window's figure when the clock was not readable throughout (the
// ticks' 10 ms resolution has nothing to interpolate).
func (w *CPUWindow) CPUBetween(from, to time.Duration) (CPUSeconds, []Flag) {
	if w == nil || w.pid <= 0 {
		return CPUSeconds{}, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	c, fl := w.cpuLocked()
	if !c.OK || c.Source != "clock" || w.marksLost || len(w.points) < 2 {
		return c, fl
	}
	if to < from {
		from, to = to, from
	}
	a, b := interpolate(w.points, from), interpolate(w.points, to)
	return CPUSeconds{Sec: float64(b-a) / 1e9, Source: "clock", OK: true}, nil
}

// interpolate is the clock at instant at from readings ps in order of
// At: linear between the two around it, the first or the last reading
// outside them.
func interpolate(ps []CPUPoint, at time.Duration) int64 {
	n := len(ps)
	switch {
	case n == 0:
		return 0
	case at <= ps[0].At:
		return ps[0].NS
	case at >= ps[n-1].At:
		return ps[n-1].NS
	}
	i := sort.Search(n, func(i int) bool { return ps[i].At >= at }) // ps[i-1].At < at <= ps[i].At
	p, q := ps[i-1], ps[i]
	if q.At == p.At {
		return q.NS
	}
	return p.NS + int64(float64(q.NS-p.NS)*float64(at-p.At)/float64(q.At-p.At))
}

// processClock reads the CPU clock of process pid: the scheduler's
// runtime of all its threads, dead ones included, in ns.
func processClock(pid int) (int64, bool) {
	// MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED) of the kernel's
	// include/linux/posix-timers.h, as glibc's clock_getcpuclockid makes
	// it: (~pid << 3) | 2, in a 32-bit clockid_t.
	id := int32(^pid<<3 | 2)
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}

// atClkTck is AT_CLKTCK of the ELF auxiliary vector (linux/auxvec.h): the
// kernel's USER_HZ, which glibc's sysconf(_SC_CLK_TCK) returns.
const atClkTck = 17

// ClockTicks is the unit of /proc's tick counters, per second: the
// kernel's USER_HZ as it tells this process (AT_CLKTCK, what
// sysconf(_SC_CLK_TCK) reads), else env.UserHZ (100 on every Linux
// architecture).
func ClockTicks() float64 {
	auxv, err := unix.Auxv()
	if err != nil {
		return env.UserHZ
	}
	return clockTicksOf(auxv)
}

func clockTicksOf(auxv [][2]uintptr) float64 {
	for _, kv := range auxv {
		if kv[0] == atClkTck && kv[1] > 0 {
			return float64(kv[1])
		}
	}
	return env.UserHZ
}
