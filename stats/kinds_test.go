package stats

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestEvaluateAbsolute covers absolute checks on one variant, with the
// p-values computed by hand.
func TestEvaluateAbsolute(t *testing.T) {
	one := func(xs ...float64) []Cell { return []Cell{{Variant: "webflux", Metric: "errors", Values: xs}} }
	tests := []struct {
		name   string
		check  Check
		cells  []Cell
		status string
		p      float64
		test   string
		why    string
	}{
		{"no errors at all", Check{Metric: "errors", Variant: "webflux", AtMost: F(0)}, one(0, 0, 0, 0, 0),
			Supported, 1.0 / 32, "sign test",
			"five trials on the bound 0 all meet at_most 0: P(Bin(5, 1/2) >= 5) = 1/32; the interval is 0-0"},
		{"errors in two trials of five", Check{Metric: "errors", Variant: "webflux", AtMost: F(0)}, one(0, 3, 0, 1, 0),
			Inconclusive, 16.0 / 32, "sign test",
			"three of five meet the bound: P(Bin(5, 1/2) >= 3) = 16/32; two exceed it: P(>= 2) = 26/32, no contradiction either"},
		{"errors in every trial", Check{Metric: "errors", Variant: "webflux", AtMost: F(0)}, one(2, 3, 1, 1, 4),
			Contradicted, 1.0 / 32, "sign test",
			"all five exceed 0: the mirror sign test gives 1/32"},
		{"threads on the bound", Check{Metric: "distinct_threads", Variant: "webflux", AtMost: F(8)},
			[]Cell{{Variant: "webflux", Metric: "distinct_threads", Values: []float64{8, 8, 8, 8, 8}}},
			Supported, 1.0 / 32, "sign test",
			"replicates exactly on the bound meet it: sign test, not signed-rank (which would drop them as zeros)"},
		{"throughput above a floor", Check{Metric: "rps", Variant: "webflux", AtLeast: F(100)},
			[]Cell{{Variant: "webflux", Metric: "rps", Values: []float64{120, 130, 125, 140, 135}}},
			Supported, 1.0 / 32, "signed-rank",
			"all log(x/100) positive: W+ = 1+2+3+4+5 = 15, the top of 2^5 sign patterns: 1/32"},
		{"three replicates", Check{Metric: "rps", Variant: "webflux", AtLeast: F(100)},
			[]Cell{{Variant: "webflux", Metric: "rps", Values: []float64{120, 130, 125}}},
			Inconclusive, 1.0 / 8, "signed-rank",
			"n = 3 cannot go below 1/2^3 = 0.125 with a one-sample test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Evaluate("abs", "says", tt.check, tt.cells, 1)
			if v.Status != tt.status || !near(v.P, tt.p) {
				t.Fatalf("status %q p %v, want %q p %v (%s); reason %q", v.Status, v.P, tt.status, tt.p, tt.why, v.Reason)
			}
			if !strings.Contains(v.Reason+strings.Join(v.Evidence, " "), tt.test) {
				t.Errorf("evidence does not name the %s (%s): %q", tt.test, tt.why, v.Evidence)
			}
		})
	}
	v := Evaluate("abs", "says", tests[0].check, tests[0].cells, 1)
	if v.Low != 0 || v.High != 0 || v.Ratio != 0 {
		t.Errorf("median %v interval %v-%v, want 0 and 0-0", v.Ratio, v.Low, v.High)
	}
}

// TestEvaluateTrend covers increases_over and decreases_over.
func TestEvaluateTrend(t *testing.T) {
	var cells []Cell
	for i, p := range []string{"10", "20", "40"} {
		base := float64(10 * (i + 1))
		cells = append(cells, Cell{Variant: "virtual", Metric: "rps", Point: at("pool", p), Values: []float64{base, base + 1, base + 2}})
	}
	up := Check{Metric: "rps", Variant: "virtual", IncreasesOver: map[string][]string{"pool": {"10", "20", "40"}}}
	// Fully ordered 3+3+3: J = 27, reached by one of 9!/(3!3!3!) = 1680 assignments.
	v := Evaluate("up", "rises", up, cells, 1)
	if v.Status != Supported || !near(v.P, 1.0/1680) || !strings.Contains(v.Method, "Jonckheere-Terpstra") {
		t.Errorf("status %q p %v method %q, want supported with p = 1/1680 by Jonckheere-Terpstra; reason %q", v.Status, v.P, v.Method, v.Reason)
	}
	if !near(v.Ratio, 31.0/11) {
		t.Errorf("last/first median %v, want 31/11", v.Ratio)
	}
	down := Check{Metric: "rps", Variant: "virtual", DecreasesOver: up.IncreasesOver}
	if v := Evaluate("down", "falls", down, cells, 1); v.Status != Contradicted || !near(v.P, 1.0/1680) {
		t.Errorf("decreases_over on rising data: status %q p %v, want contradicted with p = 1/1680; reason %q", v.Status, v.P, v.Reason)
	}
	// Listed order is the claim's order: reversing the list reverses the trend.
	rev := Check{Metric: "rps", Variant: "virtual", IncreasesOver: map[string][]string{"pool": {"40", "20", "10"}}}
	if v := Evaluate("rev", "rises", rev, cells, 1); v.Status != Contradicted {
		t.Errorf("increases_over in reverse order: status %q, want contradicted; reason %q", v.Status, v.Reason)
	}
}

