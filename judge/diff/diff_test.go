package diff

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

func readRun(t *testing.T, name string) *record.Run {
	t.Helper()
	r, err := record.Read(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func diffRuns(t *testing.T, old, new string, opt Options) *Result {
	t.Helper()
	res, err := Runs(readRun(t, old), readRun(t, new), opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestGolden pins the Markdown and text output of every fixture scenario.
// Inspect a change with git diff testdata/golden after go test -update.
func TestDiffGolden(t *testing.T) {
	cases := []struct {
		golden   string
		old, new string
		opt      Options
		why      string
	}{
		{"same.md", "base", "same", Options{}, "a rerun on the same host: every row ~, the minor fingerprint differences named"},
		{"same.txt", "base", "same", Options{}, "the terminal form of the same rerun"},
		{"slower.md", "base", "slower", Options{}, "a 20% regression, a noisy cell and an invalid trial, each with a footnote"},
		{"elsewhere.md", "base", "elsewhere", Options{}, "another CPU and JDK: the warning comes before any number"},
		{"elsewhere.txt", "base", "elsewhere", Options{}, "the terminal form of the fingerprint warning"},
		{"few.txt", "base", "few", Options{}, "a smoke run: few-trials-test footnotes, another profile and an interrupted run"},
		{"metric.txt", "base", "slower", Options{Metrics: []string{"p99_ms", "distinct_threads"}}, "--metric picks the tables"},
		{"slower.html", "base", "slower", Options{}, "the comparison page: a changed verdict, Δ with CI, geomean, fingerprints side by side"},
		{"elsewhere.html", "base", "elsewhere", Options{}, "the comparison page warns about another machine before any number"},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			res := diffRuns(t, c.old, c.new, c.opt)
			var got bytes.Buffer
			var err error
			switch {
			case strings.HasSuffix(c.golden, ".md"):
				err = res.Markdown(&got)
			case strings.HasSuffix(c.golden, ".html"):
				err = res.HTML(&got, Links{Up: "../../index.html", Old: "../" + res.Old.ID + "/index.html", New: "index.html"})
			default:
				err = res.Text(&got)
			}
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", c.golden)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%s: no golden file (run go test ./judge/diff -update): %v", c.why, err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s: output differs from %s (inspect, then run go test ./judge/diff -update):\n%s", c.why, path, got.String())
			}
		})
	}
}

// row finds a row of a metric's table.
func row(t *testing.T, res *Result, metric, variant, point string) Row {
	t.Helper()
	for _, tb := range res.Tables {
		if tb.Metric != metric {
			continue
		}
		for _, r := range tb.Rows {
			if r.Variant == variant && r.Point == point {
				return r
			}
		}
	}
	t.Fatalf("no %s row for %s %s", metric, variant, point)
	return Row{}
}

// TestVerdicts checks the decisions behind the tables against what the
// fixture was built to contain.
func TestDiffVerdicts(t *testing.T) {
	same := diffRuns(t, "base", "same", Options{})
	for _, tb := range same.Tables {
		for _, r := range tb.Rows {
			if r.Cmp == nil || r.Cmp.Verdict != "~" {
				t.Errorf("base vs same, %s %s %s: %+v; the same ±1%% jitter in another order must be ~", tb.Metric, r.Variant, r.Point, r.Cmp)
			}
		}
	}
	if got := same.Regressions(); len(got) != 0 {
		t.Errorf("base vs same: regressions %v, want none", got)
	}

	slower := diffRuns(t, "base", "slower", Options{})
	// virtual at 600: wall 1042 -> 1250 ms is +20%; six trials against six
	// that do not overlap give the smallest two-sided p, 2/C(12,6) = 2/924
	// = 0.00216, times 4 rows for Holm's first step = 0.0087.
	v := row(t, slower, "wall_ms", "virtual", "burst=600")
	if v.Cmp == nil || !v.Cmp.Significant || math.Abs(v.Cmp.P-2.0/924) > 1e-9 || math.Abs(v.Cmp.PAdj-8.0/924) > 1e-9 {
		t.Errorf("virtual burst=600 wall_ms: %+v; want significant with p = 2/924 and Holm p = 8/924", v.Cmp)
	}
	if v.Cmp != nil && math.Abs(v.Cmp.Delta-(1250.0/1042-1)) > 0.01 {
		t.Errorf("virtual burst=600 wall_ms: Δ %.3f, want about %.3f", v.Cmp.Delta, 1250.0/1042-1)
	}
	// The same cells in rps: throughput fell, which is also a regression,
	// and it is the only one per metric.
	var regs []string
	for _, g := range slower.Regressions() {
		regs = append(regs, g.Metric+" "+cellName(g.Row))
	}
	want := []string{"wall_ms virtual burst=600 group main", "rps virtual burst=600 group main",
		"p50_ms virtual burst=600 group main", "p99_ms virtual burst=600 group main"}
	if !slices.Equal(regs, want) {
		t.Errorf("regressions %q, want %q", regs, want)
	}
	// The spiked platform cell at 300 is flagged on the new side only; the
	// invalid trial at 600 is left out and counted.
	p := row(t, slower, "wall_ms", "platform", "burst=300")
	if codes := stats.Codes(p.NewFlags); !slices.Contains(codes, stats.FlagOutlierTrial) || len(p.OldFlags) != 0 {
		t.Errorf("platform burst=300: old flags %v, new flags %v; want outlier-trial on the new side only", p.OldFlags, codes)
	}
	q := row(t, slower, "wall_ms", "platform", "burst=600")
	if q.New.N != 5 || len(q.NewInvalid) != 1 || slower.New.Invalid != 1 {
		t.Errorf("platform burst=600: %d new trials, invalid %q, run invalid %d; want 5 kept and 1 left out", q.New.N, q.NewInvalid, slower.New.Invalid)
	}
}

// TestRegressionDirection: a change is a regression only in the bad
// direction of its metric, whichever run is old.
func TestDiffRegressionDirection(t *testing.T) {
	// Swapping the runs turns the slow-down into a speed-up.
	back := diffRuns(t, "slower", "base", Options{})
	if g := back.Regressions(); len(g) != 0 {
		t.Errorf("slower -> base is an improvement, got regressions %v", g)
	}
	r := row(t, back, "rps", "virtual", "burst=600")
	if r.Cmp == nil || !r.Cmp.Significant || r.Cmp.Delta <= 0 || r.Regression(true) {
		t.Errorf("rps virtual burst=600 from slower to base: %+v; want a significant rise, not a regression", r.Cmp)
	}
}

// TestHolmFamily: each table is one family; its adjusted p-values are
// Holm's over the raw p-values of its rows, and no adjusted p is below
// its raw one.
func TestDiffHolmFamily(t *testing.T) {
	res := diffRuns(t, "base", "slower", Options{})
	for _, tb := range res.Tables {
		var raw, adj []float64
		for _, r := range tb.Rows {
			raw = append(raw, r.Cmp.P)
			adj = append(adj, r.Cmp.PAdj)
		}
		if tb.Family != len(tb.Rows) {
			t.Errorf("%s: family of %d, want all %d rows", tb.Metric, tb.Family, len(tb.Rows))
		}
		if want := stats.Holm(raw); !slices.Equal(adj, want) {
			t.Errorf("%s: adjusted p %v, want Holm(%v) = %v", tb.Metric, adj, raw, want)
		}
		for i := range raw {
			if adj[i] < raw[i] {
				t.Errorf("%s row %d: adjusted p %g below raw %g", tb.Metric, i, adj[i], raw[i])
			}
		}
	}
}

// TestWarningsComeFirst: whatever makes the numbers incomparable is said
// before the first number of the first table, in both formats.
func TestDiffWarningsComeFirst(t *testing.T) {
	noFP := readRun(t, "same")
	noFP.Fingerprint = nil
	cases := []struct {
		name     string
		old, new *record.Run
		say      string
		why      string
	}{
		{"other host", readRun(t, "base"), readRun(t, "elsewhere"), "different machines/software: cpu.model, cpu.vendor, cpu.flags_hash, jdk.version",
			"another CPU and JDK can explain any difference"},
		{"no fingerprint", readRun(t, "base"), noFP, "the new run has no fingerprint.json",
			"without a fingerprint nothing shows the host was the same"},
		{"other profile", readRun(t, "base"), readRun(t, "few"), "different profiles: old ran default, new ran smoke",
			"a smoke profile runs other trials and load"},
	}
	for _, c := range cases {
		res, err := Runs(c.old, c.new, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"markdown", "text"} {
			var b bytes.Buffer
			if format == "markdown" {
				res.Markdown(&b)
			} else {
				res.Text(&b)
			}
			out := b.String()
			warn := strings.Index(out, c.say)
			first := strings.Index(out, " ± ")
			if warn < 0 || first < 0 || warn > first {
				t.Errorf("%s, %s (%s): warning %q at %d, first number at %d; want the warning first:\n%s", c.name, format, c.why, c.say, warn, first, out)
			}
		}
	}
	res := diffRuns(t, "base", "same", Options{})
	if m := res.Mismatch(); len(m) != 0 || len(res.Fingerprint) != 1 || res.Fingerprint[0].Field != "threadlab.commit" {
		t.Errorf("base vs same: fingerprint differences %+v; want only the minor threadlab.commit", res.Fingerprint)
	}
}

func TestDiffRunsErrors(t *testing.T) {
	base := readRun(t, "base")
	empty := readRun(t, "same")
	empty.Trials = nil
	bad := readRun(t, "same")
	bad.Fingerprint = []byte("{not json")
	cases := []struct {
		name     string
		old, new *record.Run
		opt      Options
		want     string
		why      string
	}{
		{"unknown metric", base, base, Options{Metrics: []string{"latency"}}, `unknown metric "latency": use a numeric column of trials.csv (rps, requests, `,
			"a typo in --metric names the columns that exist"},
		{"identity column", base, base, Options{Metrics: []string{"seq"}}, `unknown metric "seq"`,
			"trial, seq and pid number trials; they measure nothing"},
		{"no trials", base, empty, Options{}, "new run testdata/runs/same has no trials in trials.csv",
			"a run that never ran a trial cannot be compared"},
		{"broken fingerprint", base, bad, Options{}, "testdata/runs/same/fingerprint.json: not a fingerprint",
			"a corrupt fingerprint names the file and how to fix it"},
	}
	for _, c := range cases {
		_, err := Runs(c.old, c.new, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s (%s): error %v, want one containing %q", c.name, c.why, err, c.want)
		}
	}
}

func TestDiffComparePoints(t *testing.T) {
	cases := []struct {
		x, y string
		want int
		why  string
	}{
		{"pool=50", "pool=100", -1, "numbers in numeric order, not string order"},
		{"pool=100", "pool=50", 1, "and the mirror"},
		{"", "pool=50", -1, "no sweep before any point"},
		{"pool=50;users=100", "pool=50;users=2000", -1, "the second key decides when the first ties"},
		{"mode=parallel", "mode=serial", -1, "words in string order"},
		{"pool=50", "pool=50", 0, "equal"},
	}
	for _, c := range cases {
		if got := comparePoints(c.x, c.y); sign(got) != c.want {
			t.Errorf("comparePoints(%q, %q) = %d, want %d (%s)", c.x, c.y, got, c.want, c.why)
		}
	}
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func TestDiffSummaryCell(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		s      stats.Summary
		lo, hi float64
		want   string
		why    string
	}{
		// median 100, interval [98, 102]: ± 2%.
		{stats.Summarize([]float64{100, 101, 99, 100, 102, 98}), 98, 102, "100 ± 2%", "the larger distance to the interval's ends, relative"},
		// median 1002.5, interval [1000, 1005]: 2.5/1002.5 = 0.25%.
		{stats.Summarize([]float64{1000, 1001, 1002, 1003, 1004, 1005}), 1000, 1005, "1002 ± 0.2%", "below 1% one decimal"},
		{stats.Summarize([]float64{10, 11, 12}), 10, 13, "11 ± 18%", "three forks have a bootstrap interval: (13-11)/11"},
		{stats.Summarize([]float64{10}), nan, nan, "10 ± ?", "no interval computed"},
		{stats.Summarize(nil), nan, nan, "—", "a cell missing from one run"},
	}
	for _, c := range cases {
		if got := summary(c.s, c.lo, c.hi); got != c.want {
			t.Errorf("summary(%+v) = %q, want %q (%s)", c.s, got, c.want, c.why)
		}
	}
}

func TestDiffManifestChanges(t *testing.T) {
	const m = "name: io-bound\ntrials: %d\nseed: %d\nload: {burst: %d}\n"
	cases := []struct {
		a, b string
		want []string
		why  string
	}{
		{fmt.Sprintf(m, 6, 1, 600), fmt.Sprintf(m, 6, 2, 600), nil,
			"a run records the seed it picked, so two runs of one manifest differ in it"},
		{fmt.Sprintf(m, 6, 1, 600), fmt.Sprintf(m, 10, 1, 300), []string{"load", "trials"},
			"the keys that changed, sorted"},
		{"name: x\nnotes: added\n", "name: x\n", []string{"notes"}, "a key on one side only"},
		{"name: x\n", "", nil, "a run without manifest.yaml says nothing about it"},
		{"[unbalanced", "name: x\n", []string{"(unparsable YAML)"}, "broken YAML still differs"},
	}
	for _, c := range cases {
		if got := manifestChanges([]byte(c.a), []byte(c.b)); !slices.Equal(got, c.want) {
			t.Errorf("manifestChanges: %q, want %q (%s)", got, c.want, c.why)
		}
	}
}

// TestDiffOneSided: a cell in one run only (a variant added, a sweep point
// dropped) gets a row saying so, outside Holm's family, and is never a
// regression.
func TestDiffOneSided(t *testing.T) {
	old, new := readRun(t, "base"), readRun(t, "same")
	old.Trials = slices.DeleteFunc(old.Trials, func(tr record.Trial) bool { return tr.Variant == "virtual" && tr.Point == "burst=600" })
	new.Trials = slices.DeleteFunc(new.Trials, func(tr record.Trial) bool { return tr.Variant == "platform" && tr.Point == "burst=300" })
	res, err := Runs(old, new, Options{Metrics: []string{"wall_ms"}})
	if err != nil {
		t.Fatal(err)
	}
	tb := res.Tables[0]
	if len(tb.Rows) != 4 || tb.Family != 2 {
		t.Fatalf("%d rows, family %d; want 4 rows, 2 of them compared", len(tb.Rows), tb.Family)
	}
	for _, c := range []struct {
		variant, point, delta string
	}{{"platform", "burst=300", "old only"}, {"virtual", "burst=600", "new only"}} {
		r := row(t, res, "wall_ms", c.variant, c.point)
		if r.Cmp != nil || delta(r) != c.delta || r.Regression(false) {
			t.Errorf("%s %s: comparison %+v, Δ %q; want no comparison and %q", c.variant, c.point, r.Cmp, delta(r), c.delta)
		}
	}
	var out bytes.Buffer
	if err := res.Markdown(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "| platform | burst=300 | 702.7 ± 0.8% | — | old only |") {
		t.Errorf("no row for the cell only the old run has:\n%s", out.String())
	}
}
