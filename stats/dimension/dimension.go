// Package dimension chooses how many forks (fresh JVMs) and how many
// measured iterations per fork an experiment needs, from a pilot, following
// Kalibera & Jones (2013), "Rigorous benchmarking in reasonable time"
// (ISMM): measure the variance at each level of the experiment and the cost
// of a repetition at each level, then pick the repetition counts that reach
// the wanted precision in the least time.
//
// Data flow: ReadPilot reads a pilot's run directory through
// store/record (run.json, trials.csv, warmup.csv) into its values per
// fork (steady iterations only; see stats/steady) and the measured cost
// of a fork and of an iteration -> Estimate (variance components) ->
// Choose, with a Target (CI half-width relative to the median) -> Plan
// (forks x iterations, predicted half-width and wall time); Pilot.Write
// prints it for `threadlab dimension`, which only parses flags and runs the
// pilot. Estimate and Choose take and return plain values.
//
// The model is the two-level random-effects model of Kalibera & Jones:
// Y_jk = μ + b_j + e_jk, fork effect b_j with variance σ²_b ("between
// forks", their T²_2) and iteration noise e_jk with variance σ²_w ("within
// forks", T²_1). The mean of n forks of r iterations has variance
//
//	Var(Ȳ) = σ²_b/n + σ²_w/(n·r)
//
// and takes n·(c_f + r·c_i) seconds, c_f the cost of a fork (start, warm-up,
// shut-down) and c_i of an iteration (window plus cool-down). Minimising
// the time for a fixed Var(Ȳ) gives their optimal iterations per fork
//
//	r* = sqrt( (c_f · σ²_w) / (c_i · σ²_b) )
//
// (Kalibera & Jones 2013, section 4, eq. for r_i with the corrected T²
// estimator, as in libkalibera's optimalreps). Choose reports r* and then
// searches the integer grid exactly, because the CI half-width uses
// Student's t with n-1 degrees of freedom, which makes few forks dearer
// than the continuous formula assumes.
package dimension

import (
	"errors"
	"fmt"
	tstats "github.com/threadlab/threadlab/stats"
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// Components are the variance components of a pilot.
type Components struct {
	Forks int
	// Iterations per fork: r when every fork has the same count, else the
	// ANOVA effective count n₀ (see Estimate).
	Iterations float64
	Balanced   bool
	N          int // values
	Mean       float64
	Median     float64
	// Within is σ²_w, the variance between iterations of one fork (the
	// within-fork mean square, Kalibera & Jones' S²_1 = T²_1).
	Within float64
	// Between is σ²_b, the variance of the fork effect, clamped at 0
	// (Kalibera & Jones' T²_2 = S²_2 - S²_1/r).
	Between float64
	// BetweenRaw is the estimate before clamping; negative means the fork
	// means vary no more than their own iterations explain.
	BetweenRaw float64
	// SingleIteration: every fork has one value, so the two levels cannot
	// be told apart; Between then holds the whole variance and Within is 0.
	SingleIteration bool
}

// Estimate computes the variance components from each fork's values by the
// one-way random-effects ANOVA, which for equal iterations per fork is
// exactly Kalibera & Jones' estimator:
//
//	MSW = Σ_j Σ_k (y_jk - ȳ_j)² / (N - a)         = S²_1
//	MSB = Σ_j n_j (ȳ_j - ȳ)² / (a - 1)             = r·S²_2 when balanced
//	n₀  = (N - Σ_j n_j² / N) / (a - 1)             = r when balanced
//	σ²_w = MSW,  σ²_b = (MSB - MSW) / n₀           = S²_2 - S²_1/r
//
// with a forks and N values. It needs at least two forks with a value.
func Estimate(forks [][]float64) (Components, error) {
	var c Components
	var all []float64
	var sizes []int
	for _, f := range forks {
		if len(f) == 0 {
			continue
		}
		for _, v := range f {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return c, fmt.Errorf("fork %d has a non-finite value %v: drop failed iterations before estimating", len(sizes)+1, v)
			}
		}
		all = append(all, f...)
		sizes = append(sizes, len(f))
	}
	a, n := len(sizes), len(all)
	if a < 2 {
		return c, fmt.Errorf("need values from at least 2 forks to separate the variance between forks, got %d", a)
	}
	c.Forks, c.N = a, n
	c.Mean = mean(all)
	c.Median = tstats.Median(all)
	c.Balanced = slices.Min(sizes) == slices.Max(sizes)
	if n == a {
		c.SingleIteration, c.Iterations = true, 1
		c.Between = variance(all)
		c.BetweenRaw = c.Between
		return c, nil
	}
	var ssw, ssb, sumSq float64
	for _, f := range forks {
		if len(f) == 0 {
			continue
		}
		m := mean(f)
		for _, v := range f {
			ssw += (v - m) * (v - m)
		}
		ssb += float64(len(f)) * (m - c.Mean) * (m - c.Mean)
		sumSq += float64(len(f) * len(f))
	}
	msw := ssw / float64(n-a)
	msb := ssb / float64(a-1)
	n0 := (float64(n) - sumSq/float64(n)) / float64(a-1)
	c.Iterations = n0
	c.Within = msw
	c.BetweenRaw = (msb - msw) / n0
	c.Between = max(c.BetweenRaw, 0)
	return c, nil
}

