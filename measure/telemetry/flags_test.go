package telemetry

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/measure/metric"
)

func TestPgrpOf(t *testing.T) {
	tests := []struct {
		stat string
		want int
		ok   bool
		why  string
	}{
		{"1234 (java) S 1 1234 1234 0 -1", 1234, true, "field 5 is the process group"},
		{"77 (a) b (c)) R 5 900 77 0", 900, true, "the command name may hold spaces and parentheses: count after the last ')'"},
		{"12 (x) S 1", 0, false, "a truncated line has no process group"},
		{"garbage", 0, false, "no ')' at all"},
	}
	for _, tt := range tests {
		g, ok := pgrpOf([]byte(tt.stat))
		if g != tt.want || ok != tt.ok {
			t.Errorf("%s: pgrpOf(%q) = %d, %v; want %d, %v", tt.why, tt.stat, g, ok, tt.want, tt.ok)
		}
	}
}

// TestOtherDelta: the CPU outside the experiment between two readings of
// the other processes, each row one way a process comes, goes or is
// reaped. Ticks are in units of a tenth of a second.
func TestOtherDelta(t *testing.T) {
	d := uint64(env.UserHZ) / 10 // 0.1 s
	tests := []struct {
		why       string
		prev, cur map[int]procTicks
		want      float64 // seconds
	}{
		{why: "a process seen at both readings counts its growth",
			prev: map[int]procTicks{1: {start: 10, ticks: 100 * d}},
			cur:  map[int]procTicks{1: {start: 10, ticks: 105 * d}},
			want: 0.5},
		{why: "a process born in between counts in full, its reaped children too",
			prev: map[int]procTicks{},
			cur:  map[int]procTicks{4: {start: 40, ticks: 2 * d, child: 1 * d}},
			want: 0.3},
		{why: "a recycled pid is a new process: counts in full",
			prev: map[int]procTicks{2: {start: 20, ticks: 50 * d}},
			cur:  map[int]procTicks{2: {start: 99, ticks: 3 * d}},
			want: 0.3},
		{why: "a child that died and was reaped: its parent's cutime grew by its whole life, less what was counted at prev",
			prev: map[int]procTicks{1: {start: 10, ticks: 10 * d}, 5: {start: 50, ticks: 30 * d}},
			cur:  map[int]procTicks{1: {start: 10, ticks: 10 * d, child: 34 * d}},
			want: 0.4},
		{why: "a child born and reaped between the readings (a build's compiler) is seen through its parent",
			prev: map[int]procTicks{1: {start: 10, ticks: 10 * d, child: 5 * d}},
			cur:  map[int]procTicks{1: {start: 10, ticks: 10 * d, child: 12 * d}},
			want: 0.7},
		{why: "a grandchild reaped into a child that is reaped in turn: both lives reach the grandparent once",
			prev: map[int]procTicks{1: {start: 10}, 5: {start: 50, ticks: 20 * d}, 6: {start: 60, ticks: 10 * d}},
			cur:  map[int]procTicks{1: {start: 10, child: 36 * d}}, // 5 ended at 23, 6 at 13
			want: 0.6},
		{why: "a reaper that does not account (SIG_IGN, this VM's init): the dead process cancels nothing else",
			prev: map[int]procTicks{1: {start: 10}, 5: {start: 50, ticks: 300 * d}, 7: {start: 70, ticks: 10 * d}},
			cur:  map[int]procTicks{1: {start: 10}, 7: {start: 70, ticks: 15 * d}},
			want: 0.5},
		{why: "a counter that went backwards (not seen in practice) adds nothing",
			prev: map[int]procTicks{1: {start: 10, ticks: 10 * d, child: 10 * d}},
			cur:  map[int]procTicks{1: {start: 10, ticks: 9 * d, child: 9 * d}},
			want: 0},
	}
	for _, tt := range tests {
		if got := otherDelta(tt.cur, tt.prev); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: otherDelta = %v s, want %v", tt.why, got, tt.want)
		}
	}
}

