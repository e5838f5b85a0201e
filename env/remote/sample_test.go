package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/threadlab/threadlab/env/supervise"
	"github.com/threadlab/threadlab/measure/telemetry"
)

// The sampler a multi-host run starts on the target host reads the
// supervised program's /proc there: a busy child shows CPU, RSS and a
// thread, sampled once a second until its stdin closes, then reported as
// JSON. Without a pid file it samples the host alone, without a flag.
func TestSampleHelper(t *testing.T) {
	if testing.Short() {
		t.Skip("samples for 2 s")
	}
	// A child that is busy for about a second and then sleeps.
	child := exec.Command("sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 5")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	pidfile := writePidFile(t, child.Process.Pid)

	for _, c := range []struct {
		why  string
		args []string
		proc bool
	}{
		{"the program and the host", []string{"sample", pidfile}, true},
		{"the host alone", []string{"sample"}, false},
	} {
		in, inW := io.Pipe()
		var out, errb bytes.Buffer
		done := make(chan int, 1)
		go func() { done <- helper(c.args, in, &out, &errb) }()
		io.WriteString(inW, "go\n") // the window starts
		time.Sleep(2100 * time.Millisecond)
		inW.Close() // and ends
		if code := <-done; code != 0 {
			t.Fatalf("%s: exit %d: %s", c.why, code, errb.String())
		}
		first, rest, _ := strings.Cut(out.String(), "\n")
		var rep sampleReport
		if err := json.Unmarshal([]byte(rest), &rep); first != "ready" || err != nil {
			t.Fatalf("%s: printed %q then %q (%v), want ready then a JSON report", c.why, first, rest, err)
		}
		if len(rep.Samples) < 2 || len(rep.Flags) != 0 {
			t.Errorf("%s: %d samples, flags %v: want 2 or more one-second samples and no flag", c.why, len(rep.Samples), rep.Flags)
			continue
		}
		x := rep.Samples[0]
		if got := x.RSSMB > 0 && x.Threads == 1 && x.CPUUserPct+x.CPUSysPct > 0; got != c.proc {
			t.Errorf("%s: first sample %+v: process figures present %v, want %v", c.why, x, got, c.proc)
		}
	}
}

// The window is the controller's: the first reading waits for "go", the
// last is taken when stdin ends. A sampler kept waiting 1.5 s before "go"
// and ended 0.3 s after it reports about 0.3 s of samples, not 1.8 s; one
// told anything but "go" refuses.
func TestSampleHelperWindow(t *testing.T) {
	in, inW := io.Pipe()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- helper([]string{"sample"}, in, &out, &errb) }()
	time.Sleep(1500 * time.Millisecond)
	io.WriteString(inW, "go\n")
	time.Sleep(300 * time.Millisecond)
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	_, rest, _ := strings.Cut(out.String(), "\n")
	var rep sampleReport
	if err := json.Unmarshal([]byte(rest), &rep); err != nil {
		t.Fatalf("report %q: %v", rest, err)
	}
	var span float64
	for _, x := range rep.Samples {
		span += x.Dur
	}
	if span < 0.2 || span > 1.0 {
		t.Errorf("samples span %.3f s, want the 0.3 s between go and the end of stdin (not the 1.8 s since the start)", span)
	}

	in2, inW2 := io.Pipe()
	var out2, errb2 bytes.Buffer
	go func() { done <- helper([]string{"sample"}, in2, &out2, &errb2) }()
	io.WriteString(inW2, "stop\n")
	if code := <-done; code != 2 || !strings.Contains(errb2.String(), `want go`) {
		t.Errorf("told stop: exit %d, %q; want 2 and what it wants", code, errb2.String())
	}
	inW2.Close()
}

func TestWaitPid(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good"), filepath.Join(dir, "bad")
	os.WriteFile(good, []byte("123\n"), 0o644)
	os.WriteFile(bad, []byte("x"), 0o644)
	for _, c := range []struct {
		why, file string
		pid       int
		err       string
	}{
		{"a pid", good, 123, ""},
		{"garbage", bad, 0, "not a pid"},
		{"no file within the wait", filepath.Join(dir, "none"), 0, "no pid file"},
	} {
		pid, err := waitPid(c.file, 100*time.Millisecond)
		if pid != c.pid || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %d, %v; want %d, %q", c.why, pid, err, c.pid, c.err)
		}
	}
}

