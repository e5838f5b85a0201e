package stats

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// steady is six tight trials: median 100, CV 1.41% (see TestFlags).
var steady = []float64{100, 101, 99, 100, 102, 98}

func cell(variant, metric string, point map[string]string, xs []float64) Cell {
	return Cell{Variant: variant, Point: point, Metric: metric, Values: xs}
}

func at(key, value string) map[string]string { return map[string]string{key: value} }

func compareCheck(metric string, atLeast, atMost float64) Check {
	c := Check{Metric: metric, Compare: []string{"a", "b"}}
	if atLeast > 0 {
		c.AtLeast = F(atLeast)
	}
	if atMost > 0 {
		c.AtMost = F(atMost)
	}
	return c
}

func hasSubstring(xs []string, sub string) bool {
	return slices.ContainsFunc(xs, func(x string) bool { return strings.Contains(x, sub) })
}

// TestEvaluateIdentical: two variants with the same trials never produce a
// winner; only claims about the absence of a difference can be decided.
func TestEvaluateIdentical(t *testing.T) {
	cells := []Cell{cell("a", "wall_ms", nil, steady), cell("b", "wall_ms", nil, steady)}
	if c := Compare(steady, steady, Alpha); c.Verdict != "~" {
		t.Fatalf("Compare of identical samples = %q, want ~", c.Verdict)
	}
	tests := []struct {
		name          string
		why           string
		check         Check
		status, leans string
		reason        string
	}{
		{
			name:  "a at least b",
			why:   "ratio 1 sits on the threshold: a vs b one-sided p = 0.5ish, leaning nowhere",
			check: compareCheck("wall_ms", 1, 0), status: Inconclusive, reason: "is not ≤ 0.05",
		},
		{
			name:  "a at most b",
			why:   "the mirror claim is just as undecidable",
			check: compareCheck("wall_ms", 0, 1), status: Inconclusive, reason: "is not ≤ 0.05",
		},
		{
			name: "within 10%",
			why: "an equivalence claim 0.9 <= a/b <= 1.1 (TOST): the interval sits inside, and a vs 0.9b and " +
				"a vs 1.1b are both fully separated (one-sided p = 1/924 = 0.0011)",
			check: compareCheck("wall_ms", 0.9, 1.1), status: Supported,
		},
		{
			name:  "a claimed gap that is not there",
			why:   "a/b >= 1.5 with a/b = 1: interval below 1.5, 1.5b vs a fully separated (one-sided p = 1/924)",
			check: compareCheck("wall_ms", 1.5, 0), status: Contradicted,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Evaluate("id", "says", tt.check, cells, 1)
			if v.Status != tt.status || v.Leans != tt.leans {
				t.Fatalf("status %q leans %q, want %q %q (%s); reason %q", v.Status, v.Leans, tt.status, tt.leans, tt.why, v.Reason)
			}
			if !strings.Contains(v.Reason, tt.reason) {
				t.Errorf("reason %q lacks %q (%s)", v.Reason, tt.reason, tt.why)
			}
			if v.Ratio != 1 {
				t.Errorf("ratio %v, want 1 (100/100)", v.Ratio)
			}
		})
	}
}

// TestEvaluateDoubled: one variant's latency doubled (n=6 each) is a
// significant difference and decides claims both ways.
func TestEvaluateDoubled(t *testing.T) {
	doubled := scale(steady, 2)
	cells := []Cell{cell("a", "wall_ms", nil, doubled), cell("b", "wall_ms", nil, steady)}
	if c := Compare(steady, doubled, Alpha); !c.Significant || c.Verdict != "+100.0%" {
		t.Fatalf("Compare(steady, doubled) = %q significant %v, want +100.0%%", c.Verdict, c.Significant)
	}

	v := Evaluate("slower", "a takes at least 1.5x as long as b", compareCheck("wall_ms", 1.5, 0), cells, 42)
	// ratio of medians 200/100 = 2; a vs 1.5b: 196 > 153, fully separated, one-sided p = 1/C(12,6) = 1/924
	if v.Status != Supported {
		t.Fatalf("status %q, want supported; reason %q", v.Status, v.Reason)
	}
	if v.Ratio != 2 || !near(v.P, 1.0/924) {
		t.Errorf("ratio %v p %v, want 2 and 1/924 = 0.0010823", v.Ratio, v.P)
	}
	// The bootstrap interval can only use ratios of resampled medians:
	// the smallest is 196/102 = 1.922 and the largest 204/98 = 2.082.
	if !(v.Low > 1.5 && v.Low <= 2 && v.High >= 2 && v.Low >= 196.0/102 && v.High <= 204.0/98) {
		t.Errorf("interval [%v, %v], want inside [1.922, 2.082] around 2 and above 1.5", v.Low, v.High)
	}
	if !hasSubstring(v.Evidence, "a/b wall_ms = 2 (90% CI") || !hasSubstring(v.Evidence, "one-sided Mann-Whitney U p=0.0011") {
		t.Errorf("evidence %q lacks the ratio, interval and test", v.Evidence)
	}

	v = Evaluate("not-slower", "a is no slower than b", compareCheck("wall_ms", 0, 1), cells, 42)
	if v.Status != Contradicted || !strings.Contains(v.Reason, "is outside ≤ 1") {
		t.Errorf("status %q reason %q, want contradicted: a/b = 2 is outside ≤ 1", v.Status, v.Reason)
	}
}

