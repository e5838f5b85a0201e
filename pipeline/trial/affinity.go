package trial

import (
	"slices"
	"strconv"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/store/record"
)

// maxPids is how many pids an affinity entry of run.json lists.
const maxPids = 8

// ReadBack is the read-back of the run's CPU affinity: the processes
// already recorded and the roles already warned about. The zero value is
// ready to use.
type ReadBack struct {
	seen   map[string]bool // role|pid
	warned map[string]bool // role
}

// Said marks a role as warned about already (its pinning could not be
// asked for), so Read does not say it again.
func (r *ReadBack) Said(role string) {
	if r.warned == nil {
		r.warned = map[string]bool{}
	}
	r.warned[role] = true
}

// Read adds to entries (run.json's affinity) the CPU affinity the kernel
// reports for each of pids (every thread, /proc/<pid>/task/*/status),
// beside what the manifest's pinning asked for that role. Each process
// counts once however often it is read (the postmaster is read again with
// the backends of every fork). A pinned role whose processes run elsewhere
// is a warning, once per role: the report must not claim a pinning that
// was not in force.
func (r *ReadBack) Read(entries []record.Affinity, role, asked string, warn func(format string, a ...any), pids ...int) []record.Affinity {
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	want, _ := env.ParseCPUList(asked) // validated with the manifest
	for _, pid := range pids {
		key := role + "|" + strconv.Itoa(pid)
		if pid <= 0 || r.seen[key] {
			continue
		}
		a, err := env.ReadAffinity(pid)
		if err != nil {
			continue // it exited between listing and reading: nothing to record
		}
		r.seen[key] = true
		actual := env.FormatCPUList(a.CPUs)
		mismatch := asked != "" && !slices.Equal(want, a.CPUs)
		var e *record.Affinity
		entries, e = entry(entries, role, asked, actual, a.Mixed)
		e.Mismatch = mismatch
		e.Processes++
		if len(e.Pids) < maxPids {
			e.Pids = append(e.Pids, pid)
		}
		if mismatch && !r.warned[role] {
			r.Said(role)
			warn("pinning: the %s was to run on CPUs %s, but the kernel reports CPUs %s for pid %d (a wrapper or cgroup re-pinned it?); its numbers are not from the pinning the manifest asked for", role, asked, actual, pid)
		}
	}
	return entries
}

// entry returns the run.json entry of a result, adding it if new.
func entry(entries []record.Affinity, role, asked, actual string, mixed bool) ([]record.Affinity, *record.Affinity) {
	for i := range entries {
		e := &entries[i]
		if e.Role == role && e.Asked == asked && e.Actual == actual && e.Mixed == mixed {
			return entries, e
		}
	}
	entries = append(entries, record.Affinity{Role: role, Asked: asked, Actual: actual, Mixed: mixed})
	return entries, &entries[len(entries)-1]
}
