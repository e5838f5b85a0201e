package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
	pidfile := filepath.Join(t.TempDir(), "p.pid")
	os.WriteFile(pidfile, []byte(strconv.Itoa(child.Process.Pid)+"\n"), 0o644)

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
	pidfile := filepath.Join(t.TempDir(), "hog.pid")
	os.WriteFile(pidfile, []byte(strconv.Itoa(hog.Process.Pid)+"\n"), 0o644)

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