// Costs are the measured seconds of one fork without its iterations (start,
// warm-up, shut-down) and of one iteration (measured window and the
// cool-down after it).
type Costs struct {
	ForkS      float64
	IterationS float64
	// WindowS is the measured part of an iteration (the rest is its
	// cool-down); 0 when unknown, and then the plan is not held to a dead
	// time share.
	WindowS float64
}

// DeadShare is the share of a fork's wall time that measures nothing at r
// iterations: its start, warm-up and shut-down and each iteration's
// cool-down; 0 when the window is unknown.
func (k Costs) DeadShare(r int) float64 {
	if k.WindowS <= 0 || r < 1 {
		return 0
	}
	return 1 - float64(r)*k.WindowS/(k.ForkS+float64(r)*k.IterationS)
}

// MinIterationsForDead is the least number of iterations per fork whose
// dead share is at most maxDead: a fork that costs forkS seconds besides
// its iterations, each of iterationS seconds of which windowS measure,
// needs r·windowS ≥ (1-maxDead)·(forkS + r·iterationS), so
//
//	r ≥ (1-maxDead)·forkS / (windowS - (1-maxDead)·iterationS).
//
// ok is false when no r reaches it: the cool-down after each window alone
// is more than maxDead of an iteration.
func MinIterationsForDead(forkS, iterationS, windowS, maxDead float64) (r int, ok bool) {
	keep := 1 - maxDead
	room := windowS - keep*iterationS
	if windowS <= 0 || maxDead <= 0 || maxDead >= 1 || room <= 0 {
		return 0, false
	}
	r = max(1, int(math.Ceil(keep*max(forkS, 0)/room-1e-9)))
	return r, true
}

// Target is the precision wanted and the grid searched. The zero value
// means the defaults.
type Target struct {
	HalfWidth  float64 // CI half-width as a fraction of the median; default 0.05
	Confidence float64 // default 0.95
	MinForks   int     // default 3: fewer forks cannot support a claim (issue 10)
	MaxForks   int     // default 50
	// MinIterations per fork, default 10: the measured points stats/steady
	// needs to classify a fork (flat, warm-up, slowdown, no steady state;
	// Barrett et al. 2017); 1 turns it off.
	MinIterations int
	MaxIterations int // default 200
	// MaxDead is the largest share of wall time spent not measuring
	// (starts, warm-ups, cool-downs), default 0.35: a JVM start and its
	// warm-up are amortized over real measurement. It binds only when
	// Costs.WindowS is known; a negative value turns it off.
	MaxDead float64
}

// DefaultMaxDead is the dead-time share a default profile is held to.
const DefaultMaxDead = 0.35

// DefaultMinIterations is the measured points per fork a default profile
// runs, so that each fork can be classified.
const DefaultMinIterations = 10

func (t Target) withDefaults() Target {
	if t.HalfWidth <= 0 {
		t.HalfWidth = 0.05
	}
	if t.Confidence <= 0 || t.Confidence >= 1 {
		t.Confidence = 0.95
	}
	if t.MinForks < 2 {
		t.MinForks = tstats.MinReplicates
	}
	if t.MaxForks < t.MinForks {
		t.MaxForks = max(50, t.MinForks)
	}
	if t.MinIterations < 1 {
		t.MinIterations = DefaultMinIterations
	}
	if t.MaxIterations < 1 {
		t.MaxIterations = 200
	}
	if t.MaxDead == 0 {
		t.MaxDead = DefaultMaxDead
	}
	return t
}

// Plan is a forks x iterations choice.
type Plan struct {
	Forks, Iterations int
	// HalfWidth is the predicted CI half-width of the mean, as a fraction
	// of the median: t(1-α/2, n-1) · sqrt(σ²_b/n + σ²_w/(n·r)) / median.
	HalfWidth float64
	WallS     float64 // predicted: n · (c_f + r · c_i)
	// OptimalIterations is Kalibera & Jones' continuous r* of the binding
	// cell (the widest at the plan); +Inf when it showed no variance
	// between forks (then one long fork would do, and only MinForks and
	// MaxIterations bound the plan) or had one iteration per fork.
	OptimalIterations float64
	Reached           bool   // the target half-width is reachable within the grid
	Note              string // why the plan is what it is, when it is not plain
	// DeadShare is the predicted share of the wall time that measures
	// nothing (Costs.DeadShare); 0 when the window is unknown.
	DeadShare float64
	// LeastIterations is the floor the grid started from: the target's
	// MinIterations, or more when the dead-time bound needs more.
	LeastIterations int
}

