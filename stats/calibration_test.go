package stats

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// The calibration suite measures each check kind's error rates and power by
// Monte Carlo over lognormal trials (the shape of run times and rates: a
// multiplicative noise with the given coefficient of variation), seeded so
// that every run prints the same table. TestCalibration runs a small
// version in seconds and asserts the figures; `make calibration`
// runs the long version (-calibration) and prints the markdown table that
// METHODOLOGY.md carries.

var (
	calibrate      = flag.Bool("calibration", false, "run the long calibration and print its markdown table")
	calibrateReps  = flag.Int("calibration.reps", 100, "Monte Carlo repetitions per cell of the long calibration")
	calibrateKinds = flag.String("calibration.kind", "", "print only the tables of the check kinds whose name contains this (and no coverage or sequential tables): to refresh one kind's table after its rule changed")
)

// truth places a simulated claim relative to its threshold.
type truth string

const (
	atThreshold  truth = "at threshold"   // the truth sits exactly on the claim's bound
	beats10      truth = "beats by 10%"   // the truth satisfies the claim with 10% to spare
	beats30      truth = "beats by 30%"   // 1.3x the threshold: the power target
	bandCentre   truth = "centre of band" // equivalence: the truth at the band's centre
	bandCentreCV truth = "centre, CV 5%"  // the equivalence power figure
	misses10     truth = "misses by 10%"  // the truth on the wrong side of the bound by 10%: contradiction power
	misses30     truth = "misses by 30%"  // ... by 30%
)

// calKind is one check kind with a way to build its cells for a truth.
type calKind struct {
	name  string
	check Check
	// cells draws one data set of n replicates per cell at truth t.
	cells func(rng *rand.Rand, t truth, cv float64, n int) []Cell
}

// lognormal draws n trials with the given median and coefficient of
// variation: median x exp(σZ), σ² = ln(1 + CV²).
func lognormal(rng *rand.Rand, median, cv float64, n int) []float64 {
	sigma := math.Sqrt(math.Log(1 + cv*cv))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = median * math.Exp(sigma*rng.NormFloat64())
	}
	return xs
}

// factor is how far the truth sits from the threshold, on the claim's
// side (>1 satisfies it).
func factor(t truth) float64 {
	switch t {
	case beats10:
		return 1.1
	case beats30:
		return 1.3
	case misses10:
		return 1 / 1.1
	case misses30:
		return 1 / 1.3
	}
	return 1
}

// The calibration's data are forks × iterations, as a run produces them,
// from a two-level random-effects model on the log scale (Kalibera & Jones
// 2013): iteration j of fork i is m·exp(σ_b·U_i + σ_w·E_ij), U and E
// standard normal. The tables' CV is the between-fork CV (σ_b² = ln(1+CV²));
// each fork runs calIters iterations with a within-fork CV of calWithinCV,
// small enough that a fork median's CV stays within a few percent of the
// row's, so the tables keep their meaning; the coverage table varies the
// two levels' shares.
const (
	calIters    = 3
	calWithinCV = 0.02
)

// forkify turns each cell's Values (one true fork level each) into
// Forks of iters iterations with within-fork noise cvWithin, as the
// pipeline hands cells to the claim tests (Cell.Forks).
func forkify(rng *rand.Rand, cells []Cell, iters int, cvWithin float64) []Cell {
	sw := math.Sqrt(math.Log(1 + cvWithin*cvWithin))
	out := make([]Cell, len(cells))
	for i, c := range cells {
		for _, v := range c.Values {
			f := make([]float64, iters)
			for j := range f {
				f[j] = v * math.Exp(sw*rng.NormFloat64())
			}
			c.Forks = append(c.Forks, f)
		}
		c.Values = nil
		out[i] = c
	}
	return out
}

func twoCells(a, b []float64) []Cell {
	return []Cell{{Variant: "a", Metric: "rps", Values: a}, {Variant: "b", Metric: "rps", Values: b}}
}

func levelCells(meds []float64, rng *rand.Rand, cv float64, n int) []Cell {
	var out []Cell
	for i, m := range meds {
		out = append(out, Cell{Variant: "v", Metric: "rps", Point: map[string]string{"k": fmt.Sprint(i + 1)},
			Values: lognormal(rng, m, cv, n)})
	}
	return out
}

