package verdicts

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// forkRows makes one fork's valid iterations of rps, in execution order.
func forkRows(fork int, seq *int, rps ...float64) []record.Trial {
	var ts []record.Trial
	for i, x := range rps {
		*seq++
		ts = append(ts, record.Trial{Variant: "v", Group: "main", Trial: *seq, Seq: *seq, Valid: true,
			Fork: fork, Iteration: i + 1, RPS: x})
	}
	return ts
}

// jitter is a flat level with a small deterministic wobble (±1%).
func jitter(level float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = level * (1 + 0.005*float64((i*7)%5-2))
	}
	return out
}

// burstSel is the selection of a manifest with one burst group "main"
// (iterations are the points) and primary metric rps.
func burstSel(cold ...string) selection {
	m := &experiments.Manifest{Load: experiments.LoadSpec{Measure: "main", Groups: []experiments.Group{{Name: "main", Model: "closed"}}}}
	m.Variants = experiments.Variants{{Name: "v"}}
	for _, c := range cold {
		m.Variants = append(m.Variants, experiments.Variant{Name: c, Measure: experiments.MeasureCold})
	}
	return newSelection(m, nil)
}

func cat(xs ...[]float64) []float64 {
	var out []float64
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
}

func TestSteadyCell(t *testing.T) {
	k := record.CellKey{Variant: "v", Group: "main"}
	seq := 0
	flat := forkRows(1, &seq, jitter(1000, 10)...)
	warm := forkRows(2, &seq, cat([]float64{200, 210, 205, 198}, jitter(1000, 10))...)
	short := forkRows(3, &seq, 500, 1000)                                         // too few points, and no per-second series
	climbing := forkRows(4, &seq, cat(jitter(500, 10), []float64{1000, 1000})...) // still changing when it ended
	ts := cat4(flat, warm, short, climbing)

	kept, c := burstSel().cell(k, ts)
	if got := c.Forks[0]; got.Class != "flat" || got.Basis != "iterations" || got.Excluded != 0 {
		t.Errorf("fork 1: %+v, want flat on its iterations (a steady level with 1%% noise)", got)
	}
	if got := c.Forks[1]; got.Class != "warmup" || got.SteadyFrom != 4 || got.Excluded != 4 {
		t.Errorf("fork 2: %+v, want warmup from iteration 4 with 4 excluded (four slow iterations, then flat)", got)
	}
	if got := c.Forks[2]; got.Class != "" || got.Excluded != 0 || got.Basis != "too few points" || got.Dropped {
		t.Errorf("fork 3: %+v, want kept unclassified (2 < %d points)", got, experiments.MinSteadyPoints)
	}
	if got := c.Forks[3]; got.Class != "no steady state" || !got.Dropped {
		t.Errorf("fork 4: %+v, want no steady state and dropped", got)
	}
	if c.SteadyForks != 3 || len(c.ExcludedForks) != 1 || c.ExcludedForks[0] != 4 || c.Unsettled != 1 {
		t.Errorf("cell: steady forks %d, excluded %v, unsettled %d; want 3, [4], 1", c.SteadyForks, c.ExcludedForks, c.Unsettled)
	}
	if want := len(ts) - 4 - len(climbing); len(kept) != want {
		t.Fatalf("kept %d trials, want %d (fork 2's warm-up and all of fork 4 dropped)", len(kept), want)
	}
	med, _ := ForkValues(kept, "rps")
	if len(med) != 3 || med[1] < 950 {
		t.Errorf("fork medians %v, want 3 forks, fork 2 at its steady level near 1000", med)
	}
}

func cat4(a, b, c, d []record.Trial) []record.Trial {
	return append(append(append(append([]record.Trial{}, a...), b...), c...), d...)
}

// TestSteadyCold: a variant with measure: cold keeps every iteration, its
// slow first one included: the start is what it measures.
func TestSteadyCold(t *testing.T) {
	seq := 0
	ts := forkRows(1, &seq, cat([]float64{200, 210}, jitter(1000, 10))...)
	for i := range ts {
		ts[i].Variant = "start"
	}
	kept, c := burstSel("start").cell(record.CellKey{Variant: "start", Group: "main"}, ts)
	if len(kept) != len(ts) || !c.Cold || c.Forks[0].Basis != "cold" || c.Forks[0].Class != "" {
		t.Errorf("kept %d of %d, cell %+v: want everything kept and the cell marked cold", len(kept), len(ts), c)
	}
}