// Choose returns the forks x iterations that reach the target half-width in
// the least predicted wall time, for every cell at once (each cell's
// components in cells; the plan must satisfy the worst of them). When the
// target cannot be reached within the grid, the plan is the most precise
// one at MaxForks, with Reached false.
func Choose(cells []Components, k Costs, t Target) (Plan, error) {
	t = t.withDefaults()
	if len(cells) == 0 {
		return Plan{}, errors.New("no cells to dimension")
	}
	if k.ForkS <= 0 || k.IterationS <= 0 {
		return Plan{}, fmt.Errorf("costs must be positive (fork %.3g s, iteration %.3g s): the pilot recorded no start-up or iteration time", k.ForkS, k.IterationS)
	}
	single := false
	for i, c := range cells {
		if c.Median <= 0 {
			return Plan{}, fmt.Errorf("cell %d has median %v: a half-width relative to the median needs a positive metric", i+1, c.Median)
		}
		single = single || c.SingleIteration
	}
	// The floor: enough points to classify each fork, and enough
	// measurement to amortize its start and warm-up.
	least, why := t.MinIterations, ""
	if t.MaxDead > 0 && k.WindowS > 0 {
		r, ok := MinIterationsForDead(k.ForkS, k.IterationS, k.WindowS, t.MaxDead)
		switch {
		case !ok:
			why = fmt.Sprintf("no number of iterations keeps dead time under %.0f%%: the cool-down after each %.2f s window is too long; shorten it", 100*t.MaxDead, k.WindowS)
		case r > least:
			least = r
			why = fmt.Sprintf("%d iterations per fork keep dead time (start, warm-up, cool-downs) at or under %.0f%%", r, 100*t.MaxDead)
		}
	}
	maxIter := max(t.MaxIterations, least)
	if single {
		maxIter = least // the pilot cannot say what a second iteration buys
	}
	best := Plan{WallS: math.Inf(1)}
	closest := Plan{HalfWidth: math.Inf(1)}
	for r := least; r <= maxIter; r++ {
		for n := t.MinForks; n <= t.MaxForks; n++ {
			hw := worst(cells, n, r, t.Confidence)
			wall := float64(n) * (k.ForkS + float64(r)*k.IterationS)
			if hw <= t.HalfWidth && wall < best.WallS {
				best = Plan{Forks: n, Iterations: r, HalfWidth: hw, WallS: wall, Reached: true}
			}
			if hw < closest.HalfWidth || (hw == closest.HalfWidth && wall < closest.WallS) {
				closest = Plan{Forks: n, Iterations: r, HalfWidth: hw, WallS: wall}
			}
		}
	}
	p := best
	if !best.Reached {
		p = closest
		p.Note = fmt.Sprintf("±%.1f%% is out of reach within %d forks x %d iterations; this is the most precise plan in that grid",
			100*t.HalfWidth, t.MaxForks, maxIter)
	}
	p.OptimalIterations = optimal(binding(cells, p.Forks, p.Iterations, t.Confidence), k)
	p.LeastIterations = least
	p.DeadShare = k.DeadShare(p.Iterations)
	p.Note = join(p.Note, why)
	if single {
		p.Note = join(p.Note, fmt.Sprintf("one iteration per fork in the pilot: variance within a fork cannot be separated, so the plan keeps the floor of %d iterations; run a pilot with iterations >= 2 to dimension them", least))
	}
	return p, nil
}

// worst is the largest predicted relative half-width over the cells.
func worst(cells []Components, n, r int, conf float64) float64 {
	q := stats.InvCDF(stats.TDist{V: float64(n - 1)})(1 - (1-conf)/2)
	var w float64
	for _, c := range cells {
		se := math.Sqrt(c.Between/float64(n) + c.Within/float64(n*r))
		w = max(w, q*se/c.Median)
	}
	return w
}

// binding is the cell with the widest predicted half-width at n x r: the
// one the plan is sized for.
func binding(cells []Components, n, r int, conf float64) Components {
	var b Components
	w := -1.0
	for _, c := range cells {
		if x := worst([]Components{c}, n, r, conf); x > w {
			b, w = c, x
		}
	}
	return b
}

// optimal is Kalibera & Jones' r* for cell c; +Inf when it shows no
// variance between forks, or cannot tell (one iteration per fork).
func optimal(c Components, k Costs) float64 {
	if c.SingleIteration || c.Between <= 0 {
		return math.Inf(1)
	}
	return math.Sqrt(k.ForkS * c.Within / (k.IterationS * c.Between))
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// variance is the sample variance (n-1).
func variance(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m := mean(v)
	var ss float64
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return ss / float64(len(v)-1)
}