// TestEvaluateTrendSize: a trend claim has a size. A perfectly ordered
// drift of 2% is significant, but "p99 climbs with users" needs last/first
// to move by the tolerance (10% by default); the check may set another.
func TestEvaluateTrendSize(t *testing.T) {
	var cells []Cell
	for i, p := range []string{"10", "20", "40"} {
		base := 100 + float64(i)
		cells = append(cells, Cell{Variant: "virtual", Metric: "p99_ms", Point: at("users", p), Values: []float64{base, base + 0.1, base + 0.2}})
	}
	over := map[string][]string{"users": {"10", "20", "40"}}
	rows := []struct {
		why    string
		check  Check
		status string
		reason string
	}{
		{"2% up, significant, under the default 10%", Check{Metric: "p99_ms", Variant: "virtual", IncreasesOver: over}, Inconclusive, "its size is not shown"},
		{"the same drift against a stated 1% tolerance", Check{Metric: "p99_ms", Variant: "virtual", IncreasesOver: over, Tolerance: 0.01}, Supported, "clears"},
		{"the size gate never turns a reversal into anything milder", Check{Metric: "p99_ms", Variant: "virtual", DecreasesOver: over}, Contradicted, "other direction"},
	}
	for _, r := range rows {
		v := Evaluate("trend", "climbs", r.check, cells, 1)
		if v.Status != r.status || !strings.Contains(v.Reason, r.reason) {
			t.Errorf("%s: %s (%s), want %s with %q", r.why, v.Status, v.Reason, r.status, r.reason)
		}
	}
	// 2% where 10% is claimed is decided, not waiting for forks: the size
	// test puts last/first below 1.1, so the verdict is closed.
	if v := Evaluate("trend", "climbs", rows[0].check, cells, 1); v.Open {
		t.Errorf("a trend shown smaller than its minimum change is still open: %s", v.Reason)
	}
}

// TestEvaluateForks: with fork structure the unit of replication is the
// fork (the median of its iterations), not the iteration.
func TestEvaluateForks(t *testing.T) {
	forks := func(scale float64, k int) [][]float64 {
		var out [][]float64
		for i := range k {
			b := scale * float64(100+i)
			out = append(out, []float64{b, b + 1, b - 1, b + 2, b - 2})
		}
		return out
	}
	check := compareCheck("wall_ms", 1.5, 0)
	cells := []Cell{{Variant: "a", Metric: "wall_ms", Forks: forks(2, 3)}, {Variant: "b", Metric: "wall_ms", Forks: forks(1, 3)}}
	// 3 fork medians each (200, 202, 204 vs 100, 101, 102), separated: 1/C(6,3) = 0.05, not 1/C(30,15)
	// as 15 iterations per side would wrongly give.
	v := Evaluate("f", "s", check, cells, 1)
	if v.Status != Supported || !near(v.P, 0.05) || !hasSubstring(v.Evidence, "n=3+3 forks") {
		t.Errorf("status %q p %v evidence %q, want supported on 3+3 forks with p = 0.05; reason %q", v.Status, v.P, v.Evidence, v.Reason)
	}
	cells = []Cell{{Variant: "a", Metric: "wall_ms", Forks: forks(2, 2)}, {Variant: "b", Metric: "wall_ms", Forks: forks(1, 2)}}
	if v := Evaluate("f2", "s", check, cells, 1); v.Status != Inconclusive || !strings.Contains(v.Reason, "only 2 forks of a") || !v.Open {
		t.Errorf("2 forks: status %q open %v reason %q, want inconclusive (open) for too few forks", v.Status, v.Open, v.Reason)
	}
}

