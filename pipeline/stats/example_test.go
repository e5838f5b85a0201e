package stats_test

import (
	"fmt"

	"github.com/threadlab/threadlab/pipeline/stats"
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
