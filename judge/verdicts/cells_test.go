package verdicts

import (
	"math"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/telemetry"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
	"gopkg.in/yaml.v3"
)

// TestDependsOn: which cells (variant x point) a claim's check reads.
func TestDependsOn(t *testing.T) {
	point := map[string]string{"pool": "20", "users": "100"}
	tests := []struct {
		check string
		want  bool
		why   string
	}{
		{`{metric: rps, compare: [virtual, platform]}`, true, "a compared variant, no point filter"},
		{`{metric: rps, compare: [webflux, platform]}`, false, "another pair of variants"},
		{`{metric: rps, compare: [virtual, platform], where: {pool: ["20", "40"]}}`, true, "the point is in where"},
		{`{metric: rps, compare: [virtual, platform], where: {pool: ["5"]}}`, false, "the point is not in where"},
		{`{metric: rps, variant: virtual, flat_over: {pool: ["20", "40"]}}`, true, "a flat_over level"},
		{`{metric: rps, variant: virtual, flat_over: {pool: ["40", "80"]}}`, false, "not a flat_over level"},
		{`{metric: rps, variant: virtual, increases_over: {pool: ["5", "20"]}}`, true, "a trend level"},
	}
	for _, tt := range tests {
		var k stats.Check
		if err := yaml.Unmarshal([]byte(tt.check), &k); err != nil {
			t.Fatalf("%s: %v", tt.check, err)
		}
		if got := DependsOn(k, "virtual", point); got != tt.want {
			t.Errorf("%s: DependsOn(virtual pool=20;users=100) = %v, want %v", tt.why, got, tt.want)
		}
	}
}

// TestCapByForks: a verdict on a cell with fewer than stats.MinReplicates
// forks is held back as inconclusive, leaning to what it said.
func TestCapByForks(t *testing.T) {
	k := stats.Check{Metric: "rps", Compare: []string{"a", "b"}, AtLeast: stats.F(1.5)}
	cell := func(v string, n int) stats.Cell {
		c := stats.Cell{Variant: v, Metric: "rps"}
		for i := 0; i < n; i++ {
			c.Values = append(c.Values, float64(100+i))
		}
		return c
	}
	tests := []struct {
		cells  []stats.Cell
		status string
		leans  string
		why    string
	}{
		{[]stats.Cell{cell("a", 3), cell("b", 3)}, stats.Supported, "", "three forks each: the verdict stands"},
		{[]stats.Cell{cell("a", 2), cell("b", 5)}, stats.Inconclusive, stats.Supported, "two forks of a: at most inconclusive, leaning to what it said"},
		{[]stats.Cell{cell("a", 5), cell("b", 5), cell("c", 1)}, stats.Supported, "", "a cell the claim does not read does not count"},
	}
	for _, tt := range tests {
		v := stats.Verdict{Status: stats.Supported}
		capByForks(&v, k, tt.cells)
		if v.Status != tt.status || v.Leans != tt.leans {
			t.Errorf("%s: status %s leans %q, want %s %q", tt.why, v.Status, v.Leans, tt.status, tt.leans)
		}
		if tt.status == stats.Inconclusive && !strings.Contains(v.Reason, "a rests on 2 fork(s)") {
			t.Errorf("%s: reason %q does not say which cell has too few forks", tt.why, v.Reason)
		}
	}
}

// TestForkValues: one median per fork, the unit of replication; a value
// a telemetry flag spoils is left out.
func TestForkValues(t *testing.T) {
	rows := []record.Trial{
		{Fork: 1, Iteration: 1, RPS: 100, TargetCPUPct: 50},
		{Fork: 1, Iteration: 2, RPS: 110, TargetCPUPct: 0, Flags: telemetry.FlagPidGone},
		{Fork: 1, Iteration: 3, RPS: 90, TargetCPUPct: 52},
		{Fork: 2, Iteration: 1, RPS: 200, TargetCPUPct: 60},
		{Trial: 9, RPS: 300}, // a row from before forks: a fork of its own
	}
	med, forks := ForkValues(rows, "rps")
	// Fork 1: median of 100, 110, 90 = 100; fork 2: 200; the legacy row: 300.
	if len(med) != 3 || med[0] != 100 || med[1] != 200 || med[2] != 300 || len(forks[0]) != 3 {
		t.Errorf("rps per fork %v (%v), want [100 200 300] with fork 1's three iterations kept", med, forks)
	}
	// pid_gone spoils target_cpu_pct: fork 1 keeps 50 and 52, median 51.
	med, _ = ForkValues(rows, "target_cpu_pct")
	if len(med) != 3 || med[0] != 51 {
		t.Errorf("target_cpu_pct per fork %v: want fork 1 = 51, the flagged 0 left out", med)
	}
}

