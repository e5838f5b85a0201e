package across_test

import (
	"fmt"
	"path/filepath"

	"github.com/threadlab/threadlab/judge/across"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// The two published io-bound runs of one manifest disagree: virtual threads
// beat platform threads by 1.99× in one and 2.54× in the other, and each
// 90% interval excludes the other estimate. The recorded differences
// separate them: another CPU (a different family and flag set), another
// kernel, and the second ran target and generator on separate hosts. Were
// they combined anyway, two runs give an across-runs interval wide enough
// to cover both, with most of the spread between runs rather than within
// them. (Read-only: the published runs under data/.)
func Example_ioBound() {
	var heads []record.Head
	for _, id := range []string{"20261201T050625Z", "20261201T104549Z"} {
		h, err := record.ReadHead(filepath.Join("..", "..", "data", "io-bound", id))
		if err != nil {
			fmt.Println(err)
			return
		}
		heads = append(heads, h)
	}
	res, err := across.Of(heads)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("latest:", res.Latest, "comparable:", res.Comparable)
	for _, e := range res.Excluded {
		fmt.Println("excluded:", e.Run)
		for _, w := range e.Why {
			fmt.Println("  ", w)
		}
	}
	var runs []stats.RunEstimate
	for _, h := range heads {
		for _, v := range h.Verdicts {
			if v.ID == "virtual-beats-platform" {
				runs = append(runs, stats.RunEstimate{Run: h.Meta.ID, Estimate: v.Ratio, Low: v.Low, High: v.High, Level: v.Level})
				fmt.Printf("%s: %.2f (%.2f-%.2f)\n", h.Meta.ID, v.Ratio, v.Low, v.High)
			}
		}
	}
	a, _ := stats.AcrossRuns(runs, stats.Alpha)
	fmt.Printf("combined anyway: %.2f, 90%% interval %.2f-%.2f, between-run sd %.2f, within-run sd %.2f (log scale)\n",
		a.Estimate, a.Low, a.High, a.BetweenSD, a.WithinSD)
	// Output:
	// latest: 20261201T104549Z comparable: [20261201T104549Z]
	// excluded: 20261201T050625Z
	//    topology one machine, not separate hosts [downstream load load target]
	//    cpu.flags_hash "2a4027ec32672dfd", not "6a93d771884cba54"
	//    kernel.release "6.18.44-fc-v1045", not "6.18.44-fc-v857"
	// 20261201T050625Z: 1.99 (1.87-2.14)
	// 20261201T104549Z: 2.54 (2.41-2.69)
	// combined anyway: 2.25, 90% interval 1.03-4.89, between-run sd 0.17, within-run sd 0.04 (log scale)
}

// Two clean io-bound runs ten hours apart, on one machine, from code with
// no measurement change between them: 136 and 176 bursts per fork, each
// fork warmed up until steady. The iteration count changes only how many
// replicates each run has, so the runs are combined. Each run's interval
// excludes the other's estimate; the across-runs interval holds both, and
// the between-run spread is larger than either run's own. (Read-only: the
// published runs under data/.)
func Example_ioBoundUntilSteady() {
	var heads []record.Head
	for _, id := range []string{"20261202T132753Z", "20261202T233707Z"} {
		h, err := record.ReadHead(filepath.Join("..", "..", "data", "io-bound", id))
		if err != nil {
			fmt.Println(err)
			return
		}
		heads = append(heads, h)
	}
	res, err := across.Of(heads)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("comparable:", res.Comparable, "excluded:", len(res.Excluded))
	for _, c := range res.Claims {
		if c.ID != "virtual-beats-platform" {
			continue
		}
		for _, r := range c.Runs {
			fmt.Printf("%s: %.3f (%.3f-%.3f)\n", r.Run, r.Estimate, r.Low, r.High)
		}
		a := c.Across
		fmt.Printf("across runs: %.2f, 90%% interval %.2f-%.2f, between-run sd %.3f, within-run sd %.3f (log scale)\n",
			a.Estimate, a.Low, a.High, a.BetweenSD, a.WithinSD)
	}
	// Output:
	// comparable: [20261202T132753Z 20261202T233707Z] excluded: 0
	// 20261202T132753Z: 2.578 (2.554-2.587)
	// 20261202T233707Z: 2.798 (2.796-2.802)
	// across runs: 2.69, 90% interval 2.07-3.48, between-run sd 0.058, within-run sd 0.003 (log scale)
}
