package steady

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// gauss returns n normal values around mean with standard deviation sd,
// from a fixed seed so every run sees the same series.
func gauss(r *rand.Rand, n int, mean, sd float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = mean + sd*r.NormFloat64()
	}
	return x
}

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 42)) }

func concat(parts ...[]float64) []float64 { return slices.Concat(parts...) }

// warmupCurve decays from start toward level over k values (what a JIT does
// to an iteration time), with multiplicative noise.
func warmupCurve(r *rand.Rand, k int, start, level, sd float64) []float64 {
	x := make([]float64, k)
	for i := range x {
		x[i] = level + (start-level)*math.Exp(-float64(i)/2) + sd*r.NormFloat64()
	}
	return x
}

func TestClassify(t *testing.T) {
	r := seeded(1)
	tests := []struct {
		name   string
		why    string
		x      []float64
		o      Options
		class  Class
		from   int // expected SteadyFrom; -2 means "between fromLo and fromHi"
		lo, hi int
	}{
		{name: "flat", why: "normal noise around one level has no changepoint",
			x: gauss(r, 40, 100, 3), class: Flat, from: 0},
		{name: "warm-up then flat", why: "a decaying start then a level: steady from the level",
			x: concat(warmupCurve(r, 8, 400, 110, 3), gauss(r, 32, 100, 3)), class: Warmup, from: -2, lo: 5, hi: 9},
		{name: "slowdown", why: "times step up to a worse level and stay there",
			x: concat(gauss(r, 20, 100, 3), gauss(r, 20, 150, 4)), class: Slowdown, from: 20},
		{name: "step down in a time", why: "a time that steps down is a warm-up in two levels",
			x: concat(gauss(r, 12, 200, 5), gauss(r, 28, 100, 3)), class: Warmup, from: 12},
		{name: "step up in a rate", why: "for a rate, higher is better: stepping up is a warm-up",
			x: concat(gauss(r, 12, 1000, 20), gauss(r, 28, 1500, 20)), o: Options{HigherIsBetter: true}, class: Warmup, from: 12},
		{name: "step down in a rate", why: "for a rate, stepping down is a slowdown",
			x: concat(gauss(r, 20, 1500, 20), gauss(r, 20, 1000, 20)), o: Options{HigherIsBetter: true}, class: Slowdown, from: 20},
		{name: "warm-up then slowdown", why: "the steady level is worse than one seen before it, whatever came first",
			x: concat(gauss(r, 6, 300, 10), gauss(r, 14, 100, 3), gauss(r, 20, 130, 3)), class: Slowdown, from: 20},
		{name: "no steady state", why: "a change in the last 5 of 35 values leaves too short a last segment",
			x: concat(gauss(r, 30, 100, 3), gauss(r, 5, 200, 3)), class: NoSteadyState, from: -1},
		{name: "within tolerance", why: "a 2% shift is one level at the default 5% tolerance",
			x: concat(gauss(r, 30, 100, 0.2), gauss(r, 30, 102, 0.2)), class: Flat, from: 0},
		{name: "noisy warm-up, quiet level", why: "a loaded host's warm-up at ~180 ms swinging ±50 beside a steady ~45 ms: one scale in log units (in ms the warm-up's swings hid the 3.5x shift)",
			x: []float64{152.8, 177.8, 151.5, 260.1, 168.0, 41.0, 105.2, 41.4, 40.9, 42.3}, class: Warmup, from: 5},
		{name: "variance change only", why: "same mean, noisier second half: merged into one level",
			x: concat(gauss(r, 30, 100, 0.5), gauss(r, 30, 100, 4)), class: Flat, from: 0},
		{name: "constant", why: "identical values: no variance, no changepoint",
			x: slices.Repeat([]float64{7}, 20), class: Flat, from: 0},
		{name: "one slow first iteration of ten", why: "a leading one-point segment is a warm-up (MinSegment 1): the commonest warm-up left over",
			x: concat([]float64{150}, gauss(r, 9, 100, 3)), class: Warmup, from: 1},
		{name: "one outlier in the middle", why: "a one-point segment after the first is an outlier, merged into its neighbour",
			x: concat(gauss(r, 6, 100, 2), []float64{180}, gauss(r, 8, 100, 2)), class: Flat, from: 0},
		{name: "a two-point excursion", why: "two slow bursts in the middle (a neighbour's time slice) between two stretches at one level are that level, interrupted",
			x: concat(gauss(r, 7, 100, 2), []float64{160, 170}, gauss(r, 9, 100, 2)), class: Flat, from: 0},
		{name: "two slow iterations of twelve", why: "a real warm-up on the catalog's short series: 1.3x for two bursts",
			x: concat(gauss(r, 2, 130, 3), gauss(r, 10, 100, 3)), class: Warmup, from: 2},
		{name: "slow warm-up curve over 20", why: "a decay over 8 of 20 iterations",
			x: concat(warmupCurve(r, 8, 200, 102, 2), gauss(r, 12, 100, 2)), class: Warmup, from: -2, lo: 3, hi: 8},
		{name: "bimodal iterations", why: "iterations switching at random between two modes 20% apart: short runs in either mode are excursions of one noisy level, not a warm-up",
			x: bimodal(r, 20, 100, 120, 2), class: Flat, from: 0},
		{name: "alternating long runs", why: "two levels 50% apart taking turns in runs of 6: the level keeps changing to the end, no steady state",
			x: concat(gauss(r, 6, 100, 2), gauss(r, 6, 150, 2), gauss(r, 6, 100, 2), gauss(r, 2, 150, 2)), class: NoSteadyState, from: -1},
		{name: "bimodal forks", why: "a fork that settles in the slow mode of two is flat at its own level: the cell's forks differ, not this one's iterations",
			x: gauss(r, 12, 120, 2), class: Flat, from: 0},
		{name: "empty", why: "nothing measured is not a steady state",
			x: nil, class: NoSteadyState, from: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Classify(tt.x, tt.o)
			if res.Class != tt.class {
				t.Fatalf("%s: class %q, want %q (changepoints %v, segments %+v)", tt.why, res.Class, tt.class, res.Changepoints, res.Segments)
			}
			if tt.from == -2 {
				if res.SteadyFrom < tt.lo || res.SteadyFrom > tt.hi {
					t.Errorf("%s: steady from %d, want in [%d, %d]", tt.why, res.SteadyFrom, tt.lo, tt.hi)
				}
			} else if res.SteadyFrom != tt.from {
				t.Errorf("%s: steady from %d, want %d (changepoints %v)", tt.why, res.SteadyFrom, tt.from, res.Changepoints)
			}
			if want := max(res.SteadyFrom, 0); res.SteadyFrom >= 0 && res.Excluded() != want {
				t.Errorf("excluded %d, want %d", res.Excluded(), want)
			}
		})
	}
}

