package telemetry

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/measure/metric"
)

// Flag is a sampler warning as data: a code the pipeline can act on and
// the sentence that explains it.
type Flag struct {
	Code string `json:"code"`
	Msg  string `json:"msg"`
}

// Flag codes. Each names what went wrong while sampling one trial.
const (
	FlagPidUnreadable = "pid_unreadable" // the target's /proc entry could not be read at start
	FlagPidGone       = "pid_gone"       // the target exited during sampling
	FlagPidReused     = "pid_reused"     // the pid now belongs to another process
	FlagScrapeFailed  = "scrape_failed"  // a Prometheus scrape failed
	FlagNoGCBaseline  = "no_gc_baseline" // no GC counters before the first interval
	FlagCounterReset  = "counter_reset"  // a cumulative counter went backwards
	FlagMalformed     = "malformed_metrics"
	// FlagFinalScrapeFailed: the scrape at the end of the window failed, so
	// counters read as deltas miss what happened since the last good one.
	FlagFinalScrapeFailed = "final_scrape_failed"
)

// Affects lists the columns a flag makes unreliable: a trial carrying the
// flag is invalid for a claim that reads one of them (its other columns,
// measured by the client, are unaffected). Each metric says which flags
// spoil it (metric.Def.SpoiledBy, metric.SeriesDef.SpoiledBy); this asks
// them.
func Affects(code string) []string { return metric.Spoiled(code) }

// Warning is the flag as a line of the run's warnings: its code and its
// sentence, which says what went wrong and what to check. The pipeline
// keeps it once per code per run (NewWarnings); trials.csv's
// telemetry_flags column keeps the code of every trial it hit.
func (f Flag) Warning() string {
	return warningPrefix(f.Code) + f.Msg + " (trials.csv's telemetry_flags column marks each trial it hit)"
}

func warningPrefix(code string) string { return "telemetry flag " + code + ": " }

// NewWarnings returns the Warning of each flag whose code no line of said
// (the run's warnings so far, a resumed run's included) carries yet, once
// per code: what a run adds to its warnings after a trial.
func NewWarnings(flags []Flag, said []string) []string {
	var out, seen []string
	for _, f := range flags {
		if slices.Contains(seen, f.Code) || slices.ContainsFunc(said, func(w string) bool { return strings.HasPrefix(w, warningPrefix(f.Code)) }) {
			continue
		}
		seen = append(seen, f.Code)
		out = append(out, f.Warning())
	}
	return out
}

// procTicks is one process's cumulative CPU at a reading, in ticks: its
// own (utime+stime, over its threads living and dead) and what it reaped
// from children it waited for (cutime+cstime); start tells a recycled pid
// apart.
type procTicks struct {
	start, ticks, child uint64
}

// processGroup reads the process group of pid from /proc/<pid>/stat
// (field 5, counted after the command name's closing parenthesis).
func processGroup(pid int) (int, bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	return pgrpOf(b)
}

func pgrpOf(stat []byte) (int, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(stat[i+1:]) // state ppid pgrp ...
	if len(f) < 3 {
		return 0, false
	}
	g, err := strconv.Atoi(string(f[2]))
	return g, err == nil
}

// otherTicks reads the cumulative CPU of every process outside the
// experiment, kernel threads included: all but this one, those in groups,
// and with exe set those whose executable has that base name. It reads
// each /proc/<pid>/stat once: about a hundred small reads a second on a
// typical host. ok is false when /proc cannot be listed.
//
// This is what the noise gate reads (otherDelta): CPU used outside
// threadlab, from the same per-process accounting as threadlab's own
// figures. Reading it as the host's busy time (/proc/stat) minus threadlab
// confused two clocks: on a virtual machine whose /proc/stat lags the
// processes' own times by up to ±20% of a core over 12 s, a quiet host
// read 50-120% of a core "outside" for seconds at a time, and one run lost
// 139 windows to it (fixed-rate-sweep 20261203T033543Z).
func otherTicks(groups []int, exe string) (other map[int]procTicks, ok bool) {
	self := os.Getpid()
	want := map[int]bool{}
	for _, g := range groups {
		want[g] = true
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	other = map[int]procTicks{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone since the listing
		}
		st, err := env.ParsePidStat(b)
		if err != nil {
			continue
		}
		if g, _ := pgrpOf(b); want[g] || (exe != "" && runs(pid, exe)) {
			continue
		}
		other[pid] = procTicks{start: st.StartTime, ticks: st.UTime + st.STime, child: uint64(max(0, st.CUTime+st.CSTime))}
	}
	return other, true
}

// runs reports whether process pid runs an executable named exe.
func runs(pid int, exe string) bool {
	p, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	return err == nil && filepath.Base(strings.TrimSuffix(p, " (deleted)")) == exe
}

// otherDelta is the CPU seconds processes outside the experiment used
// between two readings (cur, prev: procScan.other):
//   - a process seen at both counts its growth, one born in between in full;
//   - a process that died in between is not seen, but its parent's reaped
//     counters (cutime+cstime) grew by everything it ever used when the
//     parent waited for it. Their growth over all processes, less what the
//     vanished processes had already been counted with at prev, is the
//     dead processes' time since prev, short-lived ones included (a build's
//     compilers, a shell loop's commands). That difference is never taken
//     below zero: a reaper that does not wait (SIG_IGN, or an init that
//     does not account) reaps nothing into its counters, and a process
//     that dies under it loses its last fraction of a second rather than
//     cancelling other noise.
func otherDelta(cur, prev map[int]procTicks) float64 {
	var own, reaped, counted uint64
	for pid, c := range cur {
		p, ok := prev[pid]
		if !ok || p.start != c.start {
			own += c.ticks
			reaped += c.child
			continue
		}
		own += c.ticks - min(p.ticks, c.ticks)
		reaped += c.child - min(p.child, c.child)
	}
	for pid, p := range prev {
		if c, ok := cur[pid]; ok && c.start == p.start {
			continue
		}
		counted += p.ticks + p.child
	}
	return float64(own+reaped-min(reaped, counted)) / env.UserHZ
}