// TestEvaluateSequential: the same data is undecided at an early look and
// decided at the last one, and Decided says when a run may stop.
func TestEvaluateSequential(t *testing.T) {
	cells := []Cell{cell("a", "wall_ms", nil, scale(steady, 2)), cell("b", "wall_ms", nil, steady)}
	check := compareCheck("wall_ms", 1.5, 0)
	// p = 1/924 = 0.0011. Look 1 of 8 (O'Brien-Fleming, t = 1/8): boundary z = 1.96/√0.125 = 5.54,
	// nominal level ~1.5e-8, so not yet; at look 8 the level is close to 0.05.
	early := EvaluateWith("s", "", check, cells, Options{Seed: 1, Sequential: Sequential{Look: 1, MaxLooks: 8}})
	if early.Status != Inconclusive || Decided(early) || !strings.Contains(early.Reason, "look 1 of 8: more trials may decide it") {
		t.Errorf("look 1: status %q decided %v reason %q, want undecided", early.Status, Decided(early), early.Reason)
	}
	if !(early.Level < 1e-6) {
		t.Errorf("look 1 level %v, want below 1e-6", early.Level)
	}
	last := EvaluateWith("s", "", check, cells, Options{Seed: 1, Sequential: Sequential{Look: 8, MaxLooks: 8}})
	if last.Status != Supported || !Decided(last) || last.Look != 8 || !(last.Level > 0.03 && last.Level < 0.05) {
		t.Errorf("look 8: status %q level %v, want supported at a level just under 0.05; reason %q", last.Status, last.Level, last.Reason)
	}
	// A zero denominator cannot be fixed by more trials: decided (as inconclusive).
	zero := []Cell{cell("a", "errors", nil, []float64{1, 2, 1}), cell("b", "errors", nil, []float64{0, 0, 0})}
	v := EvaluateWith("z", "", Check{Metric: "errors", Compare: []string{"a", "b"}, AtLeast: F(2)}, zero,
		Options{Sequential: Sequential{Look: 1, MaxLooks: 4}})
	if v.Status != Inconclusive || !Decided(v) {
		t.Errorf("zero denominator: status %q decided %v, want inconclusive and decided", v.Status, Decided(v))
	}
}

// TestForkBootstrap: when forks differ from each other far more than
// iterations within a fork, the interval must show the fork-to-fork spread
// (pooling the iterations as if independent would hide it); and the
// iterations are not resampled again, so a fork set gives exactly the
// interval of its fork medians (the double counting of issue 20 is gone).
func TestForkBootstrap(t *testing.T) {
	// Five forks at 80, 90, 100, 110, 120 with iterations ±0.5 around each.
	var forks [][]float64
	var pooled []float64
	for _, m := range []float64{80, 90, 100, 110, 120} {
		f := []float64{m - 0.5, m, m + 0.5, m - 0.25, m + 0.25}
		forks = append(forks, f)
		pooled = append(pooled, f...)
	}
	interval := func(s sample) (float64, float64) {
		return newResampler(1, "x").interval([]sample{s}, 2000, 0.05, func(m []float64) float64 { return m[0] })
	}
	hLo, hHi := interval(newSample(nil, forks))
	pLo, pHi := interval(newSample(pooled, nil))
	mLo, mHi := interval(newSample([]float64{80, 90, 100, 110, 120}, nil))
	// The fork medians are 80..120, so the resampled median of 5 forks ranges over them: the 90%
	// interval spans at least 90-110. The pooled 25 iterations, taken as independent, give a narrower one.
	if !(hLo <= 90 && hHi >= 110) {
		t.Errorf("fork interval %v-%v, want at least 90-110", hLo, hHi)
	}
	if !(hHi-hLo > 1.5*(pHi-pLo)) {
		t.Errorf("fork interval %v-%v is not wider than the pooled one %v-%v", hLo, hHi, pLo, pHi)
	}
	// Same seed, same units (the fork medians): the same draws, so the same interval.
	if hLo != mLo || hHi != mHi {
		t.Errorf("forks give %v-%v, their medians as trials %v-%v; the iterations must not be resampled again", hLo, hHi, mLo, mHi)
	}
}

// TestBootstrapThreeByThree checks the unsmoothed interval by hand. With 3
// units the resampled median is the smallest unit when at least 2 of 3
// draws pick it: 3·(1/3)²·(2/3) + (1/3)³ = 7/27. For a ratio of two such
// medians, P(ratio = min A/max B) = (7/27)² = 0.067 > 0.05, so the
// nearest-rank 5% point is min A/max B = 90/105 and the 95% point max A/min
// B = 110/95: the interval that misses a pure shift with probability
// 1/C(6,3) = 0.05 on each side.
func TestBootstrapThreeByThree(t *testing.T) {
	a := newSample(nil, [][]float64{{90, 89, 91}, {100, 130, 70}, {110, 111, 109}})
	b := newSample([]float64{95, 100, 105}, nil)
	if a.smooth || b.smooth {
		t.Fatalf("3 units smoothed; smoothing starts at %d", SmoothFrom)
	}
	lo, hi := newResampler(3, "x").interval([]sample{a, b}, 20000, 0.05, func(m []float64) float64 { return m[0] / m[1] })
	if !near(lo, 90.0/105) || !near(hi, 110.0/95) {
		t.Errorf("interval %v-%v, want %v-%v", lo, hi, 90.0/105, 110.0/95)
	}
}