// bimodal draws n values, each from mode a or b at random, with noise sd.
func bimodal(r *rand.Rand, n int, a, b, sd float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = a + sd*r.NormFloat64()
		if r.IntN(2) == 1 {
			x[i] += b - a
		}
	}
	return x
}

// TestNoiseDoesNotFire is the property the 6·log(n) penalty is chosen for:
// noise, normal or heavy-tailed, must not become a changepoint in more
// than 5% of series of 10-30 points (200 series per row; the rates it
// finds are logged).
func TestNoiseDoesNotFire(t *testing.T) {
	noises := map[string]func(r *rand.Rand) float64{
		"normal CV 5%":     func(r *rand.Rand) float64 { return 100 + 5*r.NormFloat64() },
		"lognormal CV 10%": func(r *rand.Rand) float64 { return 100 * math.Exp(0.1*r.NormFloat64()) },
		"uniform ±10%":     func(r *rand.Rand) float64 { return 90 + 20*r.Float64() },
		"integer ms":       func(r *rand.Rand) float64 { return math.Round(100 + 2*r.NormFloat64()) },
	}
	for _, name := range slices.Sorted(maps.Keys(noises)) {
		for _, n := range []int{10, 20, 30} {
			fired := 0
			for seed := range uint64(200) {
				r := seeded(seed)
				x := make([]float64, n)
				for i := range x {
					x[i] = noises[name](r)
				}
				if Classify(x, Options{}).Class != Flat {
					fired++
				}
			}
			t.Logf("%s, n=%d: not flat in %d of 200", name, n, fired)
			if fired > 10 {
				t.Errorf("%s noise, n=%d: not flat in %d of 200 series, want at most 10 (5%%)", name, n, fired)
			}
		}
	}
}