// calKinds are the check kinds under calibration.
var calKinds = []calKind{
	{"at_least 1.5", Check{Metric: "rps", Compare: []string{"a", "b"}, AtLeast: F(1.5)},
		func(rng *rand.Rand, t truth, cv float64, n int) []Cell {
			return twoCells(lognormal(rng, 150*factor(t), cv, n), lognormal(rng, 100, cv, n))
		}},
	{"at_most 0.8", Check{Metric: "rps", Compare: []string{"a", "b"}, AtMost: F(0.8)},
		func(rng *rand.Rand, t truth, cv float64, n int) []Cell {
			return twoCells(lognormal(rng, 80/factor(t), cv, n), lognormal(rng, 100, cv, n))
		}},
	{"band 0.9–1.1", Check{Metric: "rps", Compare: []string{"a", "b"}, AtLeast: F(1 / 1.1), AtMost: F(1.1)},
		func(rng *rand.Rand, t truth, cv float64, n int) []Cell {
			r := 1.0 // the centre (on the log scale) of 1/1.1-1.1
			switch t {
			case atThreshold:
				r = 1.1
			case beats10:
				r = 1.1 / 1.1
			case misses10, misses30:
				r = 1.1 / factor(t) // outside the band by 10% or 30%
			}
			return twoCells(lognormal(rng, 100*r, cv, n), lognormal(rng, 100, cv, n))
		}},
	{"flat_over ±10%", Check{Metric: "rps", Variant: "v", FlatOver: map[string][]string{"k": {"1", "2", "3"}}},
		func(rng *rand.Rand, t truth, cv float64, n int) []Cell {
			top := 1.0
			switch t {
			case atThreshold:
				top = 1.1
			case misses10, misses30:
				top = 1.1 / factor(t)
			}
			return levelCells([]float64{100, 100 * math.Sqrt(top), 100 * top}, rng, cv, n)
		}},
	{"absolute at_least 100", Check{Metric: "rps", Variant: "v", AtLeast: F(100)},
		func(rng *rand.Rand, t truth, cv float64, n int) []Cell {
			return []Cell{{Variant: "v", Metric: "rps", Values: lognormal(rng, 100*factor(t), cv, n)}}
		}},
	{"increases_over (3 levels)", Check{Metric: "rps", Variant: "v", IncreasesOver: map[string][]string{"k": {"1", "2", "3"}}},
		func(rng *rand.Rand, t truth, cv float64, n int) []Cell {
			// the threshold of a trend is its minimum change, last/first =
			// 1.1 (the default tolerance); beating it by x means 1.1x
			f := (1 + DefaultTolerance) * factor(t)
			return levelCells([]float64{100, 100 * math.Sqrt(f), 100 * f}, rng, cv, n)
		}},
}

// equivalence reports whether a kind claims equivalence (its power is
// measured at the band's centre rather than beyond a threshold).
func (k calKind) equivalence() bool {
	return strings.HasPrefix(k.name, "band") || strings.HasPrefix(k.name, "flat")
}

// rates runs reps evaluations and returns the fractions supported and
// contradicted. looks > 0 evaluates sequentially at n = nMin..n, stopping
// at the first decided look.
func rates(k calKind, t truth, cv float64, n, nMin, reps int, seed uint64, o Options) (sup, con float64) {
	rng := rand.New(rand.NewPCG(seed, uint64(n)*1000+uint64(cv*1000)))
	s, c := 0, 0
	for range reps {
		var v Verdict
		if nMin > 0 {
			v = sequentialRun(k, t, cv, nMin, n, rng, o)
		} else {
			v = EvaluateWith("cal", "", k.check, forkify(rng, k.cells(rng, t, cv, n), calIters, calWithinCV), o)
		}
		switch v.Status {
		case Supported:
			s++
		case Contradicted:
			c++
		}
	}
	return float64(s) / float64(reps), float64(c) / float64(reps)
}

// sequentialRun draws nMax replicates per cell and evaluates the first
// nMin, nMin+1, ... until a look decides, as a pipeline with trials:
// {min: nMin, max: nMax} would.
func sequentialRun(k calKind, t truth, cv float64, nMin, nMax int, rng *rand.Rand, o Options) Verdict {
	full := forkify(rng, k.cells(rng, t, cv, nMax), calIters, calWithinCV)
	var v Verdict
	for n := nMin; n <= nMax; n++ {
		cells := make([]Cell, len(full))
		for i, c := range full {
			c.Forks = c.Forks[:n]
			cells[i] = c
		}
		o.Sequential = TrialLooks(n, nMin, nMax)
		v = EvaluateWith("cal", "", k.check, cells, o)
		if Decided(v) {
			break
		}
	}
	return v
}

// mcSE is the Monte Carlo standard error of a proportion p over reps.
func mcSE(p float64, reps int) float64 {
	return math.Sqrt(math.Max(p*(1-p), 0.01*0.99) / float64(reps))
}