// TestEvaluateNoise: noise flags are evidence, never a gate (issue 9: a
// gate on the extremes of the trials made power fall as trials were added).
// A cell with CV around 30% is flagged noisy-cv and the claim is still
// decided by its test and interval.
func TestEvaluateNoise(t *testing.T) {
	// mean 173.3, squares 12733.3, /5 = 2546.7, sd 50.5, CV 29.1%; median (160+170)/2 = 165
	noisy := []float64{160, 100, 220, 150, 170, 240}
	v := Evaluate("n", "a >= 1.2 b", compareCheck("rps", 1.2, 0),
		[]Cell{cell("a", "rps", nil, noisy), cell("b", "rps", nil, steady)}, 1)
	// a vs 1.2b = {120, 121.2, 118.8, 120, 122.4, 117.6}: 100 is below all six, the other five a
	// values above all six: U = 30 of 36. Without ties P(U >= 30) = P(U <= 6) = 30/924; with the two
	// 120s sharing a midrank, the exact permutation tail counts 27 of the 924 splits (bruteMW agrees).
	if v.Status != Supported || !near(v.P, 27.0/924) || !near(bruteMW(noisy, scale(steady, 1.2)), 27.0/924) {
		t.Fatalf("status %q p %v, want supported with p = 27/924; reason %q", v.Status, v.P, v.Reason)
	}
	if !slices.Contains(v.Flags, "noisy-cv (a)") || !hasSubstring(v.Evidence, "noisy-cv: CV 29.1%") {
		t.Errorf("flags %v evidence %q: want noisy-cv (a) kept as evidence", v.Flags, v.Evidence)
	}
	// the same noise around a ratio of 1.3 against 1.5: the medians lean against, but 165/100 = 1.65...
	// so use a cell centred on the threshold: 1.2 x steady with the same spread cannot be decided.
	tied := []float64{120, 80, 170, 115, 125, 180}
	v = Evaluate("t", "a >= 1.2 b", compareCheck("rps", 1.2, 0),
		[]Cell{cell("a", "rps", nil, tied), cell("b", "rps", nil, steady)}, 1)
	if v.Status != Inconclusive || !v.Open {
		t.Errorf("status %q open %v, want inconclusive and open (more trials may decide); reason %q", v.Status, v.Open, v.Reason)
	}
}

// TestInjectedNoiseIsFlagged is the detector's power and false-alarm rate:
// cells whose trials are scaled by a random factor with CV 30% (a service
// time drawn per process start) are flagged noisy-cv; steady cells (CV 2%)
// are not.
func TestInjectedNoiseIsFlagged(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	noisyFlagged, steadyFlagged := 0, 0
	const cells = 500
	for range cells {
		noisy, calm := make([]float64, 6), make([]float64, 6)
		for i := range noisy {
			noisy[i] = 500 * math.Max(0.1, 1+0.3*rng.NormFloat64())
			calm[i] = 500 * (1 + 0.02*rng.NormFloat64())
		}
		if slices.Contains(Codes(Flags(noisy, false)), FlagNoisyCV) {
			noisyFlagged++
		}
		if slices.Contains(Codes(Flags(calm, false)), FlagNoisyCV) {
			steadyFlagged++
		}
	}
	// With n = 6 the sample sd falls below a third of the true one with
	// probability P(chi2_5 < 5/9) ~ 1%, so nearly every noisy cell is caught.
	if noisyFlagged < cells*95/100 {
		t.Errorf("%d of %d noisy cells flagged, want >= 95%%", noisyFlagged, cells)
	}
	if steadyFlagged != 0 {
		t.Errorf("%d of %d steady cells flagged noisy, want 0", steadyFlagged, cells)
	}
}

