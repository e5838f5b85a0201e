package verdicts

import (
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// ioBoundManifest is io-bound 20261201T211300Z reduced to its WebFlux
// cell: 5 forks of burst iterations, claims on a count and on times.
const ioBoundManifest = `name: iobound
title: per-metric steady selection
question: which trials does each claim read?
variants:
  webflux: {command: [w, "{port}"]}
load: {model: burst, burst: 600, requests: [{path: /}], warmup: 1s}
forks: 5
iterations: 12
claims:
  - {id: event-loops-only, says: WebFlux uses at most 4 threads, check: {metric: distinct_threads, variant: webflux, at_most: 4}}
  - {id: wall-bounded, says: WebFlux answers within 1 s, check: {metric: wall_ms, variant: webflux, at_most: 1000}}
  - {id: no-errors, says: WebFlux fails nothing, check: {metric: error_pct, variant: webflux, at_most: 0}}
  - {id: tail-bounded, says: WebFlux's p99 stays under 1 s, check: {metric: p99_ms, variant: webflux, at_most: 1000}}
  - id: threads-precondition
    says: WebFlux answers within 1 s when it runs at least 4.5 OS threads
    check: {metric: wall_ms, variant: webflux, at_most: 1000}
    requires: [{metric: target_peak_threads, at_least: 4.5}]
`

// TestPerMetricSelection reproduces io-bound 20261201T211300Z's
// webflux-event-loops-only: one WebFlux fork never reached a steady wall
// time. Before per-metric selection that fork was left out of every claim,
// and 4 forks cannot give a sign test p below 0.05 (1/16 = 0.0625): the
// thread-count claim went from supported to inconclusive. Now a metric
// that does not warm up reads every fork (5 forks: p = 1/32 = 0.031),
// while a metric that warms up still reads only the 4 steady forks.
func TestPerMetricSelection(t *testing.T) {
	m, err := experiments.Parse("iobound.yaml", []byte(ioBoundManifest), "")
	if err != nil {
		t.Fatal(err)
	}
	var ts []record.Trial
	seq := 0
	for f := 1; f <= 5; f++ {
		wall := jitter(450, 12)
		if f == 5 {
			wall = cat(jitter(500, 10), []float64{1000, 1000}) // still changing when it ended: no steady state
		}
		seq++
		for i, x := range wall {
			ts = append(ts, record.Trial{Variant: "webflux", Group: "main", Trial: seq*100 + i, Seq: seq, Fork: f, Iteration: i + 1,
				Valid: true, WallMs: x, P99Ms: 0.99 * x, DistinctThreads: 4, Requests: 600, TargetThreads: []int{3, 3, 5, 5, 5}[f-1]})
		}
	}
	all := GroupTrials(ts)
	steadyCells, info := steadyOnly(m, all, nil)
	if c := info[record.CellKey{Variant: "webflux", Group: "main"}]; len(c.ExcludedForks) != 1 || c.ExcludedForks[0] != 5 {
		t.Fatalf("steady selection excluded forks %v, want [5] (the fixture's premise)", c.ExcludedForks)
	}
	verdicts := Evaluate(m, ts, stats.Options{Seed: 1}, Host{})
	byID := map[string]record.Verdict{}
	for _, v := range verdicts {
		byID[v.ID] = v
	}
	tests := []struct {
		claim, metric string
		forks         int
		status        string
		why           string
	}{
		{"event-loops-only", "distinct_threads", 5, stats.Supported,
			"a thread count does not warm up: fork 5 counts although its wall time never settled; sign test 1/32 = 0.031"},
		{"no-errors", "error_pct", 5, stats.Supported,
			"errors count wherever they happen: every fork, every valid iteration"},
		{"wall-bounded", "wall_ms", 4, stats.Inconclusive,
			"the primary metric: fork 5 has no steady state and stays out; 4 forks give at best p = 1/16"},
		{"tail-bounded", "p99_ms", 4, stats.Inconclusive,
			"a latency warms up: it reads the primary metric's steady forks only"},
	}
	for _, tt := range tests {
		var c experiments.Claim
		for _, cl := range m.Claims {
			if cl.ID == tt.claim {
				c = cl
			}
		}
		sc := claimCells(m, c, NewReading(m, all, steadyCells, info, nil).Cells(tt.metric))
		if len(sc) != 1 || len(sc[0].Values) != tt.forks {
			t.Errorf("%s: read %d fork(s), want %d: %s", tt.claim, len(sc[0].Values), tt.forks, tt.why)
		}
		v := byID[tt.claim]
		if v.Status != tt.status {
			t.Errorf("%s: %s (%s), want %s: %s", tt.claim, v.Status, v.Reason, tt.status, tt.why)
		}
	}
	ev := strings.Join(byID["event-loops-only"].Evidence, "\n")
	if !strings.Contains(ev, "distinct_threads does not warm up") || !strings.Contains(ev, "fork 5 never steady in wall_ms") {
		t.Errorf("event-loops-only evidence %q: want it to say which trials it read beyond the steady selection", ev)
	}
	// A precondition on a count reads it as a claim would: all 5 forks
	// (3, 3, 5, 5, 5: median 5), not the 4 steady ones (median 4, which
	// would fail the 4.5 it needs).
	if ev := strings.Join(byID["threads-precondition"].Evidence, "\n"); !strings.Contains(ev, "precondition: target_peak_threads") || !strings.Contains(ev, "webflux: 5, holds") {
		t.Errorf("threads-precondition evidence %q: want the precondition read on every fork (median 5) and holding", ev)
	}
	if ev := strings.Join(byID["wall-bounded"].Evidence, "\n"); strings.Contains(ev, "does not warm up") {
		t.Errorf("wall-bounded evidence %q: a metric that warms up reads the steady selection, nothing to add", ev)
	}
}

// TestKeepWarmup: re-evaluating a run re-selects by today's rule but keeps
// the warm-up clause of the rule its forks were warmed up by.
func TestKeepWarmup(t *testing.T) {
	old := "per-fork selection on >= 10 points; PELT change in mean, penalty 6 log n; warm-up until steady: last 4 rounds fluctuate and no longer improve on the 4 before"
	tests := []struct {
		rule, earlier, want, why string
	}{
		{SteadyRule, old, strings.Split(SteadyRule, warmupMark)[0] + warmupMark + "last 4 rounds fluctuate and no longer improve on the 4 before",
			"a run warmed up by the old rule keeps saying so after a re-evaluation"},
		{SteadyRule, SteadyRule, SteadyRule, "a run of this version: unchanged"},
		{SteadyRule, "", SteadyRule, "no earlier steady.json rule (a run from before issue 20): today's rule"},
		{SteadyRule, "per-fork selection without a warm-up clause", SteadyRule, "an earlier rule without a warm-up clause: nothing to keep"},
		{"selection only", old, "selection only", "today's rule without a clause: nothing to replace"},
	}
	for _, tt := range tests {
		if got := KeepWarmup(tt.rule, tt.earlier); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.why, got, tt.want)
		}
	}
	if got := WarmupClause(old); got != "last 4 rounds fluctuate and no longer improve on the 4 before" {
		t.Errorf("WarmupClause(old) = %q", got)
	}
}

