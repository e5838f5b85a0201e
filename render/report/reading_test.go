package report

import (
	"html"
	"io/fs"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// TestBHAdjust checks Benjamini-Hochberg against hand-computed values.
func TestBHAdjust(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		why      string
		ps, want []float64
	}{
		// sorted 0.005, 0.01, 0.03, 0.04 (m = 4): ×4/1 = 0.02, ×4/2 = 0.02,
		// ×4/3 = 0.04, ×4/4 = 0.04; already monotone.
		{"four p-values, unsorted", []float64{0.01, 0.04, 0.03, 0.005}, []float64{0.02, 0.04, 0.04, 0.02}},
		// 0.01×5 = 0.05, 0.02×5/2 = 0.05, 0.03×5/3 = 0.05, 0.04×5/4 = 0.05,
		// 0.2×5/5 = 0.2.
		{"a ladder that ties at 0.05", []float64{0.01, 0.02, 0.03, 0.04, 0.2}, []float64{0.05, 0.05, 0.05, 0.05, 0.2}},
		// m = 2 without the NaN: 0.02×2/1 = 0.04, 0.5×2/2 = 0.5.
		{"NaN is not a test and not counted in m", []float64{0.5, nan, 0.02}, []float64{0.5, nan, 0.04}},
		// 0.04×2/1 = 0.08 > 0.05×2/2 = 0.05: step-up takes the minimum
		// from the top, so both are 0.05.
		{"step-up: a later smaller value caps an earlier one", []float64{0.04, 0.05}, []float64{0.05, 0.05}},
		{"capped at 1", []float64{0.9, 0.8}, []float64{0.9, 0.9}},
	} {
		got := bhAdjust(c.ps)
		for i := range got {
			if math.IsNaN(c.want[i]) != math.IsNaN(got[i]) || (!math.IsNaN(got[i]) && math.Abs(got[i]-c.want[i]) > 1e-12) {
				t.Errorf("%s: bhAdjust(%v) = %v, want %v", c.why, c.ps, got, c.want)
				break
			}
		}
	}
}

// TestMultiplicity states which decided claims survive BH at 5%.
func TestMultiplicity(t *testing.T) {
	// Tested: a 0.01, b 0.04, c 0.03, d 0.3 (m = 4). Sorted: 0.01×4 =
	// 0.04, 0.03×4/2 = 0.06, 0.04×4/3 = 0.0533, 0.3; step-up: a 0.04,
	// c 0.0533, b 0.0533, d 0.3. Decided: a, b (supported), c
	// (contradicted); only a survives. e has no p (not applicable).
	xs := []record.Verdict{
		{ID: "a", Status: stats.Supported, P: 0.01},
		{ID: "b", Status: stats.Supported, P: 0.04},
		{ID: "c", Status: stats.Contradicted, P: 0.03},
		{ID: "d", Status: stats.Inconclusive, P: 0.3},
		{ID: "e", Status: stats.NotApplicable},
	}
	f := multiplicity(xs, 0.05)
	if f.Tested != 4 || f.Decided != 3 || f.Untested != 1 || !slices.Equal(f.Survive, []string{"a"}) || !slices.Equal(f.Fall, []string{"b", "c"}) {
		t.Fatalf("multiplicity = %+v", f)
	}
	want := "Across the 4 claims with a p-value here, Benjamini-Hochberg at a 5% false-discovery rate keeps 1 of the 3 decided; it would not keep b, c. 1 claim without a p-value (not applicable, or decided by a count with no test) is not in it."
	if got := f.String(); got != want {
		t.Errorf("statement:\n got %s\nwant %s", got, want)
	}
}

