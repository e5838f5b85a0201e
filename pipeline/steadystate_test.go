package pipeline

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/record"
)

// forkTrials makes one fork's valid iterations of rps, in execution order.
func forkTrials(fork int, seq *int, rps ...float64) []record.Trial {
	var ts []record.Trial
	for i, x := range rps {
		*seq++
		ts = append(ts, record.Trial{Variant: "v", Group: "main", Trial: *seq, Seq: *seq, Valid: true,
			Fork: fork, Iteration: i + 1, RPS: x})
	}
	return ts
}

// jitter is a flat level with a small deterministic wobble (±0.5%).
func jitter(level float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = level * (1 + 0.005*float64((i*7)%5-2))
	}
	return out
}

func TestSteadyCell(t *testing.T) {
	k := record.CellKey{Variant: "v", Group: "main"}
	seq := 0
	flat := forkTrials(1, &seq, jitter(1000, 10)...)
	warm := forkTrials(2, &seq, append([]float64{200, 210, 205, 198}, jitter(1000, 10)...)...)
	short := forkTrials(3, &seq, 500, 1000) // too few iterations to classify
	ts := append(append(append([]record.Trial{}, flat...), warm...), short...)

	kept, c := steadyCell(k, ts, "rps")
	if got := c.Forks[0].Class; got != "flat" {
		t.Errorf("fork 1: class %q, want flat (a steady level with 0.5%% noise)", got)
	}
	if got := c.Forks[1]; got.Class != "warmup" || got.SteadyFrom != 4 || got.Excluded != 4 {
		t.Errorf("fork 2: %+v, want warmup from iteration 4 with 4 excluded (four slow iterations, then flat)", got)
	}
	if got := c.Forks[2]; got.Class != "" || got.Excluded != 0 {
		t.Errorf("fork 3: %+v, want unclassified with nothing excluded (2 < %d iterations)", got, minIterations)
	}
	if c.Consistency != "good inconsistent" || c.Excluded != 4 || c.Unsettled != 0 {
		t.Errorf("cell: consistency %q, excluded %d, unsettled %d; want good inconsistent, 4, 0", c.Consistency, c.Excluded, c.Unsettled)
	}
	if len(kept) != len(ts)-4 {
		t.Fatalf("kept %d trials, want %d (the warm-up iterations dropped)", len(kept), len(ts)-4)
	}
	med, _ := forkValues(kept, "rps")
	if med[1] < 950 {
		t.Errorf("fork 2 median %.0f after exclusion, want the steady level near 1000", med[1])
	}
	if line := steadyLine(c); !strings.Contains(line, "1 flat, 1 warmup") || !strings.Contains(line, "4 iteration(s) excluded") {
		t.Errorf("summary line %q does not name the classes and the exclusion", line)
	}
}

func TestSteadyCellUnsettledKeepsFork(t *testing.T) {
	seq := 0
	// Still climbing when the fork ended: a last segment too short to be steady.
	ts := forkTrials(1, &seq, append(jitter(500, 10), 1000, 1000)...)
	kept, c := steadyCell(record.CellKey{Variant: "v", Group: "main"}, ts, "rps")
	if c.Forks[0].Class != "no steady state" || c.Unsettled != 1 {
		t.Fatalf("fork: %+v, unsettled %d; want no steady state, 1", c.Forks[0], c.Unsettled)
	}
	if len(kept) != len(ts) {
		t.Errorf("kept %d of %d trials: an unsettled fork keeps its iterations (flagged, not dropped)", len(kept), len(ts))
	}
}

func TestSteadyWindowsAndWarmup(t *testing.T) {
	seq := 0
	ts := forkTrials(1, &seq, 1000)
	var series []record.Sample
	for i, x := range append([]float64{50, 60, 55}, jitter(1000, 12)...) {
		series = append(series, record.Sample{Variant: "v", Group: "main", Trial: 1, T: float64(i + 1), Requests: int64(x)})
	}
	series = append(series, record.Sample{Variant: "v", Group: "other", Trial: 1, T: 1, Requests: 1})
	w := steadyWindows(ts, seriesByTrial(series))
	if len(w) != 1 || w[0].Class != "warmup" || w[0].Seconds != 15 {
		t.Errorf("windows %+v, want one 15 s warmup window (slow first seconds, other group ignored)", w)
	}

	var rounds []record.Trial
	for i, x := range append([]float64{100, 110, 105}, jitter(1000, 9)...) {
		rounds = append(rounds, record.Trial{Variant: "v", Group: "main", Fork: 1, Seq: i + 1, WallMs: 1000, RPS: x,
			Reason: "warm-up round " + string(rune('1'+i%9))})
	}
	var c record.SteadyCell
	warmupRecommendation(&c, rounds, "rps")
	if !c.WarmupOK || c.WarmupMs != 3000 {
		t.Errorf("warm-up: ok %v after %.0f ms (%s), want steady after 3000 ms (three slow 1 s rounds)", c.WarmupOK, c.WarmupMs, c.WarmupNote)
	}
}