// TestSteadySeconds: a timed load's forks with few iterations are
// classified on their per-second series, each window's first and last
// second left out.
func TestSteadySeconds(t *testing.T) {
	m := &experiments.Manifest{Variants: experiments.Variants{{Name: "v"}},
		Load: experiments.LoadSpec{Measure: "main", Groups: []experiments.Group{{Name: "main", Model: "closed"}}}}
	// window makes the series of trial tr: a partial first and last second
	// around the given seconds.
	window := func(tr int, secs []float64) []record.Sample {
		var out []record.Sample
		all := cat([]float64{100}, secs, []float64{300})
		for i, x := range all {
			out = append(out, record.Sample{Variant: "v", Group: "main", Trial: tr, T: float64(i + 1), Requests: int64(x)})
		}
		return out
	}
	steadySecs := jitter(1000, 12)
	warmSecs := cat([]float64{300, 350, 400, 450, 500, 520}, jitter(1000, 8)) // steady from second 6 of 14: inside the window
	tests := []struct {
		name     string
		windows  [][]float64
		class    string
		dropped  bool
		excluded int
	}{
		{"one steady window: flat (partial edges left out)", [][]float64{steadySecs}, "flat", false, 0},
		{"one window that warms up inside: no steady window, fork dropped", [][]float64{warmSecs}, "warmup", true, 1},
		{"warm first window, steady second: first window left out", [][]float64{warmSecs, steadySecs}, "warmup", false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ts []record.Trial
			var series []record.Sample
			for i, w := range tt.windows {
				ts = append(ts, record.Trial{Variant: "v", Group: "main", Trial: i + 1, Seq: 1, Valid: true, Fork: 1, Iteration: i + 1, RPS: 900})
				series = append(series, window(i+1, w)...)
			}
			kept, c := newSelection(m, series).cell(record.CellKey{Variant: "v", Group: "main"}, ts)
			f := c.Forks[0]
			if f.Basis != "seconds" || f.Class != tt.class || f.Dropped != tt.dropped || f.Excluded != tt.excluded {
				t.Fatalf("fork %+v, want on seconds: class %s, dropped %v, %d excluded", f, tt.class, tt.dropped, tt.excluded)
			}
			if want := len(ts) - tt.excluded; len(kept) != want {
				t.Errorf("kept %d windows, want %d", len(kept), want)
			}
		})
	}
}

// TestNotSteady: a claim on a cell left with fewer than stats.MinReplicates steady
// forks is inconclusive, "not in steady state", naming the forks; a cell
// that lost a fork but kept enough is judged as usual.
func TestNotSteady(t *testing.T) {
	check := stats.Check{Metric: "rps", Compare: []string{"a", "b"}}
	info := map[record.CellKey]record.SteadyCell{
		{Variant: "a", Group: "main"}: {ExcludedForks: []int{2, 4}, SteadyForks: 2},
		{Variant: "b", Group: "main"}: {ExcludedForks: []int{1}, SteadyForks: 4},
	}
	v := stats.Verdict{Status: stats.Supported}
	notSteady(&v, check, info, "main", "")
	if v.Status != stats.Inconclusive || v.Leans != stats.Supported || !v.Open ||
		!strings.HasPrefix(v.Reason, "not in steady state: a: 2 of 4 fork(s) never reached a steady state (fork 2, 4), 2 steady left") {
		t.Errorf("verdict %+v, want inconclusive leaning supported, open, reason naming a's forks 2 and 4", v)
	}
	v = stats.Verdict{Status: stats.Supported}
	notSteady(&v, check, map[record.CellKey]record.SteadyCell{{Variant: "b", Group: "main"}: info[record.CellKey{Variant: "b", Group: "main"}]}, "main", "")
	if v.Status != stats.Supported {
		t.Errorf("4 steady forks left: %+v, want the verdict untouched", v)
	}
	v = stats.Verdict{Status: stats.Supported}
	notSteady(&v, check, info, "other", "")
	if v.Status != stats.Supported {
		t.Errorf("another group's cells: %+v, want the verdict untouched", v)
	}
}

