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

// ProcAffinity is the CPU affinity of a running process as the kernel
// reports it for each of its threads: what is in force, which may differ
// from what was asked (a wrapper that re-pinned it, a cpuset cgroup, a
// thread that pinned itself).
type ProcAffinity struct {
	Pid     int
	CPUs    []int // the union over its threads, sorted
	Threads int   // threads read
	// Mixed is true when its threads do not all have the same mask.
	Mixed bool
}

// ReadAffinity reads Cpus_allowed_list of every thread of pid from
// /proc/<pid>/task/<tid>/status (the process's own status file when the
// task directory cannot be listed). Threads that exit while being read are
// skipped; a process that is gone is an error.
func ReadAffinity(pid int) (ProcAffinity, error) {
	a := ProcAffinity{Pid: pid}
	base := filepath.Join("/proc", strconv.Itoa(pid))
	files := []string{filepath.Join(base, "status")}
	if tids, err := tasks(pid); err == nil {
		files = files[:0]
		for _, tid := range tids {
			files = append(files, filepath.Join(base, "task", strconv.Itoa(tid), "status"))
		}
	}
	var statuses []string
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil { // else the thread exited
			statuses = append(statuses, string(b))
		}
	}
	if len(statuses) == 0 {
		return a, fmt.Errorf("read cpu affinity of pid %d: no such process (did it exit?)", pid)
	}
	if err := a.merge(statuses); err != nil {
		return a, fmt.Errorf("read cpu affinity of pid %d: %w", pid, err)
	}
	return a, nil
}

// merge sets CPUs, Threads and Mixed from the status files of the threads.
func (a *ProcAffinity) merge(statuses []string) error {
	union := map[int]bool{}
	var first string
	for i, st := range statuses {
		list, err := CPUsAllowed(st)
		if err != nil {
			return err
		}
		if i == 0 {
			first = list
		} else if list != first {
			a.Mixed = true
		}
		cpus, err := ParseCPUList(list)
		if err != nil {
			return err
		}
		for _, c := range cpus {
			union[c] = true
		}
	}
	a.Threads = len(statuses)
	a.CPUs = nil
	for c := range union {
		a.CPUs = append(a.CPUs, c)
	}
	sort.Ints(a.CPUs)
	return nil
}

// CPUsAllowed returns the Cpus_allowed_list value of a /proc status file.
func CPUsAllowed(status string) (string, error) {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", errors.New("no Cpus_allowed_list line (a Linux /proc status file has one since 2.6.26)")
}

// GroupPids lists the processes of process group pgid, sorted, from the
// pgrp field of /proc/<pid>/stat.
func GroupPids(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if g, ok := pgrpOf(string(b)); ok && g == pgid {
			out = append(out, pid)
		}
	}
	sort.Ints(out)
	return out
}

// pgrpOf reads the process group (field 5) of a /proc/<pid>/stat line,
// counting from the last ')' since the command name may contain spaces.
func pgrpOf(stat string) (int, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:]) // state ppid pgrp ...
	if len(f) < 3 {
		return 0, false
	}
	g, err := strconv.Atoi(f[2])
	return g, err == nil
}

// PinGroup pins every process of process group pgid (every thread of
// each, as Pin does) and returns how many it pinned. It is for a service
// started in a group of its own, such as the PostgreSQL cluster: the
// postmaster and its helpers are pinned at once, and the backends it forks
// later inherit its mask. Processes that exit meanwhile are skipped.
func PinGroup(pgid int, cpus []int) (int, error) {
	n := 0
	for _, pid := range GroupPids(pgid) {
		err := Pin(pid, cpus)
		if errors.Is(err, unix.ESRCH) {
			continue
		}
		if err != nil {
			return n, err
		}
		n++
	}
	if n == 0 {
		return 0, fmt.Errorf("pin process group %d to cpus %s: no process in it (did the service exit?)", pgid, FormatCPUList(cpus))
	}
	return n, nil
}
