package telemetry

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// statLine is a /proc/PID/stat line with the fields a CPUWindow reads:
// state (3), utime (14), stime (15), starttime (22); comm as given.
func statLine(pid int, comm, state string, utime, stime, start uint64) string {
	// Fields 3..24 after the command name; the rest are zeros.
	f := make([]string, 22)
	for i := range f {
		f[i] = "0"
	}
	f[0] = state
	f[14-3], f[15-3], f[22-3] = strconv.FormatUint(utime, 10), strconv.FormatUint(stime, 10), strconv.FormatUint(start, 10)
	return fmt.Sprintf("%d (%s) %s 0 0 0\n", pid, comm, strings.Join(f, " "))
}

// TestCPUWindowFixture reads a fixture /proc tree at the window's two
// edges: the stat line as it is at Begin, then as it is at End (or gone).
func TestCPUWindowFixture(t *testing.T) {
	const pid = 4242
	type edge struct {
		stat string // "" = no /proc/PID (exited and reaped, or never there)
		ns   int64  // the process clock; -1 = not readable
	}
	line := func(state string, u, s, start uint64) string { return statLine(pid, "java", state, u, s, start) }
	tests := []struct {
		why         string
		hz          float64
		begin, end  edge
		skipEnd     bool
		want        float64
		source      string
		ok, flagged bool
	}{
		{why: "normal: 50 ticks more at USER_HZ 100 are half a CPU-second",
			hz: 100, begin: edge{line("S", 100, 30, 777), -1}, end: edge{line("S", 130, 50, 777), -1},
			want: 0.5, source: "ticks", ok: true},
		{why: "the process clock wins when both edges read it (0.25 s in ns; the ticks' 0.5 s are coarser)",
			hz: 100, begin: edge{line("S", 100, 30, 777), 1_000_000_000}, end: edge{line("S", 130, 50, 777), 1_250_000_000},
			want: 0.25, source: "clock", ok: true},
		{why: "a clock readable at one edge only: the ticks of both",
			hz: 100, begin: edge{line("S", 100, 30, 777), 1_000_000_000}, end: edge{line("S", 110, 30, 777), -1},
			want: 0.1, source: "ticks", ok: true},
		{why: "counters past 2^32 ticks (no wrap: 64-bit) at USER_HZ 250: 250 ticks are one second",
			hz: 250, begin: edge{line("R", 5_000_000_000, 7, 1<<40), -1}, end: edge{line("R", 5_000_000_200, 57, 1<<40), -1},
			want: 1, source: "ticks", ok: true},
		{why: "a command name with spaces and parentheses: fields count from the last ')'",
			hz: 100, begin: edge{statLine(pid, "java (main) x) y", "S", 10, 0, 9), -1}, end: edge{statLine(pid, "java (main) x) y", "S", 30, 10, 9), -1},
			want: 0.3, source: "ticks", ok: true},
		{why: "exited mid-window and reaped: no /proc/PID at the end",
			hz: 100, begin: edge{line("S", 100, 30, 777), 5}, end: edge{"", -1}, flagged: true},
		{why: "exited mid-window, not yet reaped: a zombie at the end",
			hz: 100, begin: edge{line("S", 100, 30, 777), -1}, end: edge{line("Z", 140, 30, 777), -1}, flagged: true},
		{why: "the pid belongs to another process at the end (start time differs)",
			hz: 100, begin: edge{line("S", 100, 30, 777), -1}, end: edge{line("S", 140, 30, 900), -1}, flagged: true},
		{why: "not readable at the release",
			hz: 100, begin: edge{"", -1}, end: edge{line("S", 140, 30, 777), -1}, flagged: true},
		{why: "a window opened and never closed measured nothing",
			hz: 100, begin: edge{line("S", 100, 30, 777), -1}, skipEnd: true, flagged: true},
		{why: "ticks that went back (impossible: the kernel keeps them monotonic) are not a measurement",
			hz: 100, begin: edge{line("S", 100, 30, 777), -1}, end: edge{line("S", 90, 30, 777), -1}, flagged: true},
		{why: "a clock that went back is not a measurement either",
			hz: 100, begin: edge{line("S", 100, 30, 777), 2000}, end: edge{line("S", 100, 30, 777), 1000}, flagged: true},
	}
	for _, tt := range tests {
		root := t.TempDir()
		dir := filepath.Join(root, strconv.Itoa(pid))
		put := func(e edge) {
			os.RemoveAll(dir)
			if e.stat != "" {
				os.MkdirAll(dir, 0o755)
				if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(e.stat), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		var now edge
		w := &CPUWindow{proc: root, pid: pid, hz: tt.hz, clock: func(int) (int64, bool) { return now.ns, now.ns >= 0 }}
		now = tt.begin
		put(now)
		w.Begin()
		w.Begin() // a second Begin changes nothing
		if !tt.skipEnd {
			now = tt.end
			put(now)
			w.End()
			put(edge{line("S", 1e6, 0, 777), -1}) // a later End changes nothing
			w.End()
		}
		got, flags := w.CPU()
		if got.OK != tt.ok || (len(flags) > 0) != tt.flagged {
			t.Errorf("%s: %+v, flags %v; want ok %v, flagged %v", tt.why, got, flags, tt.ok, tt.flagged)
			continue
		}
		if tt.flagged && (flags[0].Code != FlagCPUWindowLost || !strings.Contains(flags[0].Msg, "target_cpu_s")) {
			t.Errorf("%s: flag %+v, want %s naming target_cpu_s", tt.why, flags[0], FlagCPUWindowLost)
		}
		if tt.ok && (got.Source != tt.source || got.Sec < tt.want-1e-9 || got.Sec > tt.want+1e-9) {
			t.Errorf("%s: %.6f s from %s, want %.6f s from %s", tt.why, got.Sec, got.Source, tt.want, tt.source)
		}
		if tt.flagged && got.Sec != 0 {
			t.Errorf("%s: a lost window reads %v s, want 0", tt.why, got.Sec)
		}
	}

	// No process, or a window never opened (a load that failed before its
	// release): nothing measured and nothing to flag.
	for _, w := range []*CPUWindow{NewCPUWindow(0), NewCPUWindow(os.Getpid()), nil} {
		w.End()
		if got, flags := w.CPU(); got.OK || flags != nil {
			t.Errorf("a window never opened: %+v, %v; want nothing", got, flags)
		}
	}
}

func TestClockTicksOf(t *testing.T) {
	tests := []struct {
		auxv [][2]uintptr
		want float64
		why  string
	}{
		{[][2]uintptr{{6, 4096}, {17, 100}, {0, 0}}, 100, "AT_CLKTCK (17) is USER_HZ"},
		{[][2]uintptr{{17, 250}}, 250, "a kernel that says 250 is taken at its word"},
		{[][2]uintptr{{6, 4096}}, 100, "no AT_CLKTCK: Linux's fixed 100"},
		{[][2]uintptr{{17, 0}}, 100, "a zero is not a unit"},
	}
	for _, tt := range tests {
		if got := clockTicksOf(tt.auxv); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.why, got, tt.want)
		}
	}
	// sysconf(_SC_CLK_TCK) is 100 on every Linux architecture.
	if got := ClockTicks(); got != 100 {
		t.Errorf("ClockTicks() = %v, want 100 (USER_HZ on Linux)", got)
	}
}