// calOptions are the evaluation options of the calibration: the production
// bootstrap with its Resamples, and no interval where no test is
// significant (it could not change the verdict there, so the verdicts are
// those of a run; only the evidence of undecided units differs).
var calOptions = Options{Seed: 7, lazyCI: true}

// calQuick is calOptions with 1000 resamples, for the `go test` grid of
// TestCalibration: its figures are error rates, which rest on the tests
// (the interval is only ever an extra condition); the table of `make
// calibration` and the coverage test use the production count.
var calQuick = Options{Seed: 7, Resamples: 1000, lazyCI: true}

// TestCalibration asserts the figures on a small grid: false
// supported ≤ 5% at the threshold and false contradicted ≤ 5% when the
// truth beats it by 10% (each within 3 Monte Carlo standard errors of the
// bound), power at 1.3x ≥ 80% at n = 10 and CV 10%, equivalence ≥ 80% at
// n = 10 and CV 5%, and power that does not fall as n grows.
func TestCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("calibration takes seconds; run without -short")
	}
	t.Parallel() // CPU only, no timing: beside the other Monte Carlo tests, on every core (issue: CI time)
	const reps = 200
	ns := []int{3, 5, 10, 20}
	for _, k := range calKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			calibrateKind(t, k, reps, ns)
		})
	}
}

// calibrateKind asserts the figures for one check kind, one parallel
// subtest per CV: each draws from its own seeded stream (rates), so the
// figures are the same however the subtests are scheduled.
func calibrateKind(t *testing.T, k calKind, reps int, ns []int) {
	for _, cv := range []float64{0.02, 0.10, 0.20} {
		t.Run(fmt.Sprintf("cv=%g", cv), func(t *testing.T) {
			t.Parallel()
			calibrateKindCV(t, k, reps, ns, cv)
		})
	}
	if k.equivalence() {
		if power, _ := rates(k, bandCentre, 0.05, 10, 0, reps, 4, calQuick); power < 0.80 {
			t.Errorf("%s: equivalence supported %.3f at n=10, CV 5%%, truth at the centre; want ≥ 0.80", k.name, power)
		}
	}
}

// calibrateKindCV asserts one kind's figures at one CV, over ns in order
// (power must not fall as n grows).
func calibrateKindCV(t *testing.T, k calKind, reps int, ns []int, cv float64) {
	{
		prevPower := 0.0
		for _, n := range ns {
			sup, _ := rates(k, atThreshold, cv, n, 0, reps, 1, calQuick)
			if sup > 0.05+3*mcSE(0.05, reps) {
				t.Errorf("%s CV %.0f%% n=%d: false supported %.3f at the threshold, want ≤ 0.05", k.name, 100*cv, n, sup)
			}
			_, con := rates(k, beats10, cv, n, 0, reps, 2, calQuick)
			if con > 0.05+3*mcSE(0.05, reps) {
				t.Errorf("%s CV %.0f%% n=%d: false contradicted %.3f beating the threshold by 10%%, want ≤ 0.05", k.name, 100*cv, n, con)
			}
			pt := beats30
			if k.equivalence() {
				pt = bandCentre
			}
			power, _ := rates(k, pt, cv, n, 0, reps, 3, calQuick)
			if power < prevPower-3*mcSE(prevPower, reps) {
				t.Errorf("%s CV %.0f%%: power fell from %.3f to %.3f at n=%d", k.name, 100*cv, prevPower, power, n)
			}
			prevPower = power
			if n == 10 && cv == 0.10 && !k.equivalence() && power < 0.80 {
				t.Errorf("%s: power %.3f at n=10, CV 10%%, 1.3x the threshold; want ≥ 0.80", k.name, power)
			}
		}
	}
}

// TestCalibrationSequential asserts the same error rates when a run looks
// after every round from 3 to 10 replicates and stops when decided.
func TestCalibrationSequential(t *testing.T) {
	if testing.Short() {
		t.Skip("calibration takes seconds; run without -short")
	}
	t.Parallel() // CPU only, no timing: beside the other Monte Carlo tests
	const reps = 150
	for _, k := range calKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel() // each kind its own seeded streams: the same figures in any order
			sup, _ := rates(k, atThreshold, 0.10, 10, 3, reps, 5, calQuick)
			_, con := rates(k, beats10, 0.10, 10, 3, reps, 6, calQuick)
			if sup > 0.05+3*mcSE(0.05, reps) || con > 0.05+3*mcSE(0.05, reps) {
				t.Errorf("%s sequential (looks at n=3..10): false supported %.3f, false contradicted %.3f; want ≤ 0.05", k.name, sup, con)
			}
		})
	}
}