func TestSteadyLinesSkipsFlat(t *testing.T) {
	dir := t.TempDir()
	st := record.Steady{Metric: "rps", Cells: []record.SteadyCell{
		{Variant: "a", Group: "main", Counts: map[string]int{"flat": 3}, Consistency: "flat"},
		{Variant: "b", Group: "main", Counts: map[string]int{"flat": 2, "slowdown": 1}, Consistency: "bad inconsistent", Excluded: 2},
	}}
	if err := record.WriteJSON(dir, record.SteadyFile, st); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := steadyLines(&b, dir, record.Meta{Measured: "main"}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "a:") || !strings.Contains(out, "b: forks 2 flat, 1 slowdown (bad inconsistent)") {
		t.Errorf("summary:\n%s\nwant a line for b only", out)
	}
}

func TestSteadyOnlyMatchesAggregate(t *testing.T) {
	seq := 0
	k := record.CellKey{Variant: "v", Group: "main"}
	ts := forkTrials(1, &seq, append([]float64{200, 210, 205, 198}, jitter(1000, 10)...)...)
	got := steadyOnly(map[record.CellKey][]record.Trial{k: ts}, "rps")[k]
	kept, _ := steadyCell(k, ts, "rps")
	if len(got) != len(kept) || len(got) != 10 {
		t.Errorf("steadyOnly kept %d trials, aggregate %d; want the same 10 steady iterations", len(got), len(kept))
	}
}