func TestEvaluateSlowFirst(t *testing.T) {
	slow := []float64{112, 100, 100, 101, 99, 100} // see TestFlags "slow first latency"
	v := Evaluate("w", "a at least 2x b", compareCheck("wall_ms", 2, 0),
		[]Cell{cell("a", "wall_ms", nil, scale(steady, 3)), cell("b", "wall_ms", nil, slow)}, 1)
	if !slices.Contains(v.Flags, "slow-first (b)") || !hasSubstring(v.Evidence, "warm-up is probably too short") {
		t.Errorf("flags %v evidence %q: want slow-first (b) with the warm-up advice", v.Flags, v.Evidence)
	}
	// a/b = 300/100 = 3, a vs 2b fully separated: the flag is evidence and does not undo it
	if v.Status != Supported {
		t.Errorf("status %q, want supported (flags never gate); reason %q", v.Status, v.Reason)
	}
}

func TestEvaluateInconclusiveReasons(t *testing.T) {
	pool := func(v string) map[string]string { return at("pool", v) }
	tests := []struct {
		name   string
		why    string
		check  Check
		cells  []Cell
		reason string
	}{
		{
			name:   "few trials",
			why:    "2+2 trials: even a tenfold gap cannot reach p <= 0.05 (minimum 1/C(4,2) = 0.167)",
			check:  compareCheck("rps", 1.5, 0),
			cells:  []Cell{cell("a", "rps", nil, scale(steady[:2], 10)), cell("b", "rps", nil, steady[:2])},
			reason: "only 2 trials of a at the only point",
		},
		{
			name: "missing point",
			why:  "the claim names pool 800 and nobody ran it",
			check: Check{Metric: "rps", Compare: []string{"a", "b"}, AtLeast: F(1.5),
				Where: map[string][]string{"pool": {"400", "800"}}},
			cells:  []Cell{cell("a", "rps", pool("400"), scale(steady, 2)), cell("b", "rps", pool("400"), steady)},
			reason: "no data for variant a at pool=800",
		},
		{
			name:   "missing variant",
			why:    "one side of the comparison never ran",
			check:  compareCheck("rps", 1.5, 0),
			cells:  []Cell{cell("b", "rps", nil, steady)},
			reason: "no data for variant a (metric rps)",
		},
		{
			name:   "missing variant at a point",
			why:    "b ran at pool=200 but a did not; pool=400 supports, so the gap decides",
			check:  compareCheck("rps", 1.5, 0),
			cells:  []Cell{cell("a", "rps", pool("400"), scale(steady, 2)), cell("b", "rps", pool("400"), steady), cell("b", "rps", pool("200"), steady)},
			reason: "no data for variant a at pool=200",
		},
		{
			name:   "missing metric",
			why:    "the claim names a column the run does not have",
			check:  compareCheck("p99_ms", 1.5, 0),
			cells:  []Cell{cell("a", "rps", nil, steady), cell("b", "rps", nil, steady)},
			reason: `no data for metric "p99_ms"`,
		},
		{
			name:  "ambiguous group",
			why:   "two request groups (seed 000's background /cpu and measured /io) and the check names neither",
			check: compareCheck("p99_ms", 1.5, 0),
			cells: []Cell{{Variant: "a", Group: "cpu", Metric: "p99_ms", Values: steady},
				{Variant: "a", Group: "io", Metric: "p99_ms", Values: steady}},
			reason: "set check.group",
		},
		{
			name:   "not a check",
			why:    "no form of check at all",
			check:  Check{Metric: "rps"},
			cells:  []Cell{cell("a", "rps", nil, steady)},
			reason: "none of compare",
		},
		{
			name:   "zero median",
			why:    "error counts of 0 in b make a/b undefined: never an infinite ratio, and say how to restate it",
			check:  Check{Metric: "errors", Compare: []string{"a", "b"}, AtLeast: F(2)},
			cells:  []Cell{cell("a", "errors", nil, []float64{1, 2, 1, 0, 1, 2}), cell("b", "errors", nil, []float64{0, 0, 0, 0, 0, 0})},
			reason: "state the claim as an absolute check",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Evaluate("id", "says", tt.check, tt.cells, 1)
			if v.Status != Inconclusive || !strings.Contains(v.Reason, tt.reason) {
				t.Errorf("status %q reason %q, want inconclusive with %q (%s)", v.Status, v.Reason, tt.reason, tt.why)
			}
			if len(v.Evidence) == 0 {
				t.Errorf("no evidence (%s)", tt.why)
			}
		})
	}
}

