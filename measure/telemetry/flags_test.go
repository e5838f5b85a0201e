package telemetry

import (
	"context"
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

func TestOwnDelta(t *testing.T) {
	hz := uint64(env.UserHZ)
	prev := map[int]procTicks{1: {start: 10, ticks: 100}, 2: {start: 20, ticks: 50}, 3: {start: 30, ticks: 5}}
	cur := map[int]procTicks{
		1: {start: 10, ticks: 100 + hz/2}, // same process, half a second more
		2: {start: 99, ticks: hz / 4},     // pid reused: the new process counts in full
		4: {start: 40, ticks: hz / 4},     // born in between: counts in full
		// 3 died in between: its last ticks are lost
	}
	// 0.5 + 0.25 + 0.25 = 1 s.
	if got := ownDelta(cur, prev); got < 0.999 || got > 1.001 {
		t.Errorf("ownDelta = %v s, want 1", got)
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
	ticks := func() uint64 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		st, err := env.ParsePidStat(b)
		if err != nil {
			t.Fatal(err)
		}
		return st.UTime + st.STime
	}
	ctx := context.Background()
	h0, t0 := ticks(), time.Now()
	plain := StartWith(ctx, os.Getpid(), "", Options{Interval: 500 * time.Millisecond})
	own := StartWith(ctx, os.Getpid(), "", Options{Interval: 500 * time.Millisecond, Groups: []int{pid}})
	time.Sleep(2 * time.Second)
	a, b := plain.Stop(), own.Stop()
	hogPct := float64(ticks()-h0) / env.UserHZ / time.Since(t0).Seconds() * 100
	avg := func(xs []Sample) float64 {
		var sum, dur float64
		for _, x := range xs {
			sum += x.HostCPUPct * x.Dur
			dur += x.Dur
		}
		return sum / dur
	}
	diff := avg(a) - avg(b)
	if hogPct < 10 {
		t.Skipf("the hog got only %.0f%% of a core: the machine is too busy to tell", hogPct)
	}
	// Sampling instants differ by microseconds and ticks are 10 ms, so allow 15 points.
	if diff < hogPct-15 || diff > hogPct+15 {
		t.Errorf("outside(plain) - outside(hog's group is own) = %.1f%% of a core, want the hog's %.1f%%", diff, hogPct)
	}
}

// Options.Exe: a process running an executable of that base name is
// threadlab's (a remote host's agents), whatever its process group; this
// process is not listed (its CPU is counted as the sampler's own).
func TestGroupTicksByExe(t *testing.T) {
	c := exec.Command("sleep", "5")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	time.Sleep(50 * time.Millisecond) // until sleep has exec'd
	if _, ok := groupTicks(nil, "sleep")[c.Process.Pid]; !ok {
		t.Errorf("groupTicks(nil, sleep) misses the sleep process %d", c.Process.Pid)
	}
	if _, ok := groupTicks(nil, "no-such-program")[c.Process.Pid]; ok {
		t.Errorf("groupTicks(nil, no-such-program) lists the sleep process")
	}
	self, _ := os.Executable()
	if _, ok := groupTicks(nil, filepath.Base(self))[os.Getpid()]; ok {
		t.Errorf("groupTicks lists this process, whose CPU the sampler counts as its own")
	}
}