// TestCalibrationTable is the long calibration behind `make calibration`.
func TestCalibrationTable(t *testing.T) {
	if !*calibrate {
		t.Skip("run with -calibration (make calibration)")
	}
	calibrationTable(os.Stdout, *calibrateReps)
}

// calibrationTable prints the markdown tables of METHODOLOGY.md.
func calibrationTable(w io.Writer, reps int) {
	ns := []int{3, 4, 5, 6, 8, 10, 12, 15, 20}
	fmt.Fprintf(w, "Monte Carlo: %d repetitions per cell (standard error ≤ %.3f; %.3f at a rate of 0.05), seeded; forks × %d iterations "+
		"(between-fork CV as in each row, within-fork CV %.0f%%), the production bootstrap (%d resamples).\n\n",
		reps, mcSE(0.5, reps), mcSE(0.05, reps), calIters, 100*calWithinCV, calOptions.resamples())
	if *calibrateKinds == "" {
		coverageTable(w, reps)
		seqTable(w, reps)
	}
	for _, k := range calKinds {
		if !strings.Contains(k.name, *calibrateKinds) {
			continue
		}
		fmt.Fprintf(w, "#### %s\n\n| CV | measure |", k.name)
		for _, n := range ns {
			fmt.Fprintf(w, " n=%d |", n)
		}
		fmt.Fprint(w, "\n|---|---|")
		for range ns {
			fmt.Fprint(w, "---|")
		}
		fmt.Fprintln(w)
		pt, ptName := beats30, "supported at 1.3× (power)"
		if k.equivalence() {
			pt, ptName = bandCentre, "supported at the centre (power)"
		}
		for _, cv := range []float64{0.02, 0.10, 0.20} {
			rows := []struct {
				name string
				t    truth
				con  bool
				seed uint64
			}{
				{"false supported at threshold", atThreshold, false, 1},
				{"false contradicted, truth 10% better", beats10, true, 2},
				{ptName, pt, false, 3},
			}
			if !k.equivalence() {
				rows = append(rows, struct {
					name string
					t    truth
					con  bool
					seed uint64
				}{"supported at 1.1× (power)", beats10, false, 8})
			}
			rows = append(rows, []struct {
				name string
				t    truth
				con  bool
				seed uint64
			}{{"contradicted, truth 10% on the wrong side", misses10, true, 9},
				{"contradicted, truth 30% on the wrong side", misses30, true, 10}}...)
			for _, r := range rows {
				fmt.Fprintf(w, "| %.0f%% | %s |", 100*cv, r.name)
				for _, n := range ns {
					sup, con := rates(k, r.t, cv, n, 0, reps, r.seed, calOptions)
					x := sup
					if r.con {
						x = con
					}
					fmt.Fprintf(w, " %.3f |", x)
				}
				fmt.Fprintln(w)
			}
		}
		if k.equivalence() {
			fmt.Fprintf(w, "| 5%% | supported at the centre (power) |")
			for _, n := range ns {
				sup, _ := rates(k, bandCentre, 0.05, n, 0, reps, 4, calOptions)
				fmt.Fprintf(w, " %.3f |", sup)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "#### Sequential: looks after every round from n=3 to n=10 (O'Brien-Fleming-type spending), CV 10%%\n\n")
	fmt.Fprintln(w, "| check | false supported at threshold | false contradicted, truth 10% better | power (1.3× or centre) | fixed n=10 power |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, k := range calKinds {
		pt := beats30
		if k.equivalence() {
			pt = bandCentre
		}
		sup, _ := rates(k, atThreshold, 0.10, 10, 3, reps, 5, calOptions)
		_, con := rates(k, beats10, 0.10, 10, 3, reps, 6, calOptions)
		pow, _ := rates(k, pt, 0.10, 10, 3, reps, 7, calOptions)
		fixed, _ := rates(k, pt, 0.10, 10, 0, reps, 7, calOptions)
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %.3f | %.3f |\n", k.name, sup, con, pow, fixed)
	}
}

// BenchmarkEvaluate is the cost of one claim evaluation at n=10 with the
// production resamples, the unit the calibration's run time is made of.
func BenchmarkEvaluate(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	cells := calKinds[0].cells(rng, beats30, 0.1, 10)
	for b.Loop() {
		EvaluateWith("b", "", calKinds[0].check, cells, Options{Seed: 1})
	}
}

// BenchmarkEvaluateCalibration is the same with the calibration's resamples.
func BenchmarkEvaluateCalibration(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	cells := calKinds[0].cells(rng, beats30, 0.1, 10)
	for b.Loop() {
		EvaluateWith("b", "", calKinds[0].check, cells, calOptions)
	}
}
