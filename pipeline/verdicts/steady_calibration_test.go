package verdicts

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/record"
	"github.com/threadlab/threadlab/pipeline/stats"
)

// Calibration of the steady-state selection (issue 20): simulated runs
// whose variant B warms up for longer than the fixed warm-up covered,
// judged through the production path (Evaluate: per-fork steady
// selection, fork medians, the claims' tests and the production
// bootstrap). The truth is B = A in steady state; the claim says B takes
// at least 1.05x A's wall time ("A is faster"). Every "supported" is
// false. `go test -run TestSteadyCalibration -steadycal.reps 1000
// ./pipeline/verdicts/` runs the long version; go test runs a few reps.

var steadyCalReps = flag.Int("steadycal.reps", 0, "repetitions per design of TestSteadyCalibration (0: 30, or 8 with -short)")

const steadyCalManifest = `name: steadycal
title: variant-specific warm-up
question: is A faster than B?
variants:
  a: {command: [a, "{port}"]}
  b: {command: [b, "{port}"]}
load: {model: burst, burst: 10, requests: [{path: /}], warmup: 1s}
forks: FORKS
iterations: 10
claims:
  - {id: a-faster, says: A finishes at least 1.05x sooner, check: {metric: wall_ms, compare: [b, a], at_least: 1.05}}
`

// steadyCalRun draws one run: per variant, forks x 10 iterations of
// wall_ms, lognormal with 5% fork-to-fork and 4% iteration noise around
// 100 ms; iteration i (0-based) of a fork is slower by warm[i]. A's
// warm-up is one iteration of +5%; B's lasts six of the ten, from +40%
// down to +10% (pool-sweep's virtual variant was still slower at its sixth
// iteration of nine): the median of every iteration is then ~10% slow.
func steadyCalRun(rng *rand.Rand, forks int) []record.Trial {
	warm := map[string][]float64{"a": {1.05}, "b": {1.40, 1.30, 1.25, 1.20, 1.15, 1.10}}
	ln := func(cv float64) float64 { return math.Exp(math.Sqrt(math.Log(1+cv*cv)) * rng.NormFloat64()) }
	var ts []record.Trial
	seq := 0
	for f := 1; f <= forks; f++ {
		for _, v := range []string{"a", "b"} {
			seq++
			level := 100 * ln(0.05)
			for i := range 10 {
				x := level * ln(0.04)
				if i < len(warm[v]) {
					x *= warm[v][i]
				}
				ts = append(ts, record.Trial{Variant: v, Group: "main", Trial: seq*100 + i, Seq: seq, Fork: f, Iteration: i + 1, Valid: true, WallMs: x, Requests: 10})
			}
		}
	}
	return ts
}

// naive judges the same trials with every iteration kept: what the
// verdicts did before per-fork selection, for comparison.
func naive(m *experiments.Manifest, ts []record.Trial, o stats.Options) string {
	c := m.Claims[0]
	v := stats.EvaluateWith(c.ID, c.Says, c.Check, claimCells(m, c, GroupTrials(ts)), o)
	return v.Status
}

func TestSteadyCalibration(t *testing.T) {
	reps := *steadyCalReps
	if reps == 0 {
		reps = 30
		if testing.Short() {
			reps = 8
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| forks | reps | false supported (steady selection) | false supported (every iteration) | inconclusive |\n|---|---|---|---|---|\n")
	for _, forks := range []int{4, 8, 16} {
		m, err := experiments.Parse("steadycal.yaml", []byte(strings.Replace(steadyCalManifest, "FORKS", fmt.Sprint(forks), 1)), "")
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(forks), 20))
		sup, supNaive, inc := 0, 0, 0
		for r := range reps {
			ts := steadyCalRun(rng, forks)
			o := stats.Options{Seed: int64(r + 1)}
			v := Evaluate(m, ts, o, Host{})[0]
			switch v.Status {
			case stats.Supported:
				sup++
			case stats.Inconclusive:
				inc++
			}
			if naive(m, ts, o) == stats.Supported {
				supNaive++
			}
		}
		rate := float64(sup) / float64(reps)
		fmt.Fprintf(&table, "| %d | %d | %.3f | %.3f | %.3f |\n", forks, reps, rate, float64(supNaive)/float64(reps), float64(inc)/float64(reps))
		// 5% plus two Monte-Carlo standard errors at this many reps.
		if limit := 0.05 + 2*math.Sqrt(0.05*0.95/float64(reps)); rate > limit {
			t.Errorf("%d forks: false supported %.3f over %d reps, above %.3f", forks, rate, reps, limit)
		}
	}
	t.Logf("variant-specific warm-up (B +40%% to +10%% over its first 6 of 10 iterations, A +5%% over 1), truth B = A, claim B >= 1.05 A:\n%s", table.String())
}