// burnEnv makes the test binary a child that burns CPU (TestBurnChild).
const burnEnv = "THREADLAB_TELEMETRY_BURN_MS"

// TestBurnChild is the child of TestCPUWindowBurn, not a test of its own:
// it says "ready", waits for a line on stdin, burns the given CPU
// milliseconds of its own process CPU clock, says "done" and exits at
// the end of stdin.
func TestBurnChild(t *testing.T) {
	ms, err := strconv.Atoi(os.Getenv(burnEnv))
	if err != nil {
		return // run as a test: nothing to do
	}
	fmt.Println("ready")
	in := bufio.NewReader(os.Stdin)
	in.ReadString('\n')
	cpu := func() time.Duration {
		var ts unix.Timespec
		unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts)
		return time.Duration(ts.Nano())
	}
	end := cpu() + time.Duration(ms)*time.Millisecond
	x := 0
	for cpu() < end {
		for i := range 10000 {
			x += i
		}
	}
	fmt.Println("done", x > 0)
	io.Copy(io.Discard, in)
	os.Exit(0)
}

// TestCPUWindowBurn: a child burns 300 ms of CPU between the window's
// edges; the window reads about 0.3 CPU-seconds from the process clock
// and from the ticks alike. The child burns CPU time, not wall time, so
// the amount is known on a loaded host too and the test need not skip on
// one: a busy host only makes it take longer. The bound is loose
// (0.5x to 2x) all the same. A child that exits inside the window is
// flagged, not measured.
func TestCPUWindowBurn(t *testing.T) {
	const burn = 300 * time.Millisecond
	child := exec.Command(os.Args[0], "-test.run=^TestBurnChild$")
	child.Env = append(os.Environ(), burnEnv+"="+strconv.Itoa(int(burn.Milliseconds())))
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	out := bufio.NewReader(stdout)
	if l, err := out.ReadString('\n'); err != nil || l != "ready\n" {
		t.Fatalf("child said %q (%v), want ready", l, err)
	}
	clock := NewCPUWindow(child.Process.Pid)
	ticks := NewCPUWindow(child.Process.Pid)
	ticks.clock = nil // the fallback, over the same edges
	clock.Begin()
	ticks.Begin()
	t0 := time.Now()
	io.WriteString(stdin, "go\n")
	if l, err := out.ReadString('\n'); err != nil || !strings.HasPrefix(l, "done") {
		t.Fatalf("child said %q (%v), want done", l, err)
	}
	ticks.End()
	clock.End()
	wall := time.Since(t0)
	for _, w := range []*CPUWindow{clock, ticks} {
		got, flags := w.CPU()
		t.Logf("%s: %.4f CPU-s over %v of wall time for a %v burn", got.Source, got.Sec, wall.Round(time.Millisecond), burn)
		if !got.OK || len(flags) > 0 {
			t.Errorf("not measured: %+v %v", got, flags)
			continue
		}
		if got.Sec < 0.5*burn.Seconds() || got.Sec > 2*burn.Seconds() {
			t.Errorf("%s: %.4f CPU-s, want 0.5x to 2x of the %v the child burned", got.Source, got.Sec, burn)
		}
	}
	if got, _ := clock.CPU(); got.Source != "clock" {
		t.Errorf("source %q, want the process clock on Linux", got.Source)
	}

	// The child exits (and is reaped) inside a second window.
	exits := NewCPUWindow(child.Process.Pid)
	exits.Begin()
	stdin.Close()
	child.Wait()
	exits.End()
	if got, flags := exits.CPU(); got.OK || len(flags) != 1 || flags[0].Code != FlagCPUWindowLost || !strings.Contains(flags[0].Msg, "exited") {
		t.Errorf("a child that exited inside the window: %+v, %v; want it flagged as exited", got, flags)
	}
}