// TestSmoothing checks the smoothed bootstrap's parameters by hand, and
// the cases it leaves alone.
func TestSmoothing(t *testing.T) {
	// Logs of e^{-2}, e^{-1}, e^0, e^1, e^2: mean 0, sample variance (4+1+0+1+4)/4 = 2.5,
	// s = √2.5 = 1.5811; h = s/√5 = 0.70711; k = 1/√(1 + 1/5) = 0.91287.
	units := []float64{math.Exp(-2), math.Exp(-1), 1, math.E, math.Exp(2)}
	c, h, k, ok := smoothing(units)
	if !ok || math.Abs(c) > 1e-12 || math.Abs(h-math.Sqrt(0.5)) > 1e-12 || math.Abs(k-1/math.Sqrt(1.2)) > 1e-12 {
		t.Errorf("smoothing = %v %v %v %v, want 0, 0.70711, 0.91287, true", c, h, k, ok)
	}
	for _, tc := range []struct {
		why   string
		units []float64
	}{
		{"4 units: the plain bootstrap is close to exact", []float64{1, 2, 3, 4}},
		{"a zero (an error count): no log scale", []float64{0, 1, 2, 3, 4}},
		{"no spread: nothing to smooth", []float64{7, 7, 7, 7, 7}},
	} {
		if _, _, _, ok := smoothing(tc.units); ok {
			t.Errorf("%s: smoothed %v", tc.why, tc.units)
		}
	}
	// A smoothed draw keeps the sample's centre, and its spread stays near the
	// sample's: the logs of many draws have mean 0 and variance
	// k²·(plug-in variance (4+1+0+1+4)/5 = 2 + h² = 0.5) = 2.5/1.2 = 2.083.
	s := newSample(units, nil)
	r := newResampler(1, "x")
	var sum, sum2 float64
	const n = 200000
	for range n / 5 {
		r.median(s)
		for _, x := range r.draw { // a smoothed resample is drawn on the log scale
			sum += x
			sum2 += x * x
		}
	}
	mean, v := sum/n, sum2/n-(sum/n)*(sum/n)
	if math.Abs(mean) > 0.02 || math.Abs(v-2.5/1.2) > 0.03 {
		t.Errorf("smoothed draws: mean %v, variance %v; want 0 and %v", mean, v, 2.5/1.2)
	}
}

// TestIssue9PoolSweep is the case the issue reports: platform rps over
// pools 20 and 40 differ by 0.2% against a ±10% tolerance, 5 trials each,
// and was inconclusive because the old rule tested the difference
// ("Mann-Whitney highest vs lowest p=1"). As an equivalence test it is
// decided: both one-sided tests are fully separated, 1/C(10,5) = 1/252.
func TestIssue9PoolSweep(t *testing.T) {
	cells := []Cell{
		{Variant: "platform", Metric: "rps", Point: at("pool", "20"), Values: []float64{1000, 1002, 1001, 999, 1003}},
		{Variant: "platform", Metric: "rps", Point: at("pool", "40"), Values: []float64{1004, 1001, 1003, 1005, 1002}},
	}
	check := Check{Metric: "rps", Variant: "platform", FlatOver: map[string][]string{"pool": {"20", "40"}}}
	v := Evaluate("platform-plateaus", "flat", check, cells, 1)
	if v.Status != Supported || !near(v.P, 1.0/252) || !near(v.Ratio, 1003.0/1001) {
		t.Errorf("status %q p %v ratio %v, want supported with p = 1/252 at 1003/1001; reason %q", v.Status, v.P, v.Ratio, v.Reason)
	}
}

