package stats

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"testing"
)

// Sequential forks on the catalog's claims: how many of a fixed design's
// forks the claims need when a run starts at 3 forks per cell and adds one
// round at a time while a claim is undecided (forks: {min: 3, max: N}, the
// pipeline's DecideByClaims), against running N forks outright.
//
// catalogClaims are the superiority compare claims of the latest published
// run of each experiment (data/<exp>/, 2026-12-01), each as margin = ln of
// the estimate over the claim's threshold on the claimed side (negative:
// the truth is on the wrong side, a contradiction to find) and sigma = the
// fork-to-fork log standard deviation, read back from the published 90%
// interval as se·√(n/2), se = (ln high − ln low)/(2·1.645), n the forks.
// Floors: sigma ≥ 0.01.
var catalogClaims = []struct {
	name          string
	margin, sigma float64
}{
	{"blocking-in-webflux/blocking-webflux-worse-than-tomcat", 1.389, 0.038},
	{"concurrency-sweep/virtual-not-thread-capped", 0.295, 0.065},
	{"concurrency-sweep/virtual-beats-capped-platform", 2.265, 0.059},
	{"concurrency-sweep/platform-cpu-idle-virtual-busy", 0.792, 0.112},
	{"concurrency-sweep/virtual-tail-fraction", 1.273, 0.261},
	{"connection-burst/tomcat-costs-more-cpu", -0.023, 0.170},
	{"connection-burst/loom-tomcat-fewer-gcs-than-webflux", 0.000, 0.138},
	{"connection-burst/loom-tomcat-fewer-gcs-than-loom-netty", 0.560, 0.212},
	{"cpu-bound/webflux-naive-slower", -0.014, 0.112},
	{"cpu-bound/offloaded-beats-naive", 0.089, 0.108},
	{"cpu-bound/offloaded-still-costs", -0.104, 0.139},
	{"event-loop-starvation/naive-starves-io", 0.879, 0.052},
	{"event-loop-starvation/offloading-helps", 0.619, 0.085},
	{"event-loop-starvation/offloading-is-no-guarantee", 0.480, 0.099},
	{"event-loop-starvation/platform-no-failure-mode", -0.864, 0.161},
	{"event-loop-starvation/virtual-no-failure-mode", -1.366, 0.035},
	{"io-bound/virtual-beats-platform", 0.838, 0.062},
	{"io-bound/webflux-beats-platform", 0.606, 0.035},
	{"io-bound/webflux-beats-virtual", -0.103, 0.067},
	{"io-bound/virtual-tail-beats-platform", 0.879, 0.062},
	{"io-bound/webflux-tail-beats-platform", 0.914, 0.031},
	{"io-bound/webflux-tail-beats-virtual", -0.060, 0.063},
	{"pool-sweep/virtual-rides-the-pool", 0.291, 0.010},
	{"reactor-parallel/subscribe-does-not-parallelize", -0.354, 0.118},
	{"reactor-parallel/serial-worse-tail", 0.249, 0.104},
	{"reactor-parallel/oversized-less-throughput", -0.123, 0.078},
	{"reactor-parallel/oversized-worse-tail", -0.161, 0.080},
}

// seqOutcome is one simulated claim: its status, and the forks per cell
// it used.
type seqOutcome struct {
	status string
	forks  int
}

// claimForks draws n forks per variant for "a/b at_least 1.5" with the
// truth at 1.5·e^margin: fork levels lognormal with log-sd sigma·√0.87 and
// 3 iterations each with log-sd sigma/2 (the median of 3 adds about
// (π/2)·σ²/4/3 = 0.13σ², so a fork median's log-sd is about sigma).
func claimForks(rng *rand.Rand, margin, sigma float64, n int) []Cell {
	d := covDesign{forks: n, iters: 3, between: sigma * math.Sqrt(0.87), within: sigma / 2}
	return []Cell{{Variant: "a", Metric: "rps", Forks: twoLevel(rng, 150*math.Exp(margin), d)},
		{Variant: "b", Metric: "rps", Forks: twoLevel(rng, 100, d)}}
}

var seqCheck = Check{Metric: "rps", Compare: []string{"a", "b"}, AtLeast: F(1.5)}

// fixedForks evaluates n forks at once.
func fixedForks(rng *rand.Rand, margin, sigma float64, n int, o Options) seqOutcome {
	v := EvaluateWith("seq", "", seqCheck, claimForks(rng, margin, sigma, n), o)
	return seqOutcome{v.Status, n}
}