// TestInterpolate: the clock at an instant between two readings is on the
// line between them; outside the readings it is the nearest one.
func TestInterpolate(t *testing.T) {
	ms := time.Millisecond
	ps := []CPUPoint{{0, 1000}, {10 * ms, 3000}, {20 * ms, 3000}, {30 * ms, 9000}}
	tests := []struct {
		why  string
		ps   []CPUPoint
		at   time.Duration
		want int64
	}{
		{"at the first reading", ps, 0, 1000},
		{"before the first reading (the release before go arrived): the first", ps, -5 * ms, 1000},
		{"a quarter of the way from 0 to 10 ms: 1000 + 2000/4", ps, 2500 * time.Microsecond, 1500},
		{"exactly on a middle reading", ps, 10 * ms, 3000},
		{"an idle stretch (the clock did not move) stays flat", ps, 15 * ms, 3000},
		{"half way from 20 to 30 ms: 3000 + 6000/2", ps, 25 * ms, 6000},
		{"at the last reading", ps, 30 * ms, 9000},
		{"after the last reading (an instant past the end of stdin): the last", ps, time.Second, 9000},
		{"one reading: it, wherever the instant is", ps[:1], 7 * ms, 1000},
		{"no readings: 0", nil, 7 * ms, 0},
		{"two readings at one instant: the later, no division by zero", []CPUPoint{{0, 5}, {5 * ms, 10}, {5 * ms, 20}, {9 * ms, 30}}, 5 * ms, 10},
	}
	for _, tt := range tests {
		if got := interpolate(tt.ps, tt.at); got != tt.want {
			t.Errorf("%s: interpolate at %v = %d, want %d", tt.why, tt.at, got, tt.want)
		}
	}
}