// TestEvaluateIntersectionUnionAcrossPoints: a claim over several points is
// supported only when every point supports it, an intersection-union test
// whose size is that of its largest test, so the claimed side is not
// corrected (naming more points must not make a true claim harder to
// support); the opposite side, where one point contradicts the claim, is.
func TestEvaluateIntersectionUnionAcrossPoints(t *testing.T) {
	pools := []string{"50", "400", "200"} // unsorted on purpose
	var six, three, mixed []Cell
	for _, p := range pools {
		six = append(six, cell("a", "rps", at("pool", p), scale(steady, 2)), cell("b", "rps", at("pool", p), steady))
		three = append(three, cell("a", "rps", at("pool", p), scale(steady[:3], 2)), cell("b", "rps", at("pool", p), steady[:3]))
	}
	// 6+6 separated: raw one-sided p = 1/924 at each of 3 points, and the claim's p is the largest of them
	v := Evaluate("six", "a >= 1.5 b", compareCheck("rps", 1.5, 0), six, 1)
	if v.Status != Supported || !near(v.P, 1.0/924) || strings.Contains(v.Reason, "Holm") {
		t.Fatalf("status %q p %v, want supported with the largest raw p 1/924 and no Holm; reason %q", v.Status, v.P, v.Reason)
	}
	var order []string
	for _, p := range v.Points {
		order = append(order, p.Point)
	}
	if !slices.Equal(order, []string{"pool=50", "pool=200", "pool=400"}) {
		t.Errorf("points in order %v, want numeric sweep order", order)
	}
	// 3+3 separated: raw p = 1/20 = 0.05 <= 0.05 at each point: supported at every point, so
	// supported (Holm would have asked 3 x 0.05 = 0.15 and left it inconclusive)
	v = Evaluate("three", "a >= 1.5 b", compareCheck("rps", 1.5, 0), three, 1)
	if v.Status != Supported || !near(v.P, 0.05) {
		t.Errorf("status %q p %v reason %q, want supported at p 0.05 (intersection-union)", v.Status, v.P, v.Reason)
	}
	// One point where a is 2x b and two where a equals b: the claim fails at those two, and
	// their opposite tests (1.5 x b against a, separated: 1/924 each) are Holm-corrected over
	// the claim's 3 opposite tests: 3/924 for the smaller, still contradicted.
	for i, p := range pools {
		f := 1.0
		if i == 0 {
			f = 2
		}
		mixed = append(mixed, cell("a", "rps", at("pool", p), scale(steady, f)), cell("b", "rps", at("pool", p), steady))
	}
	v = Evaluate("mixed", "a >= 1.5 b", compareCheck("rps", 1.5, 0), mixed, 1)
	if v.Status != Contradicted || !near(v.P, 3.0/924) || !strings.Contains(v.Reason, "Holm") {
		t.Errorf("status %q p %v reason %q, want contradicted with Holm p 3/924 over the opposite tests", v.Status, v.P, v.Reason)
	}
}

func TestEvaluateWhereMatchesNumbers(t *testing.T) {
	// YAML may give 400 or 400.0; trials.csv may say 400
	check := Check{Metric: "rps", Compare: []string{"a", "b"}, AtLeast: F(1.5), Where: map[string][]string{"pool": {"400.0"}}}
	cells := []Cell{
		cell("a", "rps", at("pool", "400"), scale(steady, 2)), cell("b", "rps", at("pool", "400"), steady),
		cell("a", "rps", at("pool", "50"), steady), cell("b", "rps", at("pool", "50"), steady),
	}
	v := Evaluate("w", "s", check, cells, 1)
	if v.Status != Supported || len(v.Points) != 1 || v.Point != "pool=400" {
		t.Errorf("status %q points %+v, want supported at pool=400 only", v.Status, v.Points)
	}
}