// TestWarmupOf reads each fork's warm-up from warmup.csv rows.
func TestWarmupOf(t *testing.T) {
	var rounds []record.Trial
	xs := []float64{100, 110, 105, 1000, 1010, 990, 1005, 995, 1008, 992, 1003, 997} // a zigzag at 1000 after 3 slow rounds
	for i, x := range xs {
		r := record.Trial{Variant: "v", Group: "main", Fork: 1, Seq: 1, WallMs: 500, RPS: x, Reason: "warm-up round " + itoa(i+1)}
		if i == len(xs)-1 {
			r.Reason += "; stop: steady"
		}
		rounds = append(rounds, r)
	}
	rounds = append(rounds, record.Trial{Variant: "v", Group: "main", Fork: 2, Seq: 2, WallMs: 10000, RPS: 900, Reason: "warm-up round 1"})
	c := record.SteadyCell{Forks: []record.SteadyFork{{Fork: 1}, {Fork: 2}}}
	warmupOf(&c, rounds, "rps", false)
	if f := c.Forks[0]; f.WarmupRounds != 12 || f.WarmupMs != 6000 || f.WarmupStop != "steady" || !strings.Contains(f.WarmupEvidence, "no longer improve") {
		t.Errorf("fork 1: %+v, want 12 rounds, 6000 ms, stopped steady with the rule's evidence", f)
	}
	if f := c.Forks[1]; f.WarmupRounds != 1 || f.WarmupStop != "fixed" || f.WarmupEvidence != "1 of the 8 rounds the rule reads" {
		t.Errorf("fork 2: %+v, want one fixed round", f)
	}

	// The target's CPU, read for steady.json's own cells: a warm-up that
	// stopped steady without naming it did not wait for it; one that
	// names it did; rounds with no CPU reading (0) are not its values.
	for _, tt := range []struct {
		why, stop, want string
		evidence        bool
	}{
		{"stopped on the primary alone", "stop: steady", NotWaited, true},
		{"waited for the CPU too", "stop: steady (wall_ms from round 9, target_cpu_s from round 12)", "steady", true},
		{"reached max", "stop: max (target_cpu_s not steady)", "max", true},
	} {
		var cpu []record.Trial
		for i, x := range xs {
			r := record.Trial{Variant: "v", Group: "main", Fork: 1, Seq: 1, WallMs: 500, TargetCPUSec: 1 / x, Reason: "warm-up round " + itoa(i+1)}
			if i == len(xs)-1 {
				r.Reason += "; " + tt.stop
			}
			cpu = append(cpu, r)
		}
		cpu = append(cpu, record.Trial{Variant: "v", Group: "main", Fork: 2, Seq: 2, WallMs: 10000, Reason: "warm-up round 1; stop: steady"})
		c := record.SteadyCell{Forks: []record.SteadyFork{{Fork: 1}, {Fork: 2}}}
		warmupOf(&c, cpu, "target_cpu_s", true)
		if f := c.Forks[0]; f.WarmupStop != tt.want || f.WarmupRounds != 12 || (f.WarmupEvidence != "") != tt.evidence {
			t.Errorf("%s: fork 1 %+v, want stop %q after 12 rounds with the rule's evidence", tt.why, f, tt.want)
		}
		if f := c.Forks[1]; f.WarmupRounds != 1 || f.WarmupEvidence != "" {
			t.Errorf("%s: fork 2 %+v: a round without a CPU reading has no value to judge", tt.why, f)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestWarmupEvidenceWhereTheRuleDecided: a warm-up that found wall_ms
// steady at round 12 and then waited for the JIT until round 16 keeps the
// rule's evidence at round 12; the rule read on all 16 rounds would say
// the last four "still move one way" (blocking-in-webflux 20261205T064455Z,
// platform: "stop: steady" beside "rounds 205-208 still move one way").
func TestWarmupEvidenceWhereTheRuleDecided(t *testing.T) {
	xs := []float64{100, 110, 105, 1000, 1010, 990, 1005, 995, 1008, 992, 1003, 997, 1004, 1003, 1002, 1001}
	tests := []struct {
		why, stop, want, not string
	}{
		{"steady at 12, JIT quiet at 16", "stop: steady (wall_ms from round 12, JIT quiet from round 16)",
			"at round 12: rounds 9-12", "still move one way"},
		{"steady on the last round: all rounds", "stop: steady", "rounds 13-16 still move one way", "at round"},
		{"another metric named like it", "stop: steady (p99_wall_ms from round 12, JIT quiet from round 16)",
			"rounds 13-16 still move one way", "at round"},
		{"a round without a value: round 12 is not the 12th value", "stop: steady (wall_ms from round 12, JIT quiet from round 16)",
			"rounds 12-15 still move one way", "at round"},
	}
	for _, tt := range tests {
		var rounds []record.Trial
		for i, x := range xs {
			if strings.HasPrefix(tt.why, "a round without") && i == 0 {
				x = math.NaN() // the round's wall time was not read
			}
			r := record.Trial{Variant: "v", Group: "main", Fork: 1, Seq: 1, WallMs: x, Reason: "warm-up round " + itoa(i+1)}
			if i == len(xs)-1 {
				r.Reason += "; " + tt.stop
			}
			rounds = append(rounds, r)
		}
		c := record.SteadyCell{Forks: []record.SteadyFork{{Fork: 1}}}
		warmupOf(&c, rounds, "wall_ms", false)
		f := c.Forks[0]
		if f.WarmupStop != "steady" || !strings.Contains(f.WarmupEvidence, tt.want) || strings.Contains(f.WarmupEvidence, tt.not) {
			t.Errorf("%s: stop %q evidence %q, want steady with %q and without %q", tt.why, f.WarmupStop, f.WarmupEvidence, tt.want, tt.not)
		}
	}
	if got := roundFrom("steady (wall_ms from round 26, JIT quiet from round 208)", "wall_ms"); got != 26 {
		t.Errorf("roundFrom = %d, want 26", got)
	}
}

func TestSteadyOnlyMatchesAggregate(t *testing.T) {
	seq := 0
	k := record.CellKey{Variant: "v", Group: "main"}
	ts := forkRows(1, &seq, cat([]float64{200, 210, 205, 198}, jitter(1000, 10))...)
	m := &experiments.Manifest{Variants: experiments.Variants{{Name: "v"}}, Load: experiments.LoadSpec{Measure: "main"}}
	got, _ := steadyOnly(m, map[record.CellKey][]record.Trial{k: ts}, nil)
	kept, _ := burstSel().cell(k, ts)
	if len(got[k]) != len(kept) || len(kept) != 10 {
		t.Errorf("steadyOnly kept %d trials, aggregate %d; want the same 10 steady iterations", len(got[k]), len(kept))
	}
}

// TestSteadyCellSharedSeq: every iteration of a fork shares the fork's seq
// in trials.csv (one job per fork), so leaving out an iteration must not
// leave out the fork (the els run 20261201T052646Z lost every trial that
// way before positions replaced seq).
func TestSteadyCellSharedSeq(t *testing.T) {
	var ts []record.Trial
	for f := 1; f <= 6; f++ {
		for i, x := range cat([]float64{700}, jitter(1000, 10)) {
			ts = append(ts, record.Trial{Variant: "v", Group: "main", Trial: len(ts) + 1, Seq: f, Valid: true,
				Fork: f, Iteration: i + 1, RPS: x})
		}
	}
	kept, c := burstSel().cell(record.CellKey{Variant: "v", Group: "main"}, ts)
	if len(kept) != 60 || c.Excluded != 6 {
		t.Fatalf("kept %d trials with %d excluded; want 60 and 6 (the first of each of 6 forks, whose iterations share a seq)", len(kept), c.Excluded)
	}
	for _, tr := range kept {
		if tr.Iteration == 1 {
			t.Errorf("fork %d kept its first iteration", tr.Fork)
		}
	}
}
