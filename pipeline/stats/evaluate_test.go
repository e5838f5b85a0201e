package stats

import (
	"encoding/json"
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
			why:   "ratio 1 sits on the threshold, inside the ±1.4% noise band: a tie, leaning nowhere",
			check: compareCheck("wall_ms", 1, 0), status: Inconclusive, reason: "a tie",
		},
		{
			name:  "a at most b",
			why:   "the mirror claim is just as undecidable",
			check: compareCheck("wall_ms", 0, 1), status: Inconclusive, reason: "a tie",
		},
		{
			name: "within 10%",
			why: "an equivalence claim 0.9 <= a/b <= 1.1: the interval 0.98-1.02 sits inside, and a vs 0.9b and " +
				"a vs 1.1b are both fully separated (p = 2/924 = 0.0022)",
			check: compareCheck("wall_ms", 0.9, 1.1), status: Supported,
		},
		{
			name:  "a claimed gap that is not there",
			why:   "a/b >= 1.5 with a/b = 1: interval 0.98-1.02 below 1.5, a vs 1.5b fully separated (p = 0.0022)",
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
	// ratio of medians 200/100 = 2; a vs 1.5b: 196 > 153, fully separated, p = 2/924
	if v.Status != Supported {
		t.Fatalf("status %q, want supported; reason %q", v.Status, v.Reason)
	}
	if v.Ratio != 2 || !near(v.P, 2.0/924) {
		t.Errorf("ratio %v p %v, want 2 and 2/924 = 0.0021645", v.Ratio, v.P)
	}
	// The bootstrap interval can only use ratios of resampled medians:
	// the smallest is 196/102 = 1.922 and the largest 204/98 = 2.082.
	if !(v.Low > 1.5 && v.Low <= 2 && v.High >= 2 && v.Low >= 196.0/102 && v.High <= 204.0/98) {
		t.Errorf("interval [%v, %v], want inside [1.922, 2.082] around 2 and above 1.5", v.Low, v.High)
	}
	if !hasSubstring(v.Evidence, "a/b wall_ms = 2 (95% CI") || !hasSubstring(v.Evidence, "p=0.0022 (a vs 1.5×b)") {
		t.Errorf("evidence %q lacks the ratio, interval and test", v.Evidence)
	}

	v = Evaluate("not-slower", "a is no slower than b", compareCheck("wall_ms", 0, 1), cells, 42)
	if v.Status != Contradicted || !strings.Contains(v.Reason, "clearly outside ≤ 1") {
		t.Errorf("status %q reason %q, want contradicted: a/b = 2 is clearly outside ≤ 1", v.Status, v.Reason)
	}
}

// TestEvaluateNoise: a cell with CV around 30% is flagged and the claim is
// only directional, unless even the worst trials agree (seed 000: "1247 ms
// still beats platform threads' 1325 ms").
func TestEvaluateNoise(t *testing.T) {
	// mean 173.3, squares 12733.3, /5 = 2546.7, sd 50.5, CV 29.1%; median (160+170)/2 = 165
	noisy := []float64{160, 100, 220, 150, 170, 240}
	v := Evaluate("n", "a >= 1.2 b", compareCheck("rps", 1.2, 0),
		[]Cell{cell("a", "rps", nil, noisy), cell("b", "rps", nil, steady)}, 1)
	// ratio 165/100 = 1.65 leans supported; a vs 1.2b: 100 is below all six 1.2b values, the rest above:
	// U = 6, P(U <= 6) = (1+1+2+3+5+7+11)/924 = 30/924, two-sided 0.065 > 0.05 (benchmath's exact U
	// distribution gives 0.058 with its tie handling); worst trials 100/102 = 0.98 < 1.2
	if v.Status != Inconclusive || v.Leans != Supported {
		t.Fatalf("status %q leans %q, want inconclusive leaning supported; reason %q", v.Status, v.Leans, v.Reason)
	}
	if !slices.Contains(v.Flags, "noisy-cv (a)") || !strings.Contains(v.Reason, "directional only: noisy-cv (a)") {
		t.Errorf("flags %v reason %q: want noisy-cv (a) named as what makes it directional", v.Flags, v.Reason)
	}
	if !hasSubstring(v.Evidence, "noisy-cv: CV 29.1%") {
		t.Errorf("evidence %q lacks the CV", v.Evidence)
	}

	// mean 288.3, sd 77.0, CV 26.7%: noisy, but min a / max b = 200/102 = 1.96 >= 1.2
	solid := []float64{300, 200, 260, 400, 220, 350}
	v = Evaluate("s", "a >= 1.2 b", compareCheck("rps", 1.2, 0),
		[]Cell{cell("a", "rps", nil, solid), cell("b", "rps", nil, steady)}, 1)
	if v.Status != Supported || !slices.Contains(v.Flags, "noisy-cv (a)") {
		t.Errorf("status %q flags %v, want supported despite noisy-cv; reason %q", v.Status, v.Flags, v.Reason)
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
	// a/b = 300/100 = 3 and even the worst trials give 294/112 = 2.63 >= 2: the flag does not undo it
	if v.Status != Supported {
		t.Errorf("status %q, want supported (the worst trials agree); reason %q", v.Status, v.Reason)
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
			why:    "3+3 trials: even a tenfold gap cannot reach p < 0.05 (minimum 0.1)",
			check:  compareCheck("rps", 1.5, 0),
			cells:  []Cell{cell("a", "rps", nil, scale(steady[:3], 10)), cell("b", "rps", nil, steady[:3])},
			reason: "only 3 trials of a at the only point",
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
			why:    "b ran at pool=200 but a did not",
			check:  compareCheck("rps", 1.5, 0),
			cells:  []Cell{cell("a", "rps", pool("400"), steady), cell("b", "rps", pool("400"), steady), cell("b", "rps", pool("200"), steady)},
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
			why:    "neither compare nor flat_over",
			check:  Check{Metric: "rps"},
			cells:  []Cell{cell("a", "rps", nil, steady)},
			reason: "neither compare",
		},
		{
			name:   "zero median",
			why:    "error counts of 0 in b make a/b undefined",
			check:  Check{Metric: "errors", Compare: []string{"a", "b"}, AtMost: F(1)},
			cells:  []Cell{cell("a", "errors", nil, []float64{1, 2, 1, 0, 1, 2}), cell("b", "errors", nil, []float64{0, 0, 0, 0, 0, 0})},
			reason: "a median is 0",
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
			if _, err := json.Marshal(v); err != nil {
				t.Errorf("marshal: %v (%s)", err, tt.why)
			}
		})
	}
}

