package stats

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"testing"
)

// Coverage of the claim interval, and the verdict rule outside the scale
// model the main tables simulate. Both run the production path: cells with
// Forks (fork × iteration data), EvaluateWith, the production Resamples.

// covDesign is one forks × iterations layout with the two levels' spreads
// (standard deviations on the log scale).
type covDesign struct {
	forks, iters    int
	between, within float64
}

// covDesigns span the range, 3×2 to 10×10, with the between-fork
// and the within-fork level each dominating and both equal.
func covDesigns() []covDesign {
	var out []covDesign
	for _, fi := range [][2]int{{3, 2}, {4, 2}, {5, 3}, {6, 5}, {8, 5}, {10, 3}, {10, 10}} {
		for _, s := range [][2]float64{{0.05, 0.02}, {0.02, 0.05}, {0.05, 0.05}} {
			out = append(out, covDesign{fi[0], fi[1], s[0], s[1]})
		}
	}
	return out
}

// twoLevel draws forks × iters iterations around median: fork i, iteration
// j is median·exp(between·U_i + within·E_ij).
func twoLevel(rng *rand.Rand, median float64, d covDesign) [][]float64 {
	out := make([][]float64, d.forks)
	for i := range out {
		u := d.between * rng.NormFloat64()
		for range d.iters {
			out[i] = append(out[i], median*math.Exp(u+d.within*rng.NormFloat64()))
		}
	}
	return out
}

// coverage is the fraction of reps whose 90% interval of A/B (a compare
// claim at_least 1, both variants at median 100, so the true ratio of
// medians is 1) contains 1, and the fractions missing below and above.
func coverage(d covDesign, reps int, seed uint64) (cov, below, above float64) {
	rng := rand.New(rand.NewPCG(seed, uint64(d.forks*100+d.iters)))
	check := Check{Metric: "rps", Compare: []string{"a", "b"}, AtLeast: F(1)}
	var in, lo, hi int
	for rep := range reps {
		cells := []Cell{{Variant: "a", Metric: "rps", Forks: twoLevel(rng, 100, d)},
			{Variant: "b", Metric: "rps", Forks: twoLevel(rng, 100, d)}}
		v := EvaluateWith("cov", "", check, cells, Options{Seed: int64(rep)})
		switch {
		case v.Low > 1:
			lo++
		case v.High < 1:
			hi++
		default:
			in++
		}
	}
	n := float64(reps)
	return float64(in) / n, float64(lo) / n, float64(hi) / n
}

// TestCoverage asserts the target on the designs: the nominal 90%
// interval covers between 0.87 and 0.93, each within 3 Monte Carlo
// standard errors.
func TestCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("coverage takes a minute; run without -short")
	}
	t.Parallel() // CPU only, no timing: beside the other Monte Carlo tests, on every core
	const reps = 300
	for _, d := range covDesigns() {
		t.Run(fmt.Sprintf("%dx%d_b%.2f_w%.2f", d.forks, d.iters, d.between, d.within), func(t *testing.T) {
			t.Parallel() // coverage seeds its own stream per design: the same figures in any order
			cov, below, above := coverage(d, reps, 11)
			se := mcSE(0.9, reps)
			if cov < 0.87-3*se || cov > 0.93+3*se {
				t.Errorf("%d×%d σ_b %.2f σ_w %.2f: coverage %.3f (miss %.3f below, %.3f above), want 0.87-0.93",
					d.forks, d.iters, d.between, d.within, cov, below, above)
			}
		})
	}
}