// TestSentences checks the sentence counter the answer tests rely on.
func TestSentences(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
		why  string
	}{
		{"Virtual threads won, 2.54× (90% CI 2.39–2.72).", 1, "decimals do not end a sentence"},
		{"On this host webflux had 347 ms. Of its 10 claims, 8 held.", 2, "two sentences"},
		{"A. B. C.", 3, "three"},
		{"p = 0.004 and 1.08× here", 0, "no full stop at all"},
		{"One sentence. 8 held.", 2, "a sentence may start with a digit"},
	} {
		if got := sentences(c.s); got != c.want {
			t.Errorf("%s: sentences(%q) = %d, want %d", c.why, c.s, got, c.want)
		}
	}
}

// TestAnswersAreShort: the index and every run page open with an answer
// of at most two sentences.
func TestAnswersAreShort(t *testing.T) {
	out := renderFixture(t)
	answerRE := regexp.MustCompile(`(?s)<div class="answer" id="answer">(.*?)</div>`)
	tags := regexp.MustCompile(`<[^>]+>`)
	pages := 0
	err := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "index.html" {
			return err
		}
		rel, _ := filepath.Rel(out, path)
		b := readFile(t, out, rel)
		m := answerRE.FindStringSubmatch(b)
		if m == nil {
			t.Errorf("%s opens with no answer", rel)
			return nil
		}
		pages++
		text := html.UnescapeString(tags.ReplaceAllString(m[1], ""))
		text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "Answer."))
		if n := sentences(text); n < 1 || n > 2 {
			t.Errorf("%s: the answer has %d sentences, want 1 or 2: %s", rel, n, text)
		}
		if strings.Index(b, `id="answer"`) > strings.Index(b, `<ul class="toc">`) {
			t.Errorf("%s: the answer comes after the table of contents", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pages < len(fixtureRuns)+1 {
		t.Errorf("checked %d pages, want the index and %d run pages", pages, len(fixtureRuns))
	}
}

// TestReadClaimComparablePoint: the seed's figure is read beside our
// figure at the unit the manifest names as comparable, not only the
// weakest one (pool-sweep: 2.01 at pool 20, 3.98 at pool 40 against the
// seed's 3.99).
func TestReadClaimComparablePoint(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	x := record.Verdict{ID: "virtual-rides-the-pool", Status: stats.Supported, Point: "pool=20", Ratio: 2.01, Low: 2.00, High: 2.01, Level: 0.05,
		Points: []record.Point{{Point: "pool=20", Ratio: f(2.01), Low: f(2.00), High: f(2.01)}, {Point: "pool=40", Ratio: f(3.98), Low: f(3.90), High: f(4.05)}}}
	c := &stats.Check{Metric: "rps", Compare: []string{"virtual", "platform"}, AtLeast: stats.F(1.5)}
	r := readClaim(x, c, seedFigure{Value: 3.99, From: "001", Point: "pool=40"})
	if want := "seed 3.99; ours at the comparable point pool=40: 3.98× (90% CI 3.90–4.05)"; r.Seed != want {
		t.Errorf("seed = %q, want %q", r.Seed, want)
	}
	if want := "ratio 2.01× (90% CI 2.00–2.01) at pool=20"; r.Size != want {
		t.Errorf("size = %q, want %q", r.Size, want)
	}
	// A value, not a ratio, with its unit.
	abs := record.Verdict{Status: stats.Supported, Ratio: 955, Low: 937, High: 968, Level: 0.05}
	if got := readClaim(abs, &stats.Check{Metric: "wall_ms", Variant: "platform", AtLeast: stats.F(900)}, seedFigure{}).Size; got != "value 955 ms (90% CI 937–968)" {
		t.Errorf("absolute size = %q", got)
	}
}

// TestReadClaimAbsoluteTest: a claim on one variant's value shows its
// one-sample test and p beside the value, so a "not settled" value that
// sits exactly on the bound says why (io-bound 20261201T211300Z: 4
// threads on 4 forks, sign test p = 0.062).
func TestReadClaimAbsoluteTest(t *testing.T) {
	c := &stats.Check{Metric: "distinct_threads", Variant: "webflux", AtMost: stats.F(4)}
	for _, tc := range []struct {
		why  string
		x    record.Verdict
		want string
	}{
		{"sign test, not significant on 4 forks",
			record.Verdict{Status: stats.Inconclusive, Ratio: 4, Low: 4, High: 4, P: 0.0625, Level: 0.05,
				Reason: "at the only point: the median of webflux distinct_threads = 4 (90% CI 4–4): one-sided sign test p=0.062 for ≤ 4 is not ≤ 0.05"},
			"value 4.00 (90% CI 4.00–4.00: the forks agree to the digits shown), one-sided sign test p = 0.062"},
		{"signed-rank test named by the reason",
			record.Verdict{Status: stats.Supported, Ratio: 3, Low: 3, High: 3.5, P: 0.031, Level: 0.05,
				Reason: "supported: ... one-sided Wilcoxon signed-rank test on the log scale p=0.031"},
			"value 3.00 (90% CI 3.00–3.50), one-sided Wilcoxon signed-rank test p = 0.031"},
		{"no p recorded (an older run): the value alone",
			record.Verdict{Status: stats.Supported, Ratio: 4, Low: 4, High: 4, Level: 0.05, Reason: "one-sided sign test"},
			"value 4.00 (90% CI 4.00–4.00: the forks agree to the digits shown)"},
		{"a p but no test named: nothing guessed",
			record.Verdict{Status: stats.Supported, Ratio: 4, Low: 4, High: 4, P: 0.03, Level: 0.05, Reason: "supported"},
			"value 4.00 (90% CI 4.00–4.00: the forks agree to the digits shown)"},
	} {
		if got := readClaim(tc.x, c, seedFigure{}).Size; got != tc.want {
			t.Errorf("%s: size = %q, want %q", tc.why, got, tc.want)
		}
	}
}

// TestThenAdvice: "then" shows only where the pick stands, marked as
// measured only when the claims named to test it all held.
func TestThenAdvice(t *testing.T) {
	held := reading{Outcome: stats.OutcomeSupported}
	vs := []record.Verdict{{ID: "t1", Status: stats.Supported, Outcome: stats.OutcomeSupported},
		{ID: "t2", Status: stats.Contradicted, Outcome: stats.OutcomeReversed}}
	for _, c := range []struct {
		why        string
		d          record.Decision
		rd         reading
		show, test bool
		note       string
	}{
		{"untested advice is the seed's", record.Decision{Then: "use boundedElastic."}, held, true, false, "the seed's advice, not tested here"},
		{"a tested advice that held", record.Decision{Then: "x", TestedBy: []string{"t1"}}, held, true, true, "measured here (t1)"},
		{"a tested advice that did not hold is hidden", record.Decision{Then: "x", TestedBy: []string{"t1", "t2"}}, held, false, false, "tested here and not borne out (t2 reversed)"},
		{"no advice on an inconclusive row", record.Decision{Then: "x"}, reading{Outcome: stats.OutcomeInconclusive}, false, false, "the seed's advice, not tested here"},
		{"a smaller effect keeps the pick and its advice", record.Decision{Then: "x"}, reading{Outcome: stats.OutcomeSmaller}, true, false, "the seed's advice, not tested here"},
	} {
		got := thenOf(&c.d, c.rd, vs, nil, nil)
		if got.Show != c.show || got.Tested != c.test || got.Note != c.note {
			t.Errorf("%s: %+v", c.why, got)
		}
	}
}

// TestSummaryIntervalAndUnits: cells with too few forks for the
// order-statistic interval get the verdicts' 90% bootstrap interval,
// labelled, instead of "–" and a few-trials-ci flag on every row; the
// per-second steal chart is in % of one core (as telemetry samples it:
// steal ticks / USER_HZ / seconds × 100) and heap in MiB (bytes / 2^20).
func TestSummaryIntervalAndUnits(t *testing.T) {
	out := renderFixture(t)
	page := readFile(t, out, "io-bound/"+ioRun+"/index.html")
	for _, want := range []string{"973–1022 (90%)", "host CPU steal (% of one core)", "heap used (MiB)"} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	for _, bad := range []string{"host CPU steal (% of all CPUs)", "heap used (MB)", `<span class="flag">few-trials-ci</span>`} {
		if strings.Contains(page, bad) {
			t.Errorf("run page still has %q", bad)
		}
	}
}

// TestPickHeadline: an experiment headlines its newest complete
// single-host run unless its manifest names another; multi-host runs do
// not take the headline by default.
func TestPickHeadline(t *testing.T) {
	single := func(id string) headlineRun { return headlineRun{id: id, complete: true, verdicts: true} }
	multi := func(id string) headlineRun {
		return headlineRun{id: id, complete: true, verdicts: true, multiHost: true}
	}
	for _, c := range []struct {
		why  string
		runs []headlineRun
		want int
	}{
		{"io-bound: the newest is a namespace multi-host run, the single-host one headlines",
			[]headlineRun{single("a"), single("b"), multi("c")}, 1},
		{"the newest single-host run", []headlineRun{single("a"), single("b")}, 1},
		{"only multi-host runs: the newest complete one", []headlineRun{multi("a"), multi("b")}, 1},
		{"an interrupted single-host run does not beat a complete one",
			[]headlineRun{single("a"), {id: "b", verdicts: true}}, 0},
		{"the newest manifest names the headline", []headlineRun{single("a"), multi("b"), {id: "c", complete: true, verdicts: true, named: "b"}}, 1},
		{"a named run without verdicts is not taken", []headlineRun{single("a"), {id: "b"}, {id: "c", complete: true, verdicts: true, named: "b"}}, 2},
		{"no verdicts anywhere", []headlineRun{{id: "a", complete: true}}, -1},
	} {
		if got := pickHeadline(c.runs); got != c.want {
			t.Errorf("%s: pickHeadline = %d, want %d", c.why, got, c.want)
		}
	}
}

// TestNotSteadyClaimSaysWhy: a claim left open because its forks never
// settled says so in its line, not "neither ahead", which reads as a tie
// that was tested.
func TestNotSteadyClaimSaysWhy(t *testing.T) {
	x := record.Verdict{ID: "c", Says: "A beats B.", Status: stats.Inconclusive,
		Reason: "not in steady state: a: 5 of 5 fork(s) never reached a steady state (fork 1, 2, 3, 4, 5), 0 steady left, fewer than 3."}
	r := reading{Outcome: stats.OutcomeInconclusive, Direction: "neither a nor b significantly ahead (…)", Threshold: "a/b ≥ 1.10"}
	got := claimText(x, r)
	for _, want := range []string{"Not settled: whether a beats B", "not in steady state: a: 5 of 5 fork(s) never reached", "claim a/b ≥ 1.10"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "significantly ahead") {
		t.Errorf("%q reads as a tested tie", got)
	}
	x.Reason = "at the only point: …"
	if got := claimText(x, r); !strings.Contains(got, "significantly ahead") {
		t.Errorf("an open claim with its forks steady lost its direction text: %q", got)
	}
}

// TestCIText: an interval whose ends print alike says that the forks
// agree, so "0.333–0.333" does not read as a rendering bug; any other
// interval is printed as it is.
func TestCIText(t *testing.T) {
	x := record.Verdict{Level: 0.05}
	for _, tt := range []struct {
		low, high float64
		want, why string
	}{
		{1.0, 1.15, "90% CI 1.00–1.15", "a spread interval: its two ends"},
		{0.3333, 0.3334, "90% CI 0.333–0.333: the forks agree to the digits shown", "ends alike once printed: said, not left for a bug"},
		{0, 0, "90% CI 0–0: the forks agree to the digits shown", "every fork 0"},
	} {
		if got := ciText(x, tt.low, tt.high); got != tt.want {
			t.Errorf("ciText(%v, %v) = %q, want %q (%s)", tt.low, tt.high, got, tt.want, tt.why)
		}
	}
}