func TestAffects(t *testing.T) {
	if !slices.Contains(Affects(FlagPidGone), "target_cpu_pct") || slices.Contains(Affects(FlagPidGone), "rps") {
		t.Errorf("a lost pid spoils the process columns, never the client's: %v", Affects(FlagPidGone))
	}
	if !slices.Contains(Affects(FlagCounterReset), "gc_count") || Affects("unknown") != nil {
		t.Errorf("counter reset must spoil the GC columns; an unknown code nothing")
	}
}

// codes are every flag the sampler raises.
var codes = []string{FlagPidUnreadable, FlagPidGone, FlagPidReused, FlagScrapeFailed, FlagNoGCBaseline, FlagCounterReset, FlagMalformed, FlagFinalScrapeFailed, FlagCPUWindowLost}

// TestSpoilersAreFlags: the metric home names flags by their codes; a
// misspelt code there would spoil nothing.
func TestSpoilersAreFlags(t *testing.T) {
	for _, d := range metric.Defs {
		for _, c := range d.SpoiledBy {
			if !slices.Contains(codes, c) {
				t.Errorf("metric %s is spoiled by %q, which is no telemetry flag (%v)", d.Name, c, codes)
			}
		}
	}
	for _, d := range metric.Series {
		for _, c := range d.SpoiledBy {
			if !slices.Contains(codes, c) {
				t.Errorf("series %s is spoiled by %q, which is no telemetry flag (%v)", d.Name, c, codes)
			}
		}
	}
	for _, c := range codes {
		if len(Affects(c)) == 0 {
			t.Errorf("flag %s spoils no column: name it in the SpoiledBy of the metrics it leaves wrong", c)
		}
	}
}

func TestNewWarnings(t *testing.T) {
	gone := Flag{Code: FlagPidGone, Msg: "target pid 7 gone"}
	scrape := Flag{Code: FlagScrapeFailed, Msg: "metrics: 404 (is micrometer-registry-prometheus on the classpath?)"}
	tests := []struct {
		flags []Flag
		said  []string
		want  []string
		why   string
	}{
		{nil, nil, nil, "no flags, nothing to say"},
		{[]Flag{scrape}, nil, []string{scrape.Warning()}, "a first flag is said with its sentence"},
		{[]Flag{scrape, gone}, []string{"cores: 2", scrape.Warning()}, []string{gone.Warning()}, "a code said before (an earlier trial, or before a resume) is not said again"},
		{[]Flag{gone, {Code: FlagPidGone, Msg: "other"}}, nil, []string{gone.Warning()}, "one line per code, the first sentence"},
		{[]Flag{scrape}, []string{"telemetry flag scrape_failed: metrics: timeout (...)"}, nil, "the same code with another sentence is the same flag"},
	}
	for _, tt := range tests {
		if got := NewWarnings(tt.flags, tt.said); !slices.Equal(got, tt.want) {
			t.Errorf("%s: NewWarnings = %q, want %q", tt.why, got, tt.want)
		}
	}
	if w := scrape.Warning(); !strings.HasPrefix(w, "telemetry flag scrape_failed: metrics: 404") || !strings.Contains(w, "prometheus on the classpath") {
		t.Errorf("Warning() = %q: the code, then the fix-it sentence", w)
	}
}

// TestOutsideExcludesOwnGroups runs a CPU hog in its own process group and
// two samplers over the same seconds, one told that the hog's group is the
// experiment's. The difference between their host_cpu_pct is the hog's
// own CPU, read from /proc independently: the one sampler counts it as
// noise, the other does not. Other load on the machine is the same for
// both, so the check holds on a busy host.
func TestOutsideExcludesOwnGroups(t *testing.T) {
	if testing.Short() {
		t.Skip("burns a core for two seconds")
	}
	hog := exec.Command("sh", "-c", "while :; do :; done")
	hog.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { hog.Process.Kill(); hog.Wait() }()
	pid := hog.Process.Pid
	ticks := func() uint64 { return pidTicks(t, pid) }
	ctx := context.Background()
	h0, t0 := ticks(), time.Now()
	plain := StartWith(ctx, os.Getpid(), "", Options{Interval: 500 * time.Millisecond})
	own := StartWith(ctx, os.Getpid(), "", Options{Interval: 500 * time.Millisecond, Groups: []int{pid}})
	time.Sleep(2 * time.Second)
	a, b := plain.Stop(), own.Stop()
	hogPct := float64(ticks()-h0) / env.UserHZ / time.Since(t0).Seconds() * 100
	diff := avgOutside(a) - avgOutside(b)
	if hogPct < 10 {
		t.Skipf("the hog got only %.0f%% of a core: the machine is too busy to tell", hogPct)
	}
	// Sampling instants differ by microseconds and ticks are 10 ms, so allow 15 points.
	if diff < hogPct-15 || diff > hogPct+15 {
		t.Errorf("outside(plain) - outside(hog's group is own) = %.1f%% of a core, want the hog's %.1f%%", diff, hogPct)
	}
}