// On hosts that share one kernel (network-namespace hosts on one machine),
// a host's sampler must not count the experiment's program on another of
// them as noise: with --exclude naming that program's pid file, a busy
// program in its own process group drops out of the host's "outside
// threadlab" CPU. Two samplers run over the same window, so whatever else
// the machine does counts in both and the difference is the program's.
func TestSampleHelperExcludes(t *testing.T) {
	if testing.Short() {
		t.Skip("samples for 3 s")
	}
	hog := exec.Command("sh", "-c", "while :; do :; done")
	hog.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group, as a supervised target's
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	pidfile := writePidFile(t, hog.Process.Pid)

	outside := func(args []string, got *float64, errs chan<- error) {
		in, inW := io.Pipe()
		var out, errb bytes.Buffer
		done := make(chan int, 1)
		go func() { done <- helper(args, in, &out, &errb) }()
		io.WriteString(inW, "go\n")
		time.Sleep(3100 * time.Millisecond)
		inW.Close()
		if code := <-done; code != 0 {
			errs <- fmt.Errorf("%v: exit %d: %s", args, code, errb.String())
			return
		}
		_, rest, _ := strings.Cut(out.String(), "\n")
		var rep sampleReport
		if err := json.Unmarshal([]byte(rest), &rep); err != nil || len(rep.Samples) < 2 {
			errs <- fmt.Errorf("%v: report %q (%v): want 2 or more samples", args, rest, err)
			return
		}
		var span float64
		for _, x := range rep.Samples { // the window's mean, weighted by each sample's length
			*got += x.HostCPUPct * x.Dur
			span += x.Dur
		}
		*got /= span
		errs <- nil
	}
	var all, excluded float64
	errs := make(chan error, 2)
	go outside([]string{"sample"}, &all, errs)
	go outside([]string{"sample", "--exclude", pidfile}, &excluded, errs)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// The hog spins on one core; on a loaded 2-core host it still gets a
	// good share of one. Counted in one sampler and not the other, it
	// makes the difference.
	if all-excluded < 40 {
		t.Errorf("outside threadlab: %.0f%% of one core counting the program, %.0f%% excluding it: want the excluded one lower by the program's CPU (40%% or more)", all, excluded)
	}
}

// sampleChildEnv makes the test binary a `remote-helper sample PIDFILE`
// (TestSampleChild), so a test can drive a Sampling over real pipes to
// another process, as ssh would connect one.
const sampleChildEnv = "THREADLAB_REMOTE_SAMPLE_PIDFILE"

// TestSampleChild is the helper side of TestSamplingCPU, not a test of
// its own.
func TestSampleChild(t *testing.T) {
	pidfile := os.Getenv(sampleChildEnv)
	if pidfile == "" {
		return
	}
	os.Exit(helper([]string{"sample", pidfile}, os.Stdin, os.Stdout, os.Stderr))
}

