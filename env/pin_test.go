package env

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
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
		t.Skip("no /proc/self/status: ", err)
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
		t.Skip("cannot start sleep: ", err)
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
		t.Skip("no /proc/self/task: ", err)
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
		t.Skip(err)
	}
	if err := Pin(cmd.Process.Pid, []int{0}); err == nil {
		t.Error("pinning a reaped process: no error")
	}
}