func TestEvaluateFlat(t *testing.T) {
	flatCheck := Check{Metric: "rps", Variant: "platform", FlatOver: map[string][]string{"pool": {"200", "400", "800"}}}
	plateau := [][]float64{ // seed 001: platform flat at ~2100 rps
		{2100, 2110, 2090, 2105, 2095, 2100}, // median 2100
		{2120, 2110, 2090, 2105, 2095, 2100}, // median 2102.5
		{2080, 2110, 2090, 2105, 2095, 2100}, // median 2097.5
	}
	rising := [][]float64{ // seed 001: virtual rides the pool
		scale(steady, 20), scale(steady, 44), scale(steady, 83.7),
	}
	build := func(variant string, series [][]float64, extra map[string]string) []Cell {
		var cs []Cell
		for i, p := range []string{"200", "400", "800"} {
			pt := map[string]string{"pool": p}
			for k, v := range extra {
				pt[k] = v
			}
			cs = append(cs, cell(variant, "rps", pt, series[i]))
		}
		return cs
	}

	// All 3 pairs (fixed by the manifest, not picked from the data) by TOST against 1/1.1-1.1:
	// every pair's cells are within 1%, each one-sided test fully separated: p = 1/924, and
	// every pair must be equivalent (an intersection-union test), so no correction: 1/924.
	v := Evaluate("plateau", "flat", flatCheck, build("platform", plateau, nil), 1)
	if v.Status != Supported || len(v.Points) != 3 || !near(v.P, 1.0/924) || !(v.High <= 1.1 && v.Low >= 1/1.1) {
		t.Errorf("status %q points %d p %v CI %v-%v, want supported over 3 pairs; reason %q", v.Status, len(v.Points), v.P, v.Low, v.High, v.Reason)
	}

	// pool=400 vs 200: 44/20 = 2.2 above 1.1, 1.1 x pool=200 vs pool=400 fully separated: p = 1/924;
	// the 3 pairs x 2 sides make 6 opposite tests, Holm 6/924 for the smallest three
	up := flatCheck
	up.Variant = "virtual"
	v = Evaluate("rising", "flat", up, build("virtual", rising, nil), 1)
	if v.Status != Contradicted || v.Point != "pool=400 vs 200" || !near(v.Ratio, 2.2) || !near(v.P, 6.0/924) {
		t.Errorf("status %q at %q ratio %v p %v, want contradicted at pool=400 vs 200, 2.2, p 6/924; reason %q", v.Status, v.Point, v.Ratio, v.P, v.Reason)
	}

	// one slice per other sweep key: flat at users=100, rising at users=2000
	cells := append(build("platform", plateau, at("users", "100")), build("platform", rising, at("users", "2000"))...)
	v = Evaluate("sliced", "flat", flatCheck, cells, 1)
	if v.Status != Contradicted || !strings.HasPrefix(v.Point, "users=2000, ") || len(v.Points) != 6 {
		t.Errorf("status %q at %q with %d pairs, want contradicted at users=2000 of 6 pairs; reason %q", v.Status, v.Point, len(v.Points), v.Reason)
	}

	// a listed value that never ran
	v = Evaluate("gap", "flat", flatCheck, build("platform", plateau, nil)[:2], 1)
	if v.Status != Inconclusive || !strings.Contains(v.Reason, "no data for variant platform at pool=800") {
		t.Errorf("status %q reason %q, want inconclusive for the missing pool=800", v.Status, v.Reason)
	}

	// noisy and not flat enough to be sure: CV 29% in one cell
	noisy := [][]float64{plateau[0], {2100, 1400, 2900, 2000, 2300, 1700}, plateau[2]}
	v = Evaluate("noisy", "flat", flatCheck, build("platform", noisy, nil), 1)
	if v.Status != Inconclusive || !slices.Contains(v.Flags, "noisy-cv (platform, pool=400)") {
		t.Errorf("status %q flags %v, want inconclusive with noisy-cv at pool=400; reason %q", v.Status, v.Flags, v.Reason)
	}
}

func TestEvaluateDeterministic(t *testing.T) {
	noisy := []float64{160, 100, 220, 150, 170, 240}
	cells := []Cell{cell("a", "rps", nil, noisy), cell("b", "rps", nil, steady)}
	v1 := Evaluate("d", "s", compareCheck("rps", 1.2, 0), cells, 99)
	v2 := Evaluate("d", "s", compareCheck("rps", 1.2, 0), cells, 99)
	if !reflect.DeepEqual(v1, v2) {
		t.Errorf("same seed, different verdicts:\n%+v\n%+v", v1, v2)
	}
	if !strings.Contains(v1.Method, "seed 99") || !strings.Contains(v1.Method, "10000 resamples of the replicates") {
		t.Errorf("method %q does not record the seed and resamples", v1.Method)
	}
	// the interval must contain the point estimate for a sample this size
	if !(v1.Low <= v1.Ratio && v1.Ratio <= v1.High) {
		t.Errorf("interval [%v, %v] misses the ratio %v", v1.Low, v1.High, v1.Ratio)
	}
}