// startSampleChild starts a sampler of the program in pidfile in another
// process and waits for it to be ready.
func startSampleChild(t *testing.T, pidfile string) *Sampling {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSampleChild$")
	cmd.Env = append(os.Environ(), sampleChildEnv+"="+pidfile)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{Stdin: in, Stdout: out, cmd: cmd, stderr: &supervise.Buffer{}}
	cmd.Stderr = a.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	s, err := sampling(context.Background(), "tl-target", a)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writePidFile writes pid to a pid file, as a supervisor does, and returns
// its path.
func writePidFile(t *testing.T, pid int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "target.pid")
	if err := os.WriteFile(path, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// startHog starts a busy loop and writes its pid file.
func startHog(t *testing.T) (*exec.Cmd, string) {
	t.Helper()
	hog := exec.Command("sh", "-c", "while :; do :; done")
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	pidfile := writePidFile(t, hog.Process.Pid)
	return hog, pidfile
}

// TestSamplingCPU: the target host's sampler reads the program's
// cumulative CPU time at "go" and at the end of its stdin (Begin, End)
// and reports the CPU-seconds between; a window read here on the same
// process around the same edges agrees with it. The program's share of
// the machine does not matter: both read the same counters. A program
// that exits inside the window is flagged, not measured.
func TestSamplingCPU(t *testing.T) {
	hog, pidfile := startHog(t)
	s := startSampleChild(t, pidfile)
	here := telemetry.NewCPUWindow(hog.Process.Pid)
	here.Begin()
	if err := s.Begin(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	s.End()
	time.Sleep(20 * time.Millisecond) // the sampler reads at the end of its stdin, a pipe's latency after End
	here.End()
	if _, flags, err := s.Stop(); err != nil || len(flags) != 0 {
		t.Fatalf("stop: flags %v, %v; want a clean report", flags, err)
	}
	got, ref := s.CPU(), must(here.CPU())
	t.Logf("the host's sampler read %.4f CPU-s (%s), this process %.4f CPU-s, over a 0.4 s window", got.Sec, got.Source, ref.Sec)
	if !got.OK || got.Source != "clock" || got.Sec <= 0 {
		t.Fatalf("reported %+v, want CPU-seconds from the process clock", got)
	}
	if d := got.Sec - ref.Sec; d > 0.02 || d < -0.2*ref.Sec-0.03 {
		t.Errorf("the host's sampler read %.4f CPU-s, this process %.4f around the same edges: want them within 20%% (+30 ms)", got.Sec, ref.Sec)
	}

	// The program dies inside the window.
	hog2, pidfile2 := startHog(t)
	s2 := startSampleChild(t, pidfile2)
	s2.Begin()
	time.Sleep(100 * time.Millisecond)
	hog2.Process.Kill()
	hog2.Wait()
	s2.End()
	_, flags, err := s2.Stop()
	if err != nil {
		t.Fatal(err)
	}
	var lost bool
	for _, f := range flags {
		lost = lost || f.Code == telemetry.FlagCPUWindowLost
	}
	if c := s2.CPU(); c.OK || !lost {
		t.Errorf("a program that exited inside the window: %+v, flags %v; want not measured and %s", c, flags, telemetry.FlagCPUWindowLost)
	}
}

func must(c telemetry.CPUSeconds, flags []telemetry.Flag) telemetry.CPUSeconds {
	if len(flags) > 0 {
		return telemetry.CPUSeconds{}
	}
	return c
}

// TestSampleHelperEnd: after "go" the controller may name the last
// answer ("end NS"); anything else on stdin is refused with what it
// wants, and the report then says where the window ended.
func TestSampleHelperEnd(t *testing.T) {
	tests := []struct {
		why   string
		after string // what follows "go\n" before the end of stdin
		code  int
		edges bool
	}{
		{why: "no end line: the window ends at the end of stdin, as before", after: "", code: 0},
		{why: "the release 1 ms after go, the last answer 5 ms after it", after: "end 1000000 5000000\n", code: 0, edges: true},
		{why: "an end line without its newline before the end of stdin still counts", after: "end 0 7", code: 0, edges: true},
		{why: "an empty window (release and last answer at once) is a window", after: "end 3 3\n", code: 0, edges: true},
		{why: "not a number", after: "end 0 soon\n", code: 2},
		{why: "one instant only", after: "end 5\n", code: 2},
		{why: "a negative instant", after: "end -5 5\n", code: 2},
		{why: "the last answer before the release", after: "end 9 5\n", code: 2},
		{why: "two end lines", after: "end 0 1\nend 0 2\n", code: 2},
		{why: "another word", after: "stop\n", code: 2},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := helper([]string{"sample"}, strings.NewReader("go\n"+tt.after), &out, &errb)
		if code != tt.code {
			t.Errorf("%s: exit %d (%s), want %d", tt.why, code, errb.String(), tt.code)
			continue
		}
		if code != 0 {
			if !strings.Contains(errb.String(), "want \"end FROM TO\"") {
				t.Errorf("%s: said %q, want what it wants", tt.why, errb.String())
			}
			continue
		}
		_, rest, _ := strings.Cut(out.String(), "\n")
		var rep sampleReport
		if err := json.Unmarshal([]byte(rest), &rep); err != nil {
			t.Fatalf("%s: report %q: %v", tt.why, rest, err)
		}
		if (rep.Edges != nil) != tt.edges {
			t.Errorf("%s: edges %+v, want them %v", tt.why, rep.Edges, tt.edges)
		}
		// The once-a-second sampler starts just after "go": its origin is
		// what Window subtracts from the edges.
		if e := rep.Edges; e != nil && (e.Origin < 0 || e.Origin > time.Second) {
			t.Errorf("%s: the sampler's origin %v after go, want it just after", tt.why, e.Origin)
		}
	}
}

// TestSamplingEndAt: told afterwards that the load was released 100 ms
// after Begin (its connects took that long) and answered last 300 ms
// later, the target host's sampler reports the program's CPU-seconds
// between those instants, not from Begin to the end of its stdin 300 ms
// after the last answer: they agree with a window read here over those
// 300 ms, and are about half of what it read from Begin to the end of
// stdin.
func TestSamplingEndAt(t *testing.T) {
	hog, pidfile := startHog(t)
	s := startSampleChild(t, pidfile)
	here := telemetry.NewCPUWindow(hog.Process.Pid)
	if err := s.Begin(); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	time.Sleep(100 * time.Millisecond)
	here.Begin()
	from := time.Since(began)
	time.Sleep(300 * time.Millisecond)
	here.End()
	to := time.Since(began)
	time.Sleep(300 * time.Millisecond) // the answers on their way back over ssh
	s.EndAt(from, to)
	if _, flags, err := s.Stop(); err != nil || len(flags) != 0 {
		t.Fatalf("stop: flags %v, %v; want a clean report", flags, err)
	}
	got, ref := s.CPU(), must(here.CPU())
	release, last, closed, closedSec, ok := s.Edges()
	t.Logf("release to last answer %.4f CPU-s (here %.4f); go to the end of stdin (%v) %.4f CPU-s", got.Sec, ref.Sec, closed, closedSec)
	if !ok || release != from || last != to || closed < to+250*time.Millisecond {
		t.Fatalf("edges: release %v, last answer %v, closed %v, ok %v; want %v, %v and the end of stdin ~300 ms after", release, last, closed, ok, from, to)
	}
	if !got.OK || got.Source != "clock" || got.Sec <= 0 {
		t.Fatalf("reported %+v, want CPU-seconds from the process clock", got)
	}
	if d := got.Sec - ref.Sec; d > 0.03 || d < -0.2*ref.Sec-0.03 {
		t.Errorf("the host's sampler read %.4f CPU-s from the release to the last answer, this process %.4f over the same 300 ms: want them within 20%% (+30 ms)", got.Sec, ref.Sec)
	}
	if closedSec < 1.6*got.Sec {
		t.Errorf("go to the end of stdin %.4f CPU-s, release to last answer %.4f: want about 2.3 times (the hog burnt on)", closedSec, got.Sec)
	}
}

// holdEnv makes the test binary a program that holds extra OS threads
// until its stdin ends (TestHoldThreadsChild), as a target starts threads
// while it accepts a load's connections.
const holdEnv = "THREADLAB_REMOTE_HOLD_THREADS"

// TestHoldThreadsChild is the program side of TestSamplingWindow, not a
// test of its own: it locks 16 goroutines to their threads, says "held",
// and lets them end when its stdin ends; a goroutine that ends locked
// takes its thread with it.
func TestHoldThreadsChild(t *testing.T) {
	if os.Getenv(holdEnv) == "" {
		return
	}
	release := make(chan struct{})
	var up sync.WaitGroup
	for range 16 {
		up.Add(1)
		go func() {
			runtime.LockOSThread()
			up.Done()
			<-release
		}()
	}
	up.Wait()
	fmt.Println("held")
	io.Copy(io.Discard, os.Stdin)
	close(release)
	time.Sleep(time.Minute) // killed by the test
	os.Exit(0)
}

// TestSamplingWindow: the target host's sampler reads once a second from
// Begin (the planned release), but the trial's peaks read only the
// samples between the release and the last answer that EndAt names, and
// the reading that closes the window. A program holds 16 extra threads
// for the first 1.3 s after Begin (the agents' connects) and lets them go
// before the release: the reading at 1 s sees them, the window does not.
func TestSamplingWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("samples for 2 s")
	}
	prog := exec.Command(os.Args[0], "-test.run=^TestHoldThreadsChild$")
	prog.Env = append(os.Environ(), holdEnv+"=1")
	stdin, err := prog.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := prog.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prog.Process.Kill(); prog.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("the program said %q (%v), want held", line, err)
	}
	s := startSampleChild(t, writePidFile(t, prog.Process.Pid))
	if err := s.Begin(); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	time.Sleep(1300 * time.Millisecond) // the reading at 1 s sees the held threads
	stdin.Close()                       // they end
	time.Sleep(250 * time.Millisecond)
	from := time.Since(began) // the release
	time.Sleep(250 * time.Millisecond)
	to := time.Since(began) // the last answer
	s.EndAt(from, to)
	all, flags, err := s.Stop()
	if err != nil || len(flags) != 0 {
		t.Fatalf("stop: flags %v, %v; want a clean report", flags, err)
	}
	peak := func(xs []telemetry.Sample) (n int) {
		for _, x := range xs {
			n = max(n, x.Threads)
		}
		return n
	}
	win := s.Window()
	t.Logf("%d samples, peak %d threads; %d within %v..%v, peak %d threads", len(all), peak(all), len(win), from, to, peak(win))
	if len(win) == 0 || len(win) >= len(all) {
		t.Fatalf("%d of %d samples within the edges, want the closing reading and not the one at 1 s", len(win), len(all))
	}
	if peak(all)-peak(win) < 12 {
		t.Errorf("peak threads %d over every sample, %d within the edges: want the 16 threads held before the release left out", peak(all), peak(win))
	}
	if _, _, _, _, ok := s.Edges(); !ok {
		t.Errorf("no edges in the report")
	}
}