// TestSelectKth: selection gives the sorted order's k-th value for every k,
// with ties and runs of equal values (the resampled medians of few forks).
func TestSelectKth(t *testing.T) {
	for _, xs := range [][]float64{
		{5, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5},
		{2, 2, 2, 2},
		{3, 1, 2},
		{7},
		{1, 2, 3, 4, 5, 6, 7, 8},
		{8, 7, 6, 5, 4, 3, 2, 1, 1, 8},
	} {
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		for k := range xs {
			ys := slices.Clone(xs)
			if got := selectKth(ys, k); got != sorted[k] {
				t.Errorf("selectKth(%v, %d) = %v, want %v", xs, k, got, sorted[k])
			}
			for i := range ys {
				if (i < k && ys[i] > ys[k]) || (i > k && ys[i] < ys[k]) {
					t.Errorf("selectKth(%v, %d) left %v out of place in %v", xs, k, ys[i], ys)
				}
			}
		}
	}
}

// TestCheckBand: the band a claim of equality is judged against, which the
// report reads the seed's figure against; one-sided checks have none.
func TestCheckBand(t *testing.T) {
	for _, tc := range []struct {
		c      Check
		lo, hi float64
		ok     bool
		why    string
	}{
		{Check{Compare: []string{"a", "b"}, AtLeast: F(0.9), AtMost: F(1.1)}, 0.9, 1.1, true, "a tie: its two bounds"},
		{Check{Variant: "a", FlatOver: map[string][]string{"depth": {"1", "2"}}}, 1 / 1.1, 1.1, true, "flat_over without a tolerance: evalFlat's default band"},
		{Check{Variant: "a", FlatOver: map[string][]string{"depth": {"1", "2"}}, Tolerance: 0.25}, 0.8, 1.25, true, "flat_over with its own tolerance"},
		{Check{Compare: []string{"a", "b"}, AtLeast: F(1.5)}, 0, 0, false, "one-sided: no band"},
		{Check{Variant: "a", AtMost: F(0)}, 0, 0, false, "an absolute bound: no band"},
	} {
		lo, hi, ok := tc.c.Band()
		if ok != tc.ok || math.Abs(lo-tc.lo) > 1e-12 || math.Abs(hi-tc.hi) > 1e-12 {
			t.Errorf("%s: Band() = %g, %g, %v; want %g, %g, %v", tc.why, lo, hi, ok, tc.lo, tc.hi, tc.ok)
		}
	}
}

// TestAbsoluteEvidenceText: the evidence names the median once ("the
// median of webflux rps", not "median the median of") and prints the
// estimate with its interval's digits, so it never reads outside its own
// interval (915.523 printed "916" beside 915.367–915.679 on io-bound).
func TestAbsoluteEvidenceText(t *testing.T) {
	c := Check{Metric: "wall_ms", Variant: "platform", AtLeast: F(900)}
	v := Evaluate("abs", "says", c, []Cell{{Variant: "platform", Metric: "wall_ms", Values: []float64{915.367, 915.523, 915.679, 915.41, 915.6, 915.5}}}, 1)
	ev := strings.Join(v.Evidence, " ")
	if strings.Contains(ev, "median the median") {
		t.Errorf("evidence repeats 'median': %q", ev)
	}
	if !strings.Contains(ev, "the median of platform wall_ms = 915.5") {
		t.Errorf("evidence should give the estimate to its interval's digits: %q", ev)
	}
}

// TestEvaluateTiedPointsNameTheLast: when every point clears the bound by
// the same margin (zero errors in every fork at every load), the verdict
// names the last sweep point, the hardest load, not the first.
func TestEvaluateTiedPointsNameTheLast(t *testing.T) {
	var cells []Cell
	for _, u := range []string{"2000", "500", "1000"} { // unsorted on purpose
		cells = append(cells, cell("webflux", "errors", at("users", u), []float64{0, 0, 0, 0, 0}))
	}
	v := Evaluate("zero", "no errors", Check{Metric: "errors", Variant: "webflux", AtMost: F(0)}, cells, 1)
	if v.Status != Supported || v.Point != "users=2000" || !strings.Contains(v.Reason, "weakest at users=2000") {
		t.Fatalf("status %q point %q reason %q, want supported and decided at users=2000, the largest load", v.Status, v.Point, v.Reason)
	}
	// A strictly weaker point still decides over later ties: six forks at 2000 and 1000 (p = 1/64)
	// and five at 500 (p = 1/32) make 500 the weakest.
	six := []float64{0, 0, 0, 0, 0, 0}
	cells[0] = cell("webflux", "errors", at("users", "2000"), six)
	cells[2] = cell("webflux", "errors", at("users", "1000"), six)
	v = Evaluate("zero", "no errors", Check{Metric: "errors", Variant: "webflux", AtMost: F(0)}, cells, 1)
	if v.Status != Supported || v.Point != "users=500" || !near(v.P, 1.0/32) {
		t.Errorf("status %q point %q p %v reason %q, want supported, decided at users=500 with p 1/32", v.Status, v.Point, v.P, v.Reason)
	}
}