// gcManifest: a GC-count comparison, as connection-burst states seed
// 002's "the lowest GC count of the three".
const gcManifest = `name: gcs
title: gcs
question: which collects less?
variants:
  webflux: {command: [./server, "{port}"]}
  tomcat: {command: [./server, "{port}"]}
load: {model: closed, users: 10, duration: 2s, requests: [{path: /io}]}
forks: 6
claims:
  - id: tomcat-fewer-gcs
    says: tomcat runs fewer GC pauses than webflux
    check: {metric: gc_count, compare: [webflux, tomcat], at_least: 1.1}
`

// gcTrials: 6 forks of 14 windows each; a GC pause lands in a window now
// and then, as with a 2 GiB heap: webflux in 6 of 14 windows, tomcat in
// perFork of 14. Every fork's median is 0.
func gcTrials(perFork int) []record.Trial {
	var out []record.Trial
	seq := 0
	for _, v := range []struct {
		name string
		gcs  int
	}{{"webflux", 6}, {"tomcat", perFork}} {
		for f := 1; f <= 6; f++ {
			for i := 1; i <= 14; i++ {
				seq++
				gc := int64(0)
				if (i+f)%14 < v.gcs {
					gc = 1
				}
				out = append(out, record.Trial{Variant: v.name, Group: "main", Fork: f, Trial: f, Iteration: i, Seq: seq,
					Valid: true, Requests: 1000, RPS: 100, GCCount: gc})
			}
		}
	}
	return out
}

// TestRareEventsReadAsRates: a count of rare events (metric.Events) is
// summarized per fork by its mean, so GC counts of 0 or 1 a window give
// each fork its rate instead of a median of 0, and a comparison of two
// such rates is decided; a timing keeps its median.
func TestRareEventsReadAsRates(t *testing.T) {
	cells := GroupTrials(gcTrials(2))
	med, forks := ForkValues(cells[record.CellKey{Variant: "webflux", Group: "main"}], "gc_count")
	if len(med) != 6 || len(forks[0]) != 14 {
		t.Fatalf("%d forks, the first of %d windows: want 6 of 14", len(med), len(forks[0]))
	}
	if want := 6.0 / 14; math.Abs(med[0]-want) > 1e-12 {
		t.Errorf("webflux fork 1: %v GC pauses a window, want the mean %v (the median is 0)", med[0], want)
	}
	if med, _ := ForkValues([]record.Trial{{Fork: 1, RPS: 1}, {Fork: 1, RPS: 2}, {Fork: 1, RPS: 9}}, "rps"); med[0] != 2 {
		t.Errorf("rps of a fork = %v, want the median 2", med[0])
	}
	m, err := experiments.Parse("gcs.yaml", []byte(gcManifest), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		why    string
		tomcat int
		want   string
	}{
		{"tomcat collects in 2 of 14 windows, webflux in 6: 3x, supported", 2, stats.Supported},
		{"both in 6 of 14: a ratio of 1, contradicted at 1.1", 6, stats.Contradicted},
	} {
		v := Evaluate(m, gcTrials(c.tomcat), stats.Options{Seed: 1}, Host{Cores: 2})[0]
		if v.Status != c.want {
			t.Errorf("%s: %s (%s, ratio %v)", c.why, v.Status, v.Reason, v.Ratio)
		}
	}
}

// errorsManifest: seed 002's "zero errors" on one variant, as call-depth
// states it.
const errorsManifest = `name: errs
title: errs
question: does it fail any request?
variants:
  webflux: {command: [./server, "{port}"]}
load: {model: closed, users: 10, duration: 2s, requests: [{path: /io}]}
forks: 6
claims:
  - id: zero-errors
    says: webflux serves every request
    check: {metric: error_pct, variant: webflux, at_most: 0}
`

// TestZeroErrorsReadsEveryWindow: errors are rare events (metric.Events),
// so a fork's error_pct is the mean of its windows. Read as a median, a
// fork that failed requests in 3 of its 14 windows counted as 0, and
// "zero errors" was supported on 6 forks of which 2 failed requests
// (review statistics.md, 6-5).
func TestZeroErrorsReadsEveryWindow(t *testing.T) {
	trials := func(failing int) []record.Trial {
		var out []record.Trial
		seq := 0
		for f := 1; f <= 6; f++ {
			for i := 1; i <= 14; i++ {
				seq++
				tr := record.Trial{Variant: "webflux", Group: "main", Fork: f, Trial: f, Iteration: i, Seq: seq, Valid: true, Requests: 1000, RPS: 100}
				if f <= failing && i <= 3 {
					tr.Errors, tr.ErrorPct = 5, 0.5
				}
				out = append(out, tr)
			}
		}
		return out
	}
	m, err := experiments.Parse("errs.yaml", []byte(errorsManifest), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		why     string
		failing int
		want    string
	}{
		{"no fork fails a request: supported (sign test p = 1/64)", 0, stats.Supported},
		{"2 of 6 forks fail requests in 3 of 14 windows each: not supported", 2, stats.Inconclusive},
	} {
		v := Evaluate(m, trials(c.failing), stats.Options{Seed: 1}, Host{Cores: 2})[0]
		if v.Status != c.want {
			t.Errorf("%s: %s (%s)", c.why, v.Status, v.Reason)
		}
	}
}