// TestCurrentWarmup: a run warmed up by today's clause, or by an earlier
// one that held every fork at least as long (stricterWarmups), answers
// today's manifest; only today's clause costs what today's warm-ups cost.
func TestCurrentWarmup(t *testing.T) {
	head := strings.Split(SteadyRule, warmupMark)[0] + warmupMark
	for _, tt := range []struct {
		why           string
		rule          string
		current, same bool
	}{
		{"today's rule", SteadyRule, true, true},
		{"the clause before the JIT's one-core floor: stricter, so current, but its warm-ups cost more", head + stricterWarmups[0], true, false},
		{"an older, looser clause (no drift bound): not current", head + "last 4 rounds fluctuate and no longer improve on the 4 before", false, false},
		{"no warm-up clause", "per-fork selection only", false, false},
		{"empty", "", false, false},
	} {
		if got := CurrentWarmup(tt.rule); got != tt.current {
			t.Errorf("%s: CurrentWarmup %v, want %v", tt.why, got, tt.current)
		}
		if got := SameWarmup(tt.rule); got != tt.same {
			t.Errorf("%s: SameWarmup %v, want %v", tt.why, got, tt.same)
		}
	}
	for _, c := range stricterWarmups {
		if c == WarmupClause(SteadyRule) {
			t.Errorf("stricterWarmups lists today's clause %q", c)
		}
	}
}