// TestCPUBetween: a window read at Begin, a Mark every 10 ms and End,
// asked afterwards for the CPU-seconds between two instants inside it
// (the release and the last answer), answers from the readings around
// them; without the clock throughout it answers for the whole window, and
// a lost window is lost whatever the instants.
func TestCPUBetween(t *testing.T) {
	const pid = 4343
	ms := time.Millisecond
	type reading struct {
		at time.Duration
		ns int64 // -1: the clock not readable
	}
	tests := []struct {
		why      string
		readings []reading // Begin, the Marks, End
		endStat  string    // the stat line at End; "" = the same process, alive
		from, to time.Duration
		want     float64
		source   string
		flagged  bool
	}{
		{why: "the last answer between two marks: the counter there, not at the end of stdin (the 40 ms after it burnt 0.4 s)",
			readings: []reading{{0, 0}, {10 * ms, 50e6}, {20 * ms, 100e6}, {30 * ms, 150e6}, {70 * ms, 550e6}},
			from:     0, to: 25 * ms, want: 0.125, source: "clock"},
		{why: "the release a little after go arrived: the counter interpolated at both edges",
			readings: []reading{{0, 0}, {10 * ms, 10e6}, {20 * ms, 30e6}, {30 * ms, 60e6}},
			from:     5 * ms, to: 25 * ms, want: 0.040, source: "clock"},
		{why: "a last answer past End (stdin ended first: cannot be, but the end reading is the nearest)",
			readings: []reading{{0, 0}, {10 * ms, 10e6}, {20 * ms, 20e6}},
			from:     0, to: time.Second, want: 0.020, source: "clock"},
		{why: "instants given in the wrong order are the same window",
			readings: []reading{{0, 0}, {10 * ms, 10e6}, {20 * ms, 20e6}},
			from:     15 * ms, to: 5 * ms, want: 0.010, source: "clock"},
		{why: "no mark in between (a window shorter than one mark): Begin and End interpolated",
			readings: []reading{{0, 0}, {8 * ms, 80e6}},
			from:     0, to: 4 * ms, want: 0.040, source: "clock"},
		{why: "a mark that could not read the clock: the whole window's figure, nothing interpolated",
			readings: []reading{{0, 0}, {10 * ms, -1}, {20 * ms, 20e6}, {30 * ms, 90e6}},
			from:     0, to: 15 * ms, want: 0.090, source: "clock"},
		{why: "no clock at all: the ticks of the whole window (10 ms resolution: nothing to interpolate)",
			readings: []reading{{0, -1}, {10 * ms, -1}, {20 * ms, -1}},
			from:     0, to: 10 * ms, want: 0.5, source: "ticks"},
		{why: "the process exited inside the window: lost, whatever the instants",
			readings: []reading{{0, 0}, {10 * ms, 10e6}, {20 * ms, 20e6}},
			endStat:  statLine(pid, "java", "Z", 150, 30, 777), from: 0, to: 10 * ms, flagged: true},
	}
	for _, tt := range tests {
		root := t.TempDir()
		dir := filepath.Join(root, strconv.Itoa(pid))
		os.MkdirAll(dir, 0o755)
		put := func(line string) {
			if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t0 := time.Unix(1_700_000_000, 0)
		var cur reading
		w := &CPUWindow{proc: root, pid: pid, hz: 100,
			clock: func(int) (int64, bool) { return cur.ns, cur.ns >= 0 },
			now:   func() time.Time { return t0.Add(cur.at) }}
		put(statLine(pid, "java", "S", 100, 30, 777))
		cur = tt.readings[0]
		w.Begin()
		for _, r := range tt.readings[1 : len(tt.readings)-1] {
			cur = r
			w.Mark()
		}
		cur = tt.readings[len(tt.readings)-1]
		end := tt.endStat
		if end == "" {
			end = statLine(pid, "java", "S", 130, 50, 777) // 50 ticks: 0.5 s
		}
		put(end)
		w.End()
		w.Mark() // after End: changes nothing
		got, flags := w.CPUBetween(tt.from, tt.to)
		if tt.flagged {
			if got.OK || len(flags) == 0 || flags[0].Code != FlagCPUWindowLost {
				t.Errorf("%s: %+v, flags %v; want not measured and %s", tt.why, got, flags, FlagCPUWindowLost)
			}
			continue
		}
		if !got.OK || len(flags) > 0 || got.Source != tt.source || got.Sec < tt.want-1e-9 || got.Sec > tt.want+1e-9 {
			t.Errorf("%s: %+v, flags %v; want %.6f s from %s", tt.why, got, flags, tt.want, tt.source)
		}
		if d := w.Open(); d != cur.at {
			t.Errorf("%s: open %v, want %v (Begin to End)", tt.why, d, cur.at)
		}
	}
	if got, flags := NewCPUWindow(0).CPUBetween(0, time.Second); got.OK || flags != nil {
		t.Errorf("no process: %+v, %v; want nothing", got, flags)
	}
}
