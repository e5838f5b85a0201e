package postgres

// A run killed with SIGKILL, a panic in another goroutine or a power cut
// cannot call Stop. The supervisor kills the postmaster when threadlab goes
// (and a power cut stops everything), but the dir stays. So every cluster
// dir records the process that owns it, and Start removes the
// clusters whose owner is gone before it creates a new one. Clusters of live
// threadlab processes (parallel tests, a second run) are left alone.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ownerFile names the process that created a cluster dir: "pid starttime".
const ownerFile = "owner"

// writeOwner records this process as the owner of dir.
func writeOwner(dir string) error {
	start, err := startTime(os.Getpid())
	if err != nil {
		return fmt.Errorf("record the owner of %s: %w", dir, err)
	}
	line := fmt.Sprintf("%d %d\n", os.Getpid(), start)
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(line), 0o644); err != nil {
		return fmt.Errorf("record the owner of %s: %w", dir, err)
	}
	return nil
}

// sweep stops and removes the clusters under tmp whose owner process is
// gone. It reports what it did to log and never fails: a leftover it cannot
// remove must not stop a new run.
func sweep(tmp, bin string, log io.Writer) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, dirPrefix+"*"))
	for _, dir := range dirs {
		pid, start, ok := readOwner(dir)
		if !ok || alive(pid, start) {
			continue // not ours to judge, or its owner still runs
		}
		fmt.Fprintf(log, "threadlab: removing PostgreSQL cluster %s left by process %d, which is gone\n", dir, pid)
		c := &Cluster{Dir: dir, Bin: bin, log: log, asRoot: os.Geteuid() == 0}
		if c.asRoot {
			c.cred, _ = serverCred() // without it pg_ctl refuses, and Stop kills instead
		}
		if err := c.Stop(); err != nil {
			fmt.Fprintf(log, "threadlab: %v\n", err)
		}
	}
}

func readOwner(dir string) (pid int, start uint64, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	return pid, start, err1 == nil && err2 == nil
}

// alive reports whether pid runs and is the same process that wrote the
// owner file: the start time tells a reused pid apart.
func alive(pid int, start uint64) bool {
	s, err := startTime(pid)
	return err == nil && s == start
}

// startTime is field 22 of /proc/PID/stat, the process start time in clock
// ticks since boot; the fields are counted after the command name, which is
// in parentheses and may itself contain spaces.
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field 22 is f[19].
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields, want at least 22", pid, len(f)+2)
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// procsWith lists the processes, other than this one, whose command line
// contains s; callers end s with a separator so one dir name does not
// match another that merely starts with it.
func procsWith(s string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		if bytes.Contains(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}
