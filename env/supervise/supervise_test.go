package supervise

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv turns this test binary into a stand-in for threadlab: it starts
// the command in HELPER_ARGV under a supervisor, writes the program's pid
// to HELPER_PIDFILE and blocks until it is killed. The tests kill it with
// SIGKILL, as a user or the OOM killer would kill threadlab.
const helperEnv = "SUPERVISE_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		argv := strings.Split(os.Getenv("HELPER_ARGV"), "\x1f")
		p, err := Start(Spec{Argv: argv, Stdout: os.Stdout, Stderr: os.Stderr})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		os.WriteFile(os.Getenv("HELPER_PIDFILE"), []byte(strconv.Itoa(p.Pid())), 0o644)
		select {}
	}
	os.Exit(m.Run())
}

// grandchildren is a wrapper command that does not exec its server: sh
// stays as the parent, a background sleep is a sibling, and a setsid'd
// sleep leaves the process group. Each writes its pid into dir.
func grandchildren(dir string) []string {
	script := `sleep 300 & echo $! > "$1/bg"; setsid sleep 300 & echo $! > "$1/setsid"; echo $$ > "$1/sh"; sleep 300; echo never`
	return []string{"sh", "-c", script, "sh", dir}
}

// waitPids waits until dir holds the three pid files and returns the pids.
func waitPids(t *testing.T, dir string) []int {
	t.Helper()
	var pids []int
	deadline := time.Now().Add(20 * time.Second)
	for _, name := range []string{"bg", "setsid", "sh"} {
		for {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
				pids = append(pids, pid)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never wrote its pid", name)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return pids
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// assertGoneWithin fails for every pid still alive after d.
func assertGoneWithin(t *testing.T, d time.Duration, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(d)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if alive(pid) {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			t.Errorf("pid %d (%s) still alive %s later", pid, bytes.ReplaceAll(b, []byte{0}, []byte{' '}), d)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestStopKillsGrandchildren: Stop ends the wrapper, its background child
// and a child that left the process group with setsid.
func TestStopKillsGrandchildren(t *testing.T) {
	dir := t.TempDir()
	p, err := Start(Spec{Argv: grandchildren(dir), Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	pids := waitPids(t, dir)
	if pids[2] != p.Pid() {
		t.Errorf("Pid() = %d, want the program's pid %d (sh), not the supervisor's", p.Pid(), pids[2])
	}
	err = p.Stop()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(err.Error(), "signal: terminated") {
		t.Errorf("Stop: %v, want the program's own status (signal: terminated)", err)
	}
	assertGoneWithin(t, 0, append(pids, p.SupervisorPid())...)
}

// TestParentKilled: kill -9 of the process that started the supervisor
// (here a helper standing in for threadlab) leaves nothing alive 5 s later.
func TestParentKilled(t *testing.T) {
	dir := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"=1",
		"HELPER_ARGV="+strings.Join(grandchildren(dir), "\x1f"), "HELPER_PIDFILE="+filepath.Join(dir, "program"))
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	pids := waitPids(t, dir)
	helper.Process.Kill()
	helper.Wait()
	assertGoneWithin(t, 5*time.Second, pids...)
}

// TestExitStatus: the supervisor exits as the program did, so errors read
// as they would without it.
func TestExitStatus(t *testing.T) {
	tests := []struct {
		argv   []string
		want   string
		reason string
	}{
		{[]string{"sh", "-c", "exit 3"}, "exit status 3", "a failing program's code reaches the caller"},
		{[]string{"sh", "-c", "exit 0"}, "", "success is success"},
		{[]string{"sh", "-c", "kill -KILL $$"}, "signal: killed", "a program killed by a signal reads as killed"},
	}
	for _, tt := range tests {
		err := Run(context.Background(), Spec{Argv: tt.argv})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%v: %q, want %q (%s)", tt.argv, got, tt.want, tt.reason)
		}
	}
}

func TestStartMissingProgram(t *testing.T) {
	_, err := Start(Spec{Argv: []string{"/nonexistent/threadlab-no-such-program"}})
	if err == nil || !strings.Contains(err.Error(), "threadlab-no-such-program") || !strings.Contains(err.Error(), "installed") {
		t.Errorf("missing program: %v, want an error naming it and saying to install it", err)
	}
}

// TestRunCancel: cancelling the context stops the program promptly.
func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := Run(ctx, Spec{Argv: []string{"sleep", "300"}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run after cancel: %v, want it to wrap the context's error", err)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("cancel took %s; sleep ends on SIGTERM at once", d)
	}
}

// TestHoldKeepsLock: a flocked file handed to the supervisor stays locked
// until the program is gone, even after the parent closed its copy.
func TestHoldKeepsLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	p, err := Start(Spec{Argv: []string{"sleep", "300"}, Hold: []*os.File{f}, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	tryLock := func() error {
		g, err := os.Open(path)
		if err != nil {
			return err
		}
		defer g.Close()
		return syscall.Flock(int(g.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err := tryLock(); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("lock while the program runs: %v, want EWOULDBLOCK", err)
	}
	p.Stop()
	if err := tryLock(); err != nil {
		t.Errorf("lock after Stop: %v, want it free", err)
	}
	if b, _ := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/cmdline"); len(b) > 0 {
		t.Errorf("program still there: %q", b)
	}
}