// TestWarmupFires: a real warm-up on the short series the catalog
// measures is found in at least 90% of series (200 per row).
func TestWarmupFires(t *testing.T) {
	tests := []struct {
		why        string
		n, slow    int
		factor, cv float64
	}{
		{"2 of 10 bursts 1.3x slower, CV 3%", 10, 2, 1.3, 0.03},
		{"3 of 15 bursts 1.5x slower, CV 5%", 15, 3, 1.5, 0.05},
		{"first of 12 bursts 1.5x slower, CV 5%", 12, 1, 1.5, 0.05},
		{"5 of 30 seconds 1.3x slower, CV 5%", 30, 5, 1.3, 0.05},
	}
	for _, tt := range tests {
		found := 0
		for seed := range uint64(200) {
			r := seeded(seed)
			x := concat(gauss(r, tt.slow, 100*tt.factor, 100*tt.cv), gauss(r, tt.n-tt.slow, 100, 100*tt.cv))
			res := Classify(x, Options{})
			if res.Class == Warmup && res.SteadyFrom >= tt.slow-1 && res.SteadyFrom <= tt.slow+1 {
				found++
			}
		}
		t.Logf("%s: found in %d of 200", tt.why, found)
		if found < 180 {
			t.Errorf("%s: warm-up found in %d of 200 series, want at least 180", tt.why, found)
		}
	}
}

// TestPureNoiseIsFlat: long noise series too, against the chain of
// changepoints a low penalty would cut them into.
func TestPureNoiseIsFlat(t *testing.T) {
	noises := map[string]func(r *rand.Rand) float64{
		"normal":    func(r *rand.Rand) float64 { return 100 + 5*r.NormFloat64() },
		"lognormal": func(r *rand.Rand) float64 { return 100 * math.Exp(0.1*r.NormFloat64()) },
		"uniform":   func(r *rand.Rand) float64 { return 90 + 20*r.Float64() },
		"integer":   func(r *rand.Rand) float64 { return math.Round(100 + 2*r.NormFloat64()) },
	}
	for name, draw := range noises {
		for _, n := range []int{100, 400} {
			for seed := range uint64(10) {
				r := seeded(seed)
				x := make([]float64, n)
				for i := range x {
					x[i] = draw(r)
				}
				if res := Classify(x, Options{}); res.Class != Flat {
					t.Errorf("%s noise, n=%d, seed %d: class %q (changepoints %v), want flat", name, n, seed, res.Class, res.Changepoints)
				}
			}
		}
	}
}

// TestPELTIsOptimal checks the pruned search against plain optimal
// partitioning (every start considered at every end): PELT's pruning must
// not change the answer.
func TestPELTIsOptimal(t *testing.T) {
	for seed := range uint64(40) {
		r := seeded(seed)
		n := 10 + r.IntN(50)
		var x []float64
		for len(x) < n {
			x = append(x, gauss(r, 2+r.IntN(12), 50+100*r.Float64(), 1+5*r.Float64())...)
		}
		for _, minSeg := range []int{1, 2, 3} {
			pen := 1 * math.Log(float64(len(x))) // low penalty: many changepoints to get wrong
			sigma := Scale(x)
			got := Changepoints(x, pen, minSeg, sigma)
			want := optimalPartitioning(x, pen, minSeg, sigma)
			if !slices.Equal(got, want) {
				t.Errorf("seed %d minSeg %d: PELT %v, optimal partitioning %v", seed, minSeg, got, want)
			}
			for i, cp := range append([]int{0}, append(got, len(x))...)[1:] {
				prev := append([]int{0}, got...)[i]
				if cp-prev < minSeg {
					t.Errorf("seed %d: segment [%d,%d) shorter than %d", seed, prev, cp, minSeg)
				}
			}
		}
	}
}