// sequentialForks draws maxN forks and looks after each round from minN,
// stopping at the first decided look, as the pipeline's DecideByClaims.
func sequentialForks(rng *rand.Rand, margin, sigma float64, minN, maxN int, spending string, o Options) seqOutcome {
	full := claimForks(rng, margin, sigma, maxN)
	var v Verdict
	n := minN
	for ; n <= maxN; n++ {
		cells := make([]Cell, len(full))
		for i, c := range full {
			c.Forks = c.Forks[:n]
			cells[i] = c
		}
		o.Sequential = TrialLooks(n, minN, maxN)
		o.Sequential.Spending = spending
		v = EvaluateWith("seq", "", seqCheck, cells, o)
		if Decided(v) {
			break
		}
	}
	return seqOutcome{v.Status, min(n, maxN)}
}

// seqSummary runs reps of every catalog claim at a fixed maxN and
// sequentially from 3, and returns the forks used over the fixed design's
// (all claims pooled), and how many claims changed their modal verdict.
type seqSummary struct {
	maxN         int
	spending     string
	fraction     float64 // forks used / forks of the fixed design, over all claims and reps
	fixedDecided float64 // fraction of (claim, rep) decided by the fixed design
	seqDecided   float64 // ... by the sequential one
	wrong        float64 // decided against the sign of the margin (supported at margin < 0 or contradicted at > 0)
	// decidable is forks used / N over the claims the fixed design decides
	// in at least 90% of reps (the rest run to the max by design).
	decidable float64
}

func seqCatalog(maxN, reps int, spending string, seed uint64) seqSummary {
	s := seqSummary{maxN: maxN, spending: spending}
	used, planned := 0, 0
	var fixedDec, seqDec, wrong, dUsed, dPlanned int
	for i, c := range catalogClaims {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		u, fd := 0, 0
		for range reps {
			f := fixedForks(rng, c.margin, c.sigma, maxN, calOptions)
			q := sequentialForks(rng, c.margin, c.sigma, 3, maxN, spending, calOptions)
			if f.status != Inconclusive {
				fixedDec++
				fd++
			}
			if q.status != Inconclusive {
				seqDec++
			}
			if (q.status == Supported && c.margin < 0) || (q.status == Contradicted && c.margin > 0) {
				wrong++
			}
			u += q.forks
		}
		used += u
		planned += reps * maxN
		if float64(fd) >= 0.9*float64(reps) {
			dUsed += u
			dPlanned += reps * maxN
		}
	}
	s.decidable = float64(dUsed) / float64(max(1, dPlanned))
	total := float64(reps * len(catalogClaims))
	s.fraction = float64(used) / float64(planned)
	s.fixedDecided, s.seqDecided, s.wrong = float64(fixedDec)/total, float64(seqDec)/total, float64(wrong)/total
	return s
}

// TestSequentialForksCatalog runs the catalog simulation on a small grid and
// asserts that a sequential design never decides a claim against the side
// of its truth more often than the level allows.
func TestSequentialForksCatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation takes a minute; run without -short")
	}
	t.Parallel() // CPU only, no timing: beside the other Monte Carlo tests
	s := seqCatalog(10, 20, "", 31)
	t.Logf("max 10 forks, O'Brien-Fleming: %.0f%% of the fixed design's forks; decided %.2f fixed, %.2f sequential; wrong side %.3f",
		100*s.fraction, s.fixedDecided, s.seqDecided, s.wrong)
	if s.wrong > 0.05 {
		t.Errorf("sequential forks decided %.3f of the claims against their truth's side", s.wrong)
	}
}

// seqTable prints the sequential-forks table of METHODOLOGY.md.
func seqTable(w io.Writer, reps int) {
	fmt.Fprintf(w, "#### Sequential forks on the catalog's %d superiority claims (forks: {min: 3, max: N} against N outright)\n\n", len(catalogClaims))
	fmt.Fprintln(w, "| N (fixed design) | spending | forks used / N | same, claims N decides (≥ 90%) | decided, fixed | decided, sequential | decided against the truth's side |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, n := range []int{5, 10} {
		for _, sp := range []string{OBrienFleming, Pocock} {
			s := seqCatalog(n, reps, sp, 31)
			fmt.Fprintf(w, "| %d | %s | %.2f | %.2f | %.3f | %.3f | %.3f |\n", n, sp, s.fraction, s.decidable, s.fixedDecided, s.seqDecided, s.wrong)
		}
	}
	fmt.Fprintln(w)
}
