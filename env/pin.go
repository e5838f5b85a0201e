package env

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxCPU is the size of unix.CPUSet: the highest CPU number Pin can name.
const maxCPU = 1024

// ParseCPUList reads the kernel's CPU list syntax ("0-1,3", as in
// cpuset.cpus, /sys/devices/system/cpu/online and taskset -c). The result
// is sorted and without duplicates; an empty or blank string is an empty
// list, which is how the kernel writes "no CPUs" (e.g. the isolated file).
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("parse cpu list %q: %q is not a cpu number or range (write e.g. \"0-1,3\")", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("parse cpu list %q: range %q must be low-high with low <= high", s, part)
			}
		}
		if b >= maxCPU {
			return nil, fmt.Errorf("parse cpu list %q: cpu %d is beyond the %d this tool can pin", s, b, maxCPU)
		}
		for c := a; c <= b; c++ {
			seen[c] = true
		}
	}
	out := make([]int, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Ints(out)
	return out, nil
}

// FormatCPUList writes cpus in the kernel's list syntax, collapsing runs
// ("0-3,6"), so the pinning applied can be recorded the way taskset prints it.
func FormatCPUList(cpus []int) string {
	c := append([]int(nil), cpus...)
	sort.Ints(c)
	var parts []string
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] <= c[j]+1 {
			j++
		}
		if c[j] == c[i] {
			parts = append(parts, strconv.Itoa(c[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", c[i], c[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Allowed returns the CPUs this process may run on (its affinity mask, which
// already reflects cpuset cgroups and taskset), sorted. It is the set to
// split between the target and the load generator; when the mask cannot be
// read it falls back to 0..NumCPU-1 of the online list.
func Allowed() []int {
	if cpus, err := Affinity(0); err == nil && len(cpus) > 0 {
		return cpus
	}
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		if cpus, err := ParseCPUList(string(b)); err == nil && len(cpus) > 0 {
			return cpus
		}
	}
	return []int{0}
}

// Affinity returns the CPUs thread or process pid may run on (0 = the
// calling thread). The pipeline records it after Pin, so the report shows the
// pinning actually in force rather than the one asked for.
func Affinity(pid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return nil, fmt.Errorf("read cpu affinity of pid %d: %w", pid, err)
	}
	var out []int
	for c := 0; c < maxCPU; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Pin restricts every thread of process pid to cpus. sched_setaffinity acts
// on one thread, and a JVM has dozens by the time it is ready, so each task
// under /proc/<pid>/task is pinned; threads created later inherit the mask
// of the thread that creates them. Threads that exit while being pinned are
// ignored. Starting the process under `taskset -c` is the race-free
// alternative; Pin is for processes already running.
func Pin(pid int, cpus []int) error {
	if len(cpus) == 0 {
		return fmt.Errorf("pin pid %d: empty cpu list (name at least one cpu, e.g. \"0\")", pid)
	}
	var set unix.CPUSet
	for _, c := range cpus {
		if c < 0 || c >= maxCPU {
			return fmt.Errorf("pin pid %d: cpu %d out of range 0..%d", pid, c, maxCPU-1)
		}
		set.Set(c)
	}
	tids, err := tasks(pid)
	if err != nil {
		tids = []int{pid} // no /proc: pin the main thread, the best that can be done
	}
	pinned := 0
	for _, tid := range tids {
		err := unix.SchedSetaffinity(tid, &set)
		switch {
		case err == nil:
			pinned++
		case errors.Is(err, unix.ESRCH):
			// the thread exited between listing and pinning
		case errors.Is(err, unix.EINVAL):
			return fmt.Errorf("pin pid %d to cpus %s: none of them is allowed here (see Allowed(): cgroup cpuset or offline cpus): %w", pid, FormatCPUList(cpus), err)
		default:
			return fmt.Errorf("pin pid %d thread %d to cpus %s: %w (pinning another user's process needs root or CAP_SYS_NICE)", pid, tid, FormatCPUList(cpus), err)
		}
	}
	if pinned == 0 {
		return fmt.Errorf("pin pid %d: no such process (did it exit?): %w", pid, unix.ESRCH)
	}
	return nil
}

// tasks lists the thread ids of pid.
func tasks(pid int) ([]int, error) {
	ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no threads under /proc/%d/task", pid)
	}
	return out, nil
}
