package env

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/threadlab/threadlab/internal/testenv"
)

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in, why string
		want    []int
		wantErr string
	}{
		{"0-1,3", "range and single", []int{0, 1, 3}, ""},
		{"0-1\n", "as sysfs writes it, with a newline", []int{0, 1}, ""},
		{"3,1,1-2", "unsorted and overlapping: sorted, no duplicates", []int{1, 2, 3}, ""},
		{" 7 ", "one cpu with spaces", []int{7}, ""},
		{"", "empty: the kernel's way of writing no cpus (isolated)", nil, ""},
		{"3-1", "reversed range", nil, "low <= high"},
		{"a", "not a number", nil, "not a cpu number"},
		{"-1", "negative", nil, "not a cpu number"},
		{"0,,1", "empty element", nil, "not a cpu number"},
		{"0-", "open range", nil, "low <= high"},
		{"0-5000", "beyond the CPUSet size", nil, "beyond"},
	}
	for _, tt := range tests {
		got, err := ParseCPUList(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q (%s): err = %v, want %q", tt.in, tt.why, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%q (%s) = %v, %v; want %v", tt.in, tt.why, got, err, tt.want)
		}
	}
}

func TestFormatCPUList(t *testing.T) {
	for _, tt := range []struct {
		in   []int
		want string
	}{{[]int{0, 1, 2, 3, 6}, "0-3,6"}, {[]int{5, 1, 0}, "0-1,5"}, {[]int{2}, "2"}, {nil, ""}, {[]int{1, 1, 2}, "1-2"}} {
		got := FormatCPUList(tt.in)
		if got != tt.want {
			t.Errorf("FormatCPUList(%v) = %q, want %q", tt.in, got, tt.want)
		}
		back, err := ParseCPUList(got)
		if err != nil || FormatCPUList(back) != got {
			t.Errorf("round trip of %q: %v %v", got, back, err)
		}
	}
}

func TestAllowed(t *testing.T) {
	cpus := Allowed()
	if len(cpus) == 0 || !slices.IsSorted(cpus) {
		t.Fatalf("Allowed() = %v", cpus)
	}
	// The affinity mask agrees with what the kernel reports for this process.
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		testenv.Need(t, err, "/proc/self/status", "run the tests on Linux with /proc mounted")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			if want, _ := ParseCPUList(v); !slices.Equal(want, cpus) {
				t.Errorf("Allowed() = %v, /proc/self/status Cpus_allowed_list = %v", cpus, want)
			}
			return
		}
	}
	t.Error("no Cpus_allowed_list in /proc/self/status")
}