// TestOutsideSeesShortLivedProcesses: noise made of processes that each
// live a tenth of a second, shorter than a sampling interval (a build's
// compilers, a shell loop's commands), is seen through the reaper's
// counters. As in TestOutsideExcludesOwnGroups, two samplers differ only
// in whether the loop's process group is the experiment's, and their
// difference must be the loop's CPU, read from /proc independently.
func TestOutsideSeesShortLivedProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("burns a core for two seconds")
	}
	// Burners of 0.1 s each for about 2 s, then the loop idles, so that it
	// is still alive (and its counters readable) when the samplers stop.
	loop := exec.Command("sh", "-c", `i=0; while [ $i -lt 20 ]; do timeout 0.1 sh -c 'while :; do :; done'; i=$((i+1)); done; sleep 30`)
	loop.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := loop.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { loop.Process.Kill(); loop.Wait() }()
	pid := loop.Process.Pid
	ticks := func() uint64 { return pidTicks(t, pid) }
	ctx := context.Background()
	h0, t0 := ticks(), time.Now()
	plain := StartWith(ctx, os.Getpid(), "", Options{Interval: 500 * time.Millisecond})
	own := StartWith(ctx, os.Getpid(), "", Options{Interval: 500 * time.Millisecond, Groups: []int{pid}})
	time.Sleep(2500 * time.Millisecond)
	a, b := plain.Stop(), own.Stop()
	loopPct := float64(ticks()-h0) / env.UserHZ / time.Since(t0).Seconds() * 100
	diff := avgOutside(a) - avgOutside(b)
	if loopPct < 10 {
		t.Skipf("the loop got only %.0f%% of a core: the machine is too busy to tell", loopPct)
	}
	if diff < loopPct-15 || diff > loopPct+15 {
		t.Errorf("outside(plain) - outside(loop's group is own) = %.1f%% of a core, want the loop's %.1f%%", diff, loopPct)
	}
}

// pidTicks is the CPU ticks process pid has used, its reaped children's
// included (a hog's children stay unreaped until it exits, so a lone hog
// reads its own).
func pidTicks(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	st, err := env.ParsePidStat(b)
	if err != nil {
		t.Fatal(err)
	}
	return st.UTime + st.STime + uint64(st.CUTime+st.CSTime)
}

func avgOutside(xs []Sample) float64 {
	var sum, dur float64
	for _, x := range xs {
		sum += x.HostCPUPct * x.Dur
		dur += x.Dur
	}
	return sum / dur
}

// Options.Exe: a process running an executable of that base name is
// threadlab's (a remote host's agents), whatever its process group, and so
// not among the others; nor is this process (its CPU is counted as the
// sampler's own).
func TestOtherTicksByExe(t *testing.T) {
	c := exec.Command("sleep", "5")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	time.Sleep(50 * time.Millisecond) // until sleep has exec'd
	other := func(exe string) map[int]procTicks {
		m, ok := otherTicks(nil, exe)
		if !ok {
			t.Fatal("otherTicks: /proc not listed")
		}
		return m
	}
	if _, ok := other("sleep")[c.Process.Pid]; ok {
		t.Errorf("otherTicks(nil, sleep) lists the sleep process %d as outside threadlab", c.Process.Pid)
	}
	if _, ok := other("no-such-program")[c.Process.Pid]; !ok {
		t.Errorf("otherTicks(nil, no-such-program) misses the sleep process")
	}
	self, _ := os.Executable()
	if _, ok := other("")[os.Getpid()]; ok {
		t.Errorf("otherTicks lists this process, whose CPU the sampler counts as its own (%s)", filepath.Base(self))
	}

}