// TestEvaluateHolmAcrossPoints: a claim over several points pays for them.
func TestEvaluateHolmAcrossPoints(t *testing.T) {
	pools := []string{"50", "400", "200"} // unsorted on purpose
	var six, four []Cell
	for _, p := range pools {
		six = append(six, cell("a", "rps", at("pool", p), scale(steady, 2)), cell("b", "rps", at("pool", p), steady))
		four = append(four, cell("a", "rps", at("pool", p), scale(steady[:4], 2)), cell("b", "rps", at("pool", p), steady[:4]))
	}
	// 6+6 separated: raw p = 2/924 at each of 3 points; Holm 3 x 0.0021645 = 0.0064935 for all
	v := Evaluate("six", "a >= 1.5 b", compareCheck("rps", 1.5, 0), six, 1)
	if v.Status != Supported || !near(v.P, 3*2.0/924) {
		t.Fatalf("status %q p %v, want supported with Holm p 0.0065; reason %q", v.Status, v.P, v.Reason)
	}
	var order []string
	for _, p := range v.Points {
		order = append(order, p.Point)
	}
	if !slices.Equal(order, []string{"pool=50", "pool=200", "pool=400"}) {
		t.Errorf("points in order %v, want numeric sweep order", order)
	}
	// 4+4 separated: raw p = 2/70 = 0.0286 < 0.05 at each point, but Holm 3 x 0.0286 = 0.0857
	v = Evaluate("four", "a >= 1.5 b", compareCheck("rps", 1.5, 0), four, 1)
	if v.Status != Inconclusive || v.Leans != Supported || !strings.Contains(v.Reason, "Holm 0.086 over 3 points") {
		t.Errorf("status %q leans %q reason %q, want inconclusive leaning supported because of Holm", v.Status, v.Leans, v.Reason)
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

	// max/min = 2102.5/2097.5 = 1.00238; the interval's upper end stays far below 1.1
	v := Evaluate("plateau", "flat", flatCheck, build("platform", plateau, nil), 1)
	if v.Status != Supported || !near(v.Ratio, 2102.5/2097.5) || !(v.High <= 1.1) {
		t.Errorf("status %q ratio %v high %v, want supported at 1.00238; reason %q", v.Status, v.Ratio, v.High, v.Reason)
	}

	// max/min = 8370/2000 = 4.185; highest vs lowest fully separated, p = 2/924
	up := flatCheck
	up.Variant = "virtual"
	v = Evaluate("rising", "flat", up, build("virtual", rising, nil), 1)
	if v.Status != Contradicted || !near(v.Ratio, 83.7/20) || !near(v.P, 2.0/924) {
		t.Errorf("status %q ratio %v p %v, want contradicted at 4.185 with p 0.0022; reason %q", v.Status, v.Ratio, v.P, v.Reason)
	}

	// one slice per other sweep key: flat at users=100, rising at users=2000
	cells := append(build("platform", plateau, at("users", "100")), build("platform", rising, at("users", "2000"))...)
	v = Evaluate("sliced", "flat", flatCheck, cells, 1)
	if v.Status != Contradicted || v.Point != "users=2000" || len(v.Points) != 2 {
		t.Errorf("status %q at %q with %d slices, want contradicted at users=2000 of 2; reason %q", v.Status, v.Point, len(v.Points), v.Reason)
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
	if !strings.Contains(v1.Method, "seed 99") || !strings.Contains(v1.Method, "10000 resamples") {
		t.Errorf("method %q does not record the seed and resamples", v1.Method)
	}
	// the interval must contain the point estimate for a sample this size
	if !(v1.Low <= v1.Ratio && v1.Ratio <= v1.High) {
		t.Errorf("interval [%v, %v] misses the ratio %v", v1.Low, v1.High, v1.Ratio)
	}
}

func TestVerdictJSON(t *testing.T) {
	v := Evaluate("x", "s", compareCheck("rps", 1.5, 0), nil, 1) // no data: every number NaN
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	for _, want := range []string{`"ratio":null`, `"status":"inconclusive"`, `"reason":"no data for metric \"rps\" in this run"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Errorf("JSON does not read back: %v", err)
	}
}