// TestAggregateFlagsUnsettled runs the aggregate stage on a trials.csv
// with one fork still climbing: the primary metric's summary row carries
// the unsettled flag and steady.json says which fork.
func TestAggregateFlagsUnsettled(t *testing.T) {
	dir := t.TempDir()
	seq := 0
	ts := append(forkTrials(1, &seq, jitter(1000, 10)...), forkTrials(2, &seq, append(jitter(500, 10), 1000, 1000)...)...)
	if err := record.WriteCSV(dir, record.TrialsFile, ts); err != nil {
		t.Fatal(err)
	}
	m := &experiments.Manifest{Variants: experiments.Variants{{Name: "v"}},
		Load: experiments.LoadSpec{Measure: "main"}}
	s := &State{M: m, Dir: dir, Meta: record.Meta{Groups: []string{"main"}}, Opt: Options{Log: io.Discard}}
	if m.Primary() != "rps" {
		t.Fatalf("primary metric %s, want rps for a manifest without a burst group", m.Primary())
	}
	if err := (Aggregate{}).Run(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	rows, err := record.ReadCSV[record.Summary](dir, record.SummaryFile)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rows {
		if r.Metric == "rps" {
			found = true
			if !strings.Contains(r.Flags, FlagUnsettled) {
				t.Errorf("rps flags %q, want %s (fork 2 never settled)", r.Flags, FlagUnsettled)
			}
		} else if strings.Contains(r.Flags, FlagUnsettled) {
			t.Errorf("%s flagged %s: only the primary metric is classified", r.Metric, FlagUnsettled)
		}
	}
	if !found {
		t.Fatal("no rps row in summary.csv")
	}
	st, ok, err := record.ReadSteady(dir)
	if err != nil || !ok || len(st.Cells) != 1 || st.Cells[0].Unsettled != 1 || st.Cells[0].Forks[1].Class != "no steady state" {
		t.Errorf("steady.json %+v (ok %v, err %v), want one cell with fork 2 unsettled", st, ok, err)
	}
}

// TestFirstIteration: the run-wide sign test of the first measured
// iteration against its fork's later ones, and what it leaves out.
func TestFirstIteration(t *testing.T) {
	// forks makes n forks of one cell, each three iterations of rps: the
	// first given by first(i), then two steady ones at 1000.
	forks := func(n int, first func(i int) float64) []record.Trial {
		seq := 0
		var ts []record.Trial
		for i := 1; i <= n; i++ {
			ts = append(ts, forkTrials(i, &seq, first(i), 1000, 1002)...)
		}
		return ts
	}
	slow := func(int) float64 { return 700 } // rps: lower is worse
	mixed := func(i int) float64 {
		if i%2 == 0 {
			return 700
		}
		return 1300
	}
	cases := []struct {
		name      string
		ts        []record.Trial
		worse     int
		excluded  bool
		nilResult bool
	}{
		{"every fork starts slow: 8 of 8, p=2^-8, significant", forks(8, slow), 8, true, false},
		{"too few forks to decide: 5 of 5 slow, p=1/32 > 0.01", forks(5, slow), 5, false, false},
		{"half slow, half fast: chance", forks(8, mixed), 4, false, false},
		{"one iteration per fork (smoke): nothing to compare", func() []record.Trial {
			seq := 0
			return append(forkTrials(1, &seq, 700), forkTrials(2, &seq, 700)...)
		}(), 0, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := record.CellKey{Variant: "v", Group: "main"}
			cells := map[record.CellKey][]record.Trial{k: c.ts}
			fi := firstIteration(cells, "rps")
			if c.nilResult {
				if fi != nil {
					t.Fatalf("got %+v, want nil: no fork has two iterations", fi)
				}
				return
			}
			if fi == nil || fi.Worse != c.worse || fi.Excluded != c.excluded {
				t.Fatalf("got %+v, want worse=%d excluded=%v", fi, c.worse, c.excluded)
			}
			kept := steadyOnly(cells, "rps")[k]
			want := len(c.ts)
			if c.excluded {
				want -= len(c.ts) / 3 // one iteration of each three-iteration fork
			}
			if len(kept) != want {
				t.Errorf("kept %d of %d trials, want %d", len(kept), len(c.ts), want)
			}
			for _, tr := range kept {
				if c.excluded && tr.Iteration == 1 {
					t.Errorf("fork %d kept its first iteration although the test was significant", tr.Fork)
				}
			}
		})
	}
	// The direction follows the metric: a first wall time that is longer is worse.
	seq := 0
	var ts []record.Trial
	for i := 1; i <= 8; i++ {
		for j, w := range []float64{1400, 1000, 1010} {
			seq++
			ts = append(ts, record.Trial{Variant: "v", Group: "main", Trial: seq, Seq: seq, Valid: true, Fork: i, Iteration: j + 1, WallMs: w})
		}
	}
	fi := firstIteration(map[record.CellKey][]record.Trial{{Variant: "v", Group: "main"}: ts}, "wall_ms")
	if fi == nil || fi.Worse != 8 || !fi.Excluded {
		t.Errorf("wall_ms 1400 then 1000: got %+v, want 8 worse and excluded (lower wall time is better)", fi)
	}
	if line := firstIterationLine("wall_ms", fi); !strings.Contains(line, "8 of 8 forks") || !strings.Contains(line, "lengthen load.warmup") {
		t.Errorf("summary line %q does not give the count and the fix", line)
	}
}

// TestSteadyCellSharedSeq: every iteration of a fork shares the fork's seq
// in trials.csv (one job per fork), so leaving out an iteration must not
// leave out the fork (the els run 20261201T052646Z lost every trial that
// way before positions replaced seq).
func TestSteadyCellSharedSeq(t *testing.T) {
	var ts []record.Trial
	for f := 1; f <= 6; f++ {
		for i, x := range []float64{700, 1000, 1002} {
			ts = append(ts, record.Trial{Variant: "v", Group: "main", Trial: len(ts) + 1, Seq: f, Valid: true,
				Fork: f, Iteration: i + 1, RPS: x})
		}
	}
	k := record.CellKey{Variant: "v", Group: "main"}
	kept, c := steadyCellWith(k, ts, "rps", true)
	if len(kept) != 12 || c.Excluded != 6 {
		t.Fatalf("kept %d trials with %d excluded; want 12 and 6 (the first of each of 6 forks, whose iterations share a seq)", len(kept), c.Excluded)
	}
	for _, tr := range kept {
		if tr.Iteration == 1 {
			t.Errorf("fork %d kept its first iteration", tr.Fork)
		}
	}
}
