package dimension

import (
	"math"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestEstimateBalanced checks Kalibera & Jones' estimators by hand.
// Forks {10,12} {14,16} {20,22}: fork means 11, 15, 21, grand mean 47/3 = 15.667.
// Within: every value is 1 from its fork mean: SS_w = 6, MSW = 6/(6-3) = 2.
// S²_2 = ((11-15.667)² + (15-15.667)² + (21-15.667)²)/2 = (21.778+0.444+28.444)/2 = 25.333.
// σ²_b = S²_2 - S²_1/r = 25.333 - 2/2 = 24.333.
func TestEstimateBalanced(t *testing.T) {
	c, err := Estimate([][]float64{{10, 12}, {14, 16}, {20, 22}})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Balanced || c.Forks != 3 || c.Iterations != 2 || c.N != 6 {
		t.Errorf("shape: %+v", c)
	}
	if !near(c.Within, 2, 1e-12) {
		t.Errorf("within = %v, want 2", c.Within)
	}
	if !near(c.Between, 73.0/3, 1e-9) {
		t.Errorf("between = %v, want 24.333", c.Between)
	}
	if !near(c.Median, 15, 1e-12) { // median of 10,12,14,16,20,22 = (14+16)/2
		t.Errorf("median = %v, want 15", c.Median)
	}
}

// TestEstimateUnbalanced: forks {1,3} and {5,6,7}. Means 2 and 6, grand mean
// 22/5 = 4.4. SS_w = 2 + 2 = 4, MSW = 4/(5-2) = 1.333. SS_b = 2·(2-4.4)² +
// 3·(6-4.4)² = 11.52 + 7.68 = 19.2, MSB = 19.2. n₀ = (5 - (4+9)/5)/1 = 2.4.
// σ²_b = (19.2 - 1.333)/2.4 = 7.444.
func TestEstimateUnbalanced(t *testing.T) {
	c, err := Estimate([][]float64{{1, 3}, {5, 6, 7}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Balanced || !near(c.Iterations, 2.4, 1e-12) {
		t.Errorf("shape: %+v", c)
	}
	if !near(c.Within, 4.0/3, 1e-12) || !near(c.Between, (19.2-4.0/3)/2.4, 1e-12) {
		t.Errorf("within %v between %v, want 1.333 and 7.444", c.Within, c.Between)
	}
}

// TestEstimateNoBetween: fork means all equal, so MSB = 0 < MSW and the raw
// between-fork estimate is negative; it is clamped at 0.
func TestEstimateNoBetween(t *testing.T) {
	c, err := Estimate([][]float64{{9, 11}, {8, 12}, {10, 10}})
	if err != nil {
		t.Fatal(err)
	}
	// MSW = (1+1+4+4+0+0)/3 = 3.333; MSB = 0; raw = -3.333/2.
	if c.Between != 0 || !near(c.BetweenRaw, -10.0/6, 1e-12) {
		t.Errorf("between %v raw %v, want 0 and -1.667", c.Between, c.BetweenRaw)
	}
}

func TestEstimateErrors(t *testing.T) {
	tests := []struct {
		why   string
		forks [][]float64
		want  string
	}{
		{"one fork cannot show variance between forks", [][]float64{{1, 2, 3}}, "at least 2 forks"},
		{"empty forks do not count", [][]float64{{1, 2}, {}}, "at least 2 forks"},
		{"NaN is a failed iteration", [][]float64{{1, math.NaN()}, {2, 3}}, "non-finite"},
	}
	for _, tt := range tests {
		if _, err := Estimate(tt.forks); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.why, err, tt.want)
		}
	}
}

// TestEstimateSingleIteration: one value per fork (the old trials.csv):
// everything is between forks, sample variance of {8,10,12} = 4.
func TestEstimateSingleIteration(t *testing.T) {
	c, err := Estimate([][]float64{{8}, {10}, {12}})
	if err != nil {
		t.Fatal(err)
	}
	if !c.SingleIteration || c.Between != 4 || c.Within != 0 {
		t.Errorf("%+v, want single iteration, between 4, within 0", c)
	}
}

// TestChooseByHand: σ²_b = 1, σ²_w = 16, median 100, c_f = 9 s, c_i = 1 s,
// target ±5% = ±5. K&J's r* = sqrt(9·16/(1·1)) = 12. Half-width at n forks,
// r iterations: t(0.975, n-1)·sqrt((1 + 16/r)/n) <= 5, i.e. 1 + 16/r <= 25·n/t².
//
//	n=3, t=4.303: 1+16/r <= 4.051 -> r >= 5.25 -> r=6, wall 3·(9+6)  = 45 s
//	n=4, t=3.182: 1+16/r <= 9.876 -> r >= 1.80 -> r=2, wall 4·(9+2)  = 44 s
//	n=5, t=2.776: 1+16/r <= 16.22 -> r >= 1.05 -> r=2, wall 5·(9+2)  = 55 s
//	n=6, t=2.571: 1+16/r <= 22.69 -> r=1,             wall 6·(9+1)  = 60 s
//
// and more forks only cost more. The least wall time is 4 forks x 2
// iterations; the t quantile makes 3 forks dearer than r* suggests.
func TestChooseByHand(t *testing.T) {
	cell := Components{Forks: 3, Iterations: 2, Median: 100, Within: 16, Between: 1}
	p, err := Choose([]Components{cell}, Costs{ForkS: 9, IterationS: 1}, Target{MinIterations: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Forks != 4 || p.Iterations != 2 || !near(p.WallS, 44, 1e-9) || !p.Reached {
		t.Fatalf("plan %+v, want 4 forks x 2 iterations in 44 s", p)
	}
	// predicted half-width: 3.182·sqrt((1+8)/4)/100 = 3.182·1.5/100 = 0.04773
	if !near(p.HalfWidth, 0.047727, 1e-4) {
		t.Errorf("half-width %v, want 0.0477", p.HalfWidth)
	}
	if !near(p.OptimalIterations, 12, 1e-12) {
		t.Errorf("r* = %v, want 12", p.OptimalIterations)
	}
}

// TestChooseNearOptimal: with a tight target many forks are needed, t is
// close to the normal quantile, and the chosen r lands near K&J's r* = 12.
func TestChooseNearOptimal(t *testing.T) {
	cell := Components{Forks: 3, Iterations: 2, Median: 100, Within: 16, Between: 1}
	p, err := Choose([]Components{cell}, Costs{ForkS: 9, IterationS: 1}, Target{HalfWidth: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Reached || p.Iterations < 9 || p.Iterations > 15 {
		t.Errorf("plan %+v, want iterations near r* = 12", p)
	}
}

func TestChooseWorstCell(t *testing.T) {
	quiet := Components{Median: 100, Within: 1, Between: 0.01}
	noisy := Components{Median: 100, Within: 16, Between: 1}
	both, err := Choose([]Components{quiet, noisy}, Costs{ForkS: 9, IterationS: 1}, Target{})
	if err != nil {
		t.Fatal(err)
	}
	alone, _ := Choose([]Components{noisy}, Costs{ForkS: 9, IterationS: 1}, Target{})
	if both.Forks != alone.Forks || both.Iterations != alone.Iterations {
		t.Errorf("the noisy cell must decide: both %+v, noisy alone %+v", both, alone)
	}
}

func TestChooseUnreachable(t *testing.T) {
	cell := Components{Median: 1, Within: 100, Between: 100}
	p, err := Choose([]Components{cell}, Costs{ForkS: 1, IterationS: 1}, Target{MaxForks: 5, MinIterations: 1, MaxIterations: 3})
	if err != nil {
		t.Fatal(err)
	}
	if p.Reached || p.Forks != 5 || p.Iterations != 3 || !strings.Contains(p.Note, "out of reach") {
		t.Errorf("plan %+v, want the most precise grid corner, not reached, with a note", p)
	}
}

func TestChooseSingleIteration(t *testing.T) {
	cell := Components{Median: 100, Between: 4, SingleIteration: true}
	p, err := Choose([]Components{cell}, Costs{ForkS: 5, IterationS: 1}, Target{MinIterations: 1})
	if err != nil {
		t.Fatal(err)
	}
	// t(0.975,2)·2/sqrt(3) = 4.303·1.1547 = 4.97 <= 5: 3 forks suffice.
	if p.Iterations != 1 || p.Forks != 3 || !strings.Contains(p.Note, "one iteration per fork") {
		t.Errorf("plan %+v, want 3 forks x 1 iteration with a note", p)
	}
}

func TestChooseErrors(t *testing.T) {
	ok := Components{Median: 100, Within: 1, Between: 1}
	tests := []struct {
		why   string
		cells []Components
		k     Costs
		want  string
	}{
		{"no cells", nil, Costs{ForkS: 1, IterationS: 1}, "no cells"},
		{"zero cost", []Components{ok}, Costs{ForkS: 0, IterationS: 1}, "costs must be positive"},
		{"non-positive median", []Components{{Median: 0}}, Costs{ForkS: 1, IterationS: 1}, "positive metric"},
	}
	for _, tt := range tests {
		if _, err := Choose(tt.cells, tt.k, Target{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.why, err, tt.want)
		}
	}
}

// TestMinIterationsForDead checks the dead-time floor against hand
// computations: r ≥ (1-D)·F / (w - (1-D)·I).
func TestMinIterationsForDead(t *testing.T) {
	for _, c := range []struct {
		why           string
		fork, iter, w float64
		dead          float64
		want          int
		ok            bool
	}{
		{"io-bound-like: 0.65·40/(0.9-0.65) = 104 exactly", 40, 1, 0.9, 0.35, 104, true},
		{"a cheap fork needs one iteration", 0.1, 1, 1, 0.35, 1, true},
		{"no cool-down: 0.65·13/0.35 = 24.14 -> 25", 13, 1, 1, 0.35, 25, true},
		{"cool-down longer than the window allows: 0.5 < 0.65", 10, 1, 0.5, 0.35, 0, false},
		{"no window known", 10, 1, 0, 0.35, 0, false},
		{"a dead share of 1 is no bound", 10, 1, 1, 1, 0, false},
	} {
		r, ok := MinIterationsForDead(c.fork, c.iter, c.w, c.dead)
		if r != c.want || ok != c.ok {
			t.Errorf("%s: got %d %v, want %d %v", c.why, r, ok, c.want, c.ok)
			continue
		}
		if !ok {
			continue
		}
		k := Costs{ForkS: c.fork, IterationS: c.iter, WindowS: c.w}
		if d := k.DeadShare(r); d > c.dead+1e-12 {
			t.Errorf("%s: dead share at %d is %v > %v", c.why, r, d, c.dead)
		}
		if r > 1 {
			if d := k.DeadShare(r - 1); d <= c.dead {
				t.Errorf("%s: %d iterations already reach %v: not the least", c.why, r-1, d)
			}
		}
	}
}

// TestChooseFloors: the default target classifies each fork on at least 10
// points and holds dead time to 35%, whatever fewer iterations would buy.
func TestChooseFloors(t *testing.T) {
	cell := Components{Forks: 3, Iterations: 2, Median: 100, Within: 16, Between: 1}
	// Without a window the dead-time bound cannot bind: the floor is 10
	// (the by-hand plan above is 4 x 2 without floors).
	p, err := Choose([]Components{cell}, Costs{ForkS: 9, IterationS: 1}, Target{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Iterations < DefaultMinIterations || p.LeastIterations != DefaultMinIterations || !p.Reached {
		t.Errorf("plan %+v, want at least %d iterations", p, DefaultMinIterations)
	}
	// A 40 s fork of 0.9 s windows and 0.1 s cool-downs needs 104.
	p, err = Choose([]Components{cell}, Costs{ForkS: 40, IterationS: 1, WindowS: 0.9}, Target{})
	if err != nil {
		t.Fatal(err)
	}
	if p.LeastIterations != 104 || p.Iterations < 104 || p.DeadShare > DefaultMaxDead || !strings.Contains(p.Note, "dead time") {
		t.Errorf("plan %+v, want at least 104 iterations, dead share <= 0.35 and a note", p)
	}
	// A cool-down too long for any plan says so.
	p, err = Choose([]Components{cell}, Costs{ForkS: 40, IterationS: 1, WindowS: 0.3}, Target{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Note, "shorten it") {
		t.Errorf("plan %+v, want a note that the cool-down is too long", p)
	}
}