// mixtureMedian is the median of a lognormal mixture: a fraction p of
// forks scaled by slow, the rest not, each median 1 and log-sd sigma.
// Bisection on the mixture's CDF.
func mixtureMedian(p, slow, sigma float64) float64 {
	cdf := func(x float64) float64 {
		phi := func(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
		return (1-p)*phi(math.Log(x)/sigma) + p*phi(math.Log(x/slow)/sigma)
	}
	lo, hi := slow/10, 10.0
	for range 200 {
		mid := math.Sqrt(lo * hi)
		if cdf(mid) < 0.5 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Sqrt(lo * hi)
}

// shape is a departure from the scale model: A and B with different
// spreads, or A's forks in two modes.
type shape struct {
	name string
	// forks draws A's and B's fork levels (one value per fork) with the
	// true median ratio A/B at ratio.
	forks func(rng *rand.Rand, ratio float64, n int) (a, b []float64)
}

var shapes = []shape{
	{"unequal spread: A CV 2%, B CV 20%", func(rng *rand.Rand, ratio float64, n int) ([]float64, []float64) {
		return lognormal(rng, 100*ratio, 0.02, n), lognormal(rng, 100, 0.20, n)
	}},
	{"bimodal A: 30% of forks 1.35× slower, CV 5%", func(rng *rand.Rand, ratio float64, n int) ([]float64, []float64) {
		sigma := math.Sqrt(math.Log(1 + 0.05*0.05))
		m := 100 * ratio / mixtureMedian(0.3, 1/1.35, sigma) // the mixture's median lands on 100·ratio
		a := lognormal(rng, m, 0.05, n)
		for i := range a {
			if rng.Float64() < 0.3 {
				a[i] /= 1.35
			}
		}
		return a, lognormal(rng, 100, 0.05, n)
	}},
}

// shapeRates runs reps evaluations of "A/B at_least 1.5" with the truth at
// 1.5·f (f = 1: at the threshold) and returns the fractions supported,
// contradicted and covered (the interval holds the true ratio).
func shapeRates(sh shape, f float64, n, reps int, seed uint64) (sup, con, cov float64) {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	check := Check{Metric: "rps", Compare: []string{"a", "b"}, AtLeast: F(1.5)}
	var s, c, in int
	for rep := range reps {
		a, b := sh.forks(rng, 1.5*f, n)
		cells := forkify(rng, twoCells(a, b), calIters, calWithinCV)
		v := EvaluateWith("shape", "", check, cells, Options{Seed: int64(rep)})
		switch v.Status {
		case Supported:
			s++
		case Contradicted:
			c++
		}
		if v.Low <= 1.5*f && 1.5*f <= v.High {
			in++
		}
	}
	r := float64(reps)
	return float64(s) / r, float64(c) / r, float64(in) / r
}

// TestCalibrationShapes asserts false support ≤ 5% at the threshold outside
// the scale model (within 3 Monte Carlo standard errors).
func TestCalibrationShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("calibration takes seconds; run without -short")
	}
	t.Parallel() // CPU only, no timing: beside the other Monte Carlo tests
	const reps = 200
	for _, sh := range shapes {
		for _, n := range []int{5, 10} {
			t.Run(fmt.Sprintf("%s/n=%d", sh.name, n), func(t *testing.T) {
				t.Parallel() // shapeRates seeds its own stream: the same figures in any order
				if sup, _, _ := shapeRates(sh, 1, n, reps, 21); sup > 0.05+3*mcSE(0.05, reps) {
					t.Errorf("%s, %d forks: false supported %.3f at the threshold, want ≤ 0.05", sh.name, n, sup)
				}
			})
		}
	}
}

// TestMixtureMedian checks the bisection by hand: with no slow forks the
// median is 1; with half the forks scaled by s and a tiny spread it is
// with p = 0.3 and the slow mode far below, all slow forks lie under the
// median, which is where 0.3 + 0.7·Φ(ln x/σ) = 0.5: ln x = σ·Φ⁻¹(2/7) =
// −0.5659σ.
func TestMixtureMedian(t *testing.T) {
	if m := mixtureMedian(0, 0.5, 0.1); math.Abs(m-1) > 1e-9 {
		t.Errorf("no slow forks: median %v, want 1", m)
	}
	if m := mixtureMedian(0.3, 0.01, 0.1); math.Abs(math.Log(m)+0.5659*0.1) > 1e-4 {
		t.Errorf("p 0.3, modes far apart: ln median %v, want %v", math.Log(m), -0.5659*0.1)
	}
}

// coverageTable prints the coverage and shape tables of METHODOLOGY.md.
// The coverage rows run 10× the repetitions of the rest: a coverage of
// 0.9 needs a standard error near 0.01 to be told from 0.87 or 0.93, and
// one repetition is a single evaluation.
func coverageTable(w io.Writer, reps int) {
	fmt.Fprintf(w, "#### Coverage of the 90%% interval of A/B (true ratio 1), forks × iterations, σ on the log scale (%d repetitions, standard error %.3f)\n\n",
		10*reps, mcSE(0.9, 10*reps))
	fmt.Fprintln(w, "| forks × iterations | σ_between | σ_within | coverage | miss below | miss above |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, d := range covDesigns() {
		cov, below, above := coverage(d, 10*reps, 11)
		fmt.Fprintf(w, "| %d × %d | %.2f | %.2f | %.3f | %.3f | %.3f |\n", d.forks, d.iters, d.between, d.within, cov, below, above)
	}
	fmt.Fprintf(w, "\n#### Outside the scale model: A/B at_least 1.5, forks × %d iterations\n\n", calIters)
	fmt.Fprintln(w, "| shape | forks | false supported at threshold | coverage at threshold | supported at 1.3× | contradicted at threshold/1.3 |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, sh := range shapes {
		for _, n := range []int{5, 10, 20} {
			sup, _, cov := shapeRates(sh, 1, n, reps, 21)
			pow, _, _ := shapeRates(sh, 1.3, n, reps, 22)
			_, con, _ := shapeRates(sh, 1/1.3, n, reps, 23)
			fmt.Fprintf(w, "| %s | %d | %.3f | %.3f | %.3f | %.3f |\n", sh.name, n, sup, cov, pow, con)
		}
	}
	fmt.Fprintln(w)
}