// Pin a real process to one cpu and read its mask back.
func TestPin(t *testing.T) {
	allowed := Allowed()
	target := allowed[len(allowed)-1]
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal("cannot start sleep: ", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	if err := Pin(pid, []int{target}); err != nil {
		t.Fatal(err)
	}
	tids, err := tasks(pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, tid := range tids {
		got, err := Affinity(tid)
		if err != nil || !slices.Equal(got, []int{target}) {
			t.Errorf("thread %d affinity = %v, %v; want [%d]", tid, got, err, target)
		}
	}
	// Unpin: back to everything allowed.
	if err := Pin(pid, allowed); err != nil {
		t.Fatal(err)
	}
	if got, _ := Affinity(pid); !slices.Equal(got, allowed) {
		t.Errorf("after unpin: %v, want %v", got, allowed)
	}

	for _, bad := range []struct {
		cpus []int
		why  string
	}{{nil, "empty list"}, {[]int{-1}, "negative cpu"}, {[]int{maxCPU}, "beyond the set"}} {
		if err := Pin(pid, bad.cpus); err == nil {
			t.Errorf("Pin(%v) (%s): no error", bad.cpus, bad.why)
		}
	}
	if err := Pin(pid, []int{maxCPU - 1}); err == nil || !strings.Contains(err.Error(), "allowed") {
		t.Errorf("pin to a cpu this machine lacks: err = %v, want one pointing at Allowed()", err)
	}
}

// Pin reaches every thread: this test binary has several (the Go runtime's
// Ms); pinning it to the cpus it already has changes nothing but must set
// each thread's mask.
func TestPinAllThreads(t *testing.T) {
	pid := os.Getpid()
	tids, err := tasks(pid)
	if err != nil {
		testenv.Need(t, err, "/proc/self/task", "run the tests on Linux with /proc mounted")
	}
	if len(tids) < 2 {
		t.Fatalf("go test binary has %d threads, want several", len(tids))
	}
	allowed := Allowed()
	if err := Pin(pid, allowed); err != nil {
		t.Fatal(err)
	}
	for _, tid := range tids {
		if got, err := Affinity(tid); err == nil && !slices.Equal(got, allowed) {
			t.Errorf("thread %d: %v, want %v", tid, got, allowed)
		}
	}
}

func TestPinExitedProcess(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if err := Pin(cmd.Process.Pid, []int{0}); err == nil {
		t.Error("pinning a reaped process: no error")
	}
}

func TestCPUsAllowed(t *testing.T) {
	tests := []struct {
		status, want, wantErr, why string
	}{
		{"Name:\tsleep\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed:\t1\n", "0-1", "", "as the kernel writes it"},
		{"Cpus_allowed_list: 1 \n", "1", "", "spaces around the value"},
		{"Name:\tsleep\nCpus_allowed:\t3\n", "", "no Cpus_allowed_list", "the list line missing (a status file from a kernel older than 2.6.26)"},
	}
	for _, tt := range tests {
		got, err := CPUsAllowed(tt.status)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want %q", tt.why, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.why, got, err, tt.want)
		}
	}
}

// ReadAffinity reads back what is in force, from a real child started
// under taskset (the way the pipeline starts a pinned target) and from one
// pinned after its start with sched_setaffinity (the way it pins a service).
func TestReadAffinity(t *testing.T) {
	allowed := Allowed()
	last := allowed[len(allowed)-1]
	start := func(t *testing.T, argv ...string) int {
		t.Helper()
		cmd := exec.Command(argv[0], argv[1:]...)
		if err := cmd.Start(); err != nil {
			t.Fatalf("cannot start %v: %v", argv, err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd.Process.Pid
	}
	t.Run("taskset", func(t *testing.T) {
		testenv.LookPath(t, "taskset", "apt-get install util-linux (scripts/setup.sh does)")
		pid := start(t, "taskset", "-c", strconv.Itoa(last), "sleep", "30")
		// taskset sets the mask and execs sleep in the same process: wait
		// for the exec so the mask read is sleep's, not taskset's own.
		for i := 0; i < 200 && commOf(pid) != "sleep"; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		a, err := ReadAffinity(pid)
		if err != nil || !slices.Equal(a.CPUs, []int{last}) || a.Mixed || a.Threads != 1 {
			t.Errorf("child started under taskset -c %d: %+v, %v; want cpus [%d], one thread", last, a, err, last)
		}
	})
	pid := start(t, "sleep", "30")
	if a, err := ReadAffinity(pid); err != nil || !slices.Equal(a.CPUs, allowed) {
		t.Errorf("unpinned child: %+v, %v; want what this process may use, %v", a, err, allowed)
	}
	if err := Pin(pid, []int{last}); err != nil {
		t.Fatal(err)
	}
	if a, err := ReadAffinity(pid); err != nil || !slices.Equal(a.CPUs, []int{last}) {
		t.Errorf("child pinned with sched_setaffinity to %d: read back %+v, %v", last, a, err)
	}

	// This test binary: several threads, all with one mask.
	if a, err := ReadAffinity(os.Getpid()); err != nil || a.Threads < 2 || a.Mixed {
		t.Errorf("this process: %+v, %v; want several threads with one mask", a, err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatalf("cannot run true: %v", err)
	}
	if _, err := ReadAffinity(gone.Process.Pid); err == nil || !strings.Contains(err.Error(), "no such process") {
		t.Errorf("a reaped process: err = %v, want no such process", err)
	}
}

func TestAffinityMerge(t *testing.T) {
	st := func(list string) string { return "Name:\tjava\nCpus_allowed_list:\t" + list + "\n" }
	tests := []struct {
		statuses []string
		cpus     []int
		mixed    bool
		wantErr  string
		why      string
	}{
		{[]string{st("1"), st("1"), st("1")}, []int{1}, false, "", "every thread on cpu 1, as taskset -c 1 leaves a JVM"},
		{[]string{st("0-1"), st("1"), st("0-1")}, []int{0, 1}, true, "", "one thread pinned apart: mixed, the union is what the process may use"},
		{[]string{st("2"), st("0")}, []int{0, 2}, true, "", "threads on disjoint cpus"},
		{[]string{st("1"), "Name:\tx\n"}, nil, false, "no Cpus_allowed_list", "a status file without the list"},
		{[]string{st("x")}, nil, false, "not a cpu number", "a list that does not parse"},
	}
	for _, tt := range tests {
		var a ProcAffinity
		err := a.merge(tt.statuses)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want %q", tt.why, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(a.CPUs, tt.cpus) || a.Mixed != tt.mixed || a.Threads != len(tt.statuses) {
			t.Errorf("%s: %+v, %v; want cpus %v mixed %v", tt.why, a, err, tt.cpus, tt.mixed)
		}
	}
}

// PinGroup pins every process of a group, and a process the group forks
// afterwards inherits the mask (PostgreSQL's backends).
func TestPinGroup(t *testing.T) {
	allowed := Allowed()
	last := allowed[len(allowed)-1]
	cmd := exec.Command("sh", "-c", "sleep 30 & sleep 30 & read x; sleep 30 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal("cannot start sh: ", err)
	}
	pgid := cmd.Process.Pid
	defer func() { _ = syscall.Kill(-pgid, syscall.SIGKILL); _ = cmd.Wait() }()
	waitGroup := func(n int) []int {
		t.Helper()
		for i := 0; i < 300; i++ {
			if pids := GroupPids(pgid); len(pids) >= n {
				return pids
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("process group %d never had %d processes: %v", pgid, n, GroupPids(pgid))
		return nil
	}
	pids := waitGroup(3) // sh and two sleeps
	n, err := PinGroup(pgid, []int{last})
	if err != nil || n < 3 {
		t.Fatalf("PinGroup: %d pinned, %v; want sh and both sleeps", n, err)
	}
	in.Write([]byte("go\n")) // sh forks its third sleep now, after the pinning
	for _, pid := range waitGroup(4) {
		a, err := ReadAffinity(pid)
		if err != nil {
			continue // exited meanwhile
		}
		if !slices.Equal(a.CPUs, []int{last}) {
			t.Errorf("pid %d of group %d (pinned first: %v): cpus %v, want [%d]", pid, pgid, pids, a.CPUs, last)
		}
	}
	if _, err := PinGroup(1<<30, []int{last}); err == nil {
		t.Error("PinGroup of a group with no process: no error")
	}
}

func commOf(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}