func optimalPartitioning(x []float64, pen float64, minSeg int, sigma float64) []int {
	n := len(x)
	if n < 2*minSeg {
		return nil
	}
	c := newMeanCost(x, sigma)
	f := make([]float64, n+1)
	prev := make([]int, n+1)
	f[0] = -pen
	for t := minSeg; t <= n; t++ {
		f[t] = math.Inf(1)
		for s := 0; s <= t-minSeg; s++ {
			if s != 0 && s < minSeg {
				continue
			}
			if v := f[s] + c.cost(s, t) + pen; v < f[t] {
				f[t], prev[t] = v, s
			}
		}
	}
	var cps []int
	for t := prev[n]; t > 0; t = prev[t] {
		cps = append([]int{t}, cps...)
	}
	return cps
}

// TestMeanCost checks the segment cost by hand at sigma 2: x = {1, 3}:
// mean 2, squared deviations 1+1 = 2, over sigma² = 4: 0.5.
// {10, 20}: mean 15, 25+25 = 50, /4 = 12.5.
func TestMeanCost(t *testing.T) {
	c := newMeanCost([]float64{1, 3, 10, 20}, 2)
	if got := c.cost(0, 2); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("cost([1,3]) = %v, want 0.5", got)
	}
	if got := c.cost(2, 4); math.Abs(got-12.5) > 1e-9 {
		t.Errorf("cost([10,20]) = %v, want 12.5", got)
	}
}

// TestScale checks the noise scale by hand. x = {10, 12, 10, 12, 10}:
// successive differences all 2, median 2, 2/(0.6745·√2) = 2.0967.
// A level shift moves one difference only: {10, 12, 10, 112, 110, 112}
// has differences {2, 2, 102, 2, 2}: median still 2.
// A constant series has the floor: 0.1% of 50 = 0.05.
func TestScale(t *testing.T) {
	want := 2 / (0.6745 * math.Sqrt2)
	if got := Scale([]float64{10, 12, 10, 12, 10}); math.Abs(got-want) > 1e-9 {
		t.Errorf("Scale(zigzag) = %v, want %v", got, want)
	}
	if got := Scale([]float64{10, 12, 10, 112, 110, 112}); math.Abs(got-want) > 1e-9 {
		t.Errorf("Scale(with a shift) = %v, want %v", got, want)
	}
	if got := Scale([]float64{50, 50, 50}); math.Abs(got-0.05) > 1e-12 {
		t.Errorf("Scale(constant) = %v, want 0.05", got)
	}
}

func TestForks(t *testing.T) {
	tests := []struct {
		why       string
		in        []Class
		label     string
		unsettled int
	}{
		{"all the same class is consistent", []Class{Warmup, Warmup, Warmup}, "warmup", 0},
		{"flat and warm-up forks all reach a steady state", []Class{Flat, Warmup, Flat}, "good inconsistent", 0},
		{"a slowdown among flat forks is bad", []Class{Flat, Slowdown, Flat}, "bad inconsistent", 0},
		{"a fork that never settled is counted", []Class{Warmup, NoSteadyState}, "bad inconsistent", 1},
		{"all unsettled is consistent, and all unsettled", []Class{NoSteadyState, NoSteadyState}, "no steady state", 2},
		{"no forks, no label", nil, "", 0},
	}
	for _, tt := range tests {
		c := Forks(tt.in)
		if c.Label != tt.label || c.Unsettled != tt.unsettled {
			t.Errorf("%s: Forks(%v) = %q unsettled %d, want %q unsettled %d", tt.why, tt.in, c.Label, c.Unsettled, tt.label, tt.unsettled)
		}
	}
}
