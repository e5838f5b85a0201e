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

// procTicks is one process's cumulative CPU at a reading; start tells a
// recycled pid apart.
type procTicks struct {
	start, ticks uint64
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

// groupTicks reads the cumulative CPU of every process in groups. It scans
// /proc once: about a hundred small reads a second on a typical host.
//
// With exe set, processes whose executable has that base name count too,
// except this process, whose CPU the caller counts on its own.
func groupTicks(groups []int, exe string) map[int]procTicks {
	if len(groups) == 0 && exe == "" {
		return nil
	}
	self := os.Getpid()
	want := map[int]bool{}
	for _, g := range groups {
		want[g] = true
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := map[int]procTicks{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		g, ok := pgrpOf(b)
		if !ok {
			continue
		}
		if !want[g] && (exe == "" || pid == self || !runs(pid, exe)) {
			continue
		}
		if st, err := env.ParsePidStat(b); err == nil {
			out[pid] = procTicks{start: st.StartTime, ticks: st.UTime + st.STime}
		}
	}
	return out
}

// runs reports whether process pid runs an executable named exe.
func runs(pid int, exe string) bool {
	p, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	return err == nil && filepath.Base(strings.TrimSuffix(p, " (deleted)")) == exe
}

// ownDelta is the CPU seconds the own groups used between two readings. A
// process born in between counts in full; one that died in between is lost
// (its last fraction of a second then shows up as noise, which errs towards
// re-running a trial rather than keeping a disturbed one).
func ownDelta(cur, prev map[int]procTicks) float64 {
	var ticks float64
	for pid, c := range cur {
		p, ok := prev[pid]
		switch {
		case !ok || p.start != c.start:
			ticks += float64(c.ticks)
		case c.ticks >= p.ticks:
			ticks += float64(c.ticks - p.ticks)
		}
	}
	return ticks / env.UserHZ
}
