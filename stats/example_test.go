package stats_test

import (
	"fmt"

	"github.com/threadlab/threadlab/stats"
)

// Seed 000's WebFlux /io burst: six identical trials, one of which swung
// by more than 50%. The median shrugs it off; the interval and the flags
// do not hide it.
func ExampleSummarize() {
	wallMs := []float64{795, 1247, 810, 830, 802, 820}
	s := stats.Summarize(wallMs)
	fmt.Printf("median %.0f ms, 95%% CI %.0f–%.0f (%s, coverage %.3f)\n", s.Median, s.Low, s.High, s.CIMethod, s.Confidence)
	fmt.Printf("min %.0f, max %.0f, IQR %.0f, CV %.1f%%\n", s.Min, s.Max, s.IQR, 100*s.CV)
	for _, f := range stats.Flags(wallMs, stats.HigherIsBetter("wall_ms")) {
		fmt.Println(f.Code)
	}
	// Output:
	// median 815 ms, 95% CI 795–1247 (order-statistic, coverage 0.969)
	// min 795, max 1247, IQR 28, CV 20.2%
	// noisy-cv
	// outlier-trial
}

// Platform vs virtual threads on the same burst: a clear difference, and a
// difference smaller than the minimum effect reported as "~".
func ExampleCompare() {
	platform := []float64{1325, 1310, 1342, 1330, 1318, 1336}
	virtual := []float64{1042, 1050, 1038, 1047, 1055, 1041}
	c := stats.Compare(platform, virtual, 0.05)
	fmt.Printf("%s p=%.4f n=%d+%d\n", c.Verdict, c.P, c.NA, c.NB)

	rerun := []float64{1329, 1314, 1340, 1333, 1320, 1338}
	c = stats.Compare(platform, rerun, 0.05)
	fmt.Printf("%s (%s)\n", c.Verdict, c.Note)
	// Output:
	// -21.3% p=0.0022 n=6+6
	// ~ (p=0.82 >= 0.05: no significant difference)
}

// An absolute check on one variant: five trials without a single error
// support "errors at_most 0" by the sign test, p = 1/2^5.
func ExampleEvaluateWith_absolute() {
	check := stats.Check{Metric: "errors", Variant: "webflux", AtMost: stats.F(0)}
	cells := []stats.Cell{{Variant: "webflux", Metric: "errors", Values: []float64{0, 0, 0, 0, 0}}}
	v := stats.EvaluateWith("no-errors", "WebFlux serves the burst without errors", check, cells, stats.Options{Seed: 1})
	fmt.Println(v.Status, v.P)
	// Output:
	// supported 0.03125
}

// A group-sequential run: the same doubled latency is not yet decided at
// the first of 8 looks (O'Brien-Fleming spending keeps almost all of alpha
// for later) and is decided at the last; Decided tells the pipeline when to
// stop adding rounds.
func ExampleDecided() {
	base := []float64{100, 101, 99, 100, 102, 98}
	slow := []float64{200, 202, 198, 200, 204, 196}
	cells := []stats.Cell{{Variant: "a", Metric: "wall_ms", Values: slow}, {Variant: "b", Metric: "wall_ms", Values: base}}
	check := stats.Check{Metric: "wall_ms", Compare: []string{"a", "b"}, AtLeast: stats.F(1.5)}
	for _, look := range []int{1, 8} {
		o := stats.Options{Seed: 1, Sequential: stats.Sequential{Look: look, MaxLooks: 8}}
		v := stats.EvaluateWith("slower", "a takes 1.5x as long", check, cells, o)
		fmt.Printf("look %d: %s, decided %v\n", look, v.Status, stats.Decided(v))
	}
	// Output:
	// look 1: inconclusive, decided false
	// look 8: supported, decided true
}
