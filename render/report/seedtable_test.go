package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments/seeds"
	"github.com/threadlab/threadlab/store/record"
)

// burstRun is a connection-burst run built in memory: seed 002's four
// approaches at two of our points, with summary medians per metric.
func burstRun() *record.Run {
	variants := []string{"platform-tomcat", "loom-tomcat", "webflux-netty", "loom-netty"}
	r := &record.Run{Meta: record.Meta{ID: "20261201T090000Z-b002", Experiment: "connection-burst", State: "complete",
		Variants: variants, Groups: []string{"main"}, Measured: "main", SweepKeys: []string{"users"}, Primary: "rps", Host: "tl-vm-2"},
		Fingerprint: []byte(`{}`)}
	for vi, v := range variants {
		for _, users := range []int{500, 2000} {
			p := fmt.Sprintf("users=%d", users)
			for f := 1; f <= 5; f++ {
				r.Trials = append(r.Trials, record.Trial{Variant: v, Point: p, Group: "main", Trial: f, Fork: f, Iteration: 1, Valid: true})
			}
			for _, m := range []struct {
				name string
				x    float64
			}{{"ok_rps", float64(users) * 0.95}, {"error_pct", float64(vi) * 10}, {"p50_ms", 101 + float64(vi)}, {"target_cpu_pct", 40 + float64(users)/100},
				{"peak_heap_mb", 120}, {"gc_pause_ms", 15}, {"rps", float64(users)}} {
				r.Summary = append(r.Summary, record.Summary{Variant: v, Point: p, Group: "main", Metric: m.name, N: 5, Median: m.x})
			}
		}
	}
	return r
}

// TestSeedTableBesideOurs: issue 12's "the report shows the seed's table
// beside ours": for connection-burst, each approach gets seed 002's rows
// (one per scenario) and then our medians at each point, with the scale
// difference stated, in the page and in report.md.
func TestSeedTableBesideOurs(t *testing.T) {
	r := burstRun()
	v, err := newRunView(r, "../../assets/", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.SeedTables) != 1 || v.SeedTables[0].Seed != "002" {
		t.Fatalf("seed tables: %+v, want seed 002's", v.SeedTables)
	}
	tb := v.SeedTables[0]
	col := func(metric string) int {
		for i, c := range tb.Cols {
			if c.Metric == metric {
				return i
			}
		}
		t.Fatalf("no column %s in %+v", metric, tb.Cols)
		return -1
	}
	figs, _ := seeds.TableFor("connection-burst")
	type want struct {
		variant, source, load, metric, value, reason string
	}
	var rowsOf = func(variant string) []seedTableRow {
		var out []seedTableRow
		in := false
		for _, r := range tb.Rows {
			if r.Variant != "" {
				in = r.Variant == variant
			}
			if in {
				out = append(out, r)
			}
		}
		return out
	}
	for _, w := range []want{
		{"loom-netty", "seed 002", "60k-vus-and-rps-get-movies (60,000 users)", "p50_ms", "100", "the seed's 60k table, as given"},
		{"webflux-netty", "seed 002", "60k-vus-and-rps-get-movies (60,000 users)", "ok_rps", "42071", "7,572,752 requests over 180 s as a rate"},
		{"loom-tomcat", "seed 002", "20k-vus-and-rps-get-movies (20,000 users)", "error_pct", ">99.9", "the cliff, with the seed's own bound"},
		{"loom-tomcat", "ours", "users=2000 (median of 5)", "error_pct", "10.0", "our median at the larger point"},
		{"loom-netty", "ours", "users=500 (median of 5)", "p50_ms", "104", "our median at the smaller point"},
		{"platform-tomcat", "seed 002", "not in the write-up's table", "p50_ms", "", "the seed ran no platform threads in these scenarios"},
		{"platform-tomcat", "ours", "users=2000 (median of 5)", "ok_rps", "1900", "ours even without a seed row"},
	} {
		found := false
		for _, r := range rowsOf(w.variant) {
			if r.Source == w.source && r.Load == w.load {
				found = true
				if got := r.Cells[col(w.metric)].Value; got != w.value {
					t.Errorf("%s %s %s %s = %q, want %q (%s)", w.variant, w.source, w.load, w.metric, got, w.value, w.reason)
				}
			}
		}
		if !found {
			t.Errorf("no row %s / %s / %s (%s): %+v", w.variant, w.source, w.load, w.reason, rowsOf(w.variant))
		}
	}
	// Seed rows come first, then ours, per approach in the run's order.
	lt := rowsOf("loom-tomcat")
	if len(lt) != 6 || lt[0].Ours || !lt[4].Ours || !lt[5].Ours {
		t.Errorf("loom-tomcat rows: %+v, want the seed's 4 scenarios then our 2 points", lt)
	}
	if tb.Rows[0].Variant != "platform-tomcat" {
		t.Errorf("first variant %q, want the run's order", tb.Rows[0].Variant)
	}
	for _, s := range []string{"seed 002 ran 10,000–60,000 users on an Intel Core i5-14600K, 14 cores", "This run ran users=500, users=2000 on tl-vm-2", "not absolute values"} {
		if !strings.Contains(tb.Scale, s) {
			t.Errorf("scale does not say %q: %s", s, tb.Scale)
		}
	}
	if len(tb.Sources) == 0 || len(tb.Sources) >= len(figs) {
		t.Errorf("%d sources for %d figures: want each passage once", len(tb.Sources), len(figs))
	}

	out := t.TempDir()
	page, err := Run(r, out)
	if err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile(page)
	md, _ := os.ReadFile(filepath.Join(filepath.Dir(page), MarkdownFile))
	for _, c := range []struct{ doc, want, reason string }{
		{string(html), `<section id="seed-table-002">`, "the section, linked from the contents"},
		{string(html), `href="#seed-table-002"`, "the contents link"},
		{string(html), `<td class="n">&gt;99.9<br><span class="muted">connection refused</span></td>`, "a seed cell with its note, escaped"},
		{string(html), `<tr class="ours"><td></td><td><strong>ours</strong></td><td>users=500 (median of 5)</td>`, "our rows marked"},
		{string(md), "## Seed 002's figures beside ours", "report.md has it too"},
		{string(md), "| loom-netty | seed 002 | 10k-vus-and-rps-get-movies (10,000 users) |", "a seed row in Markdown"},
		{string(md), "|  | **ours** | users=2000 (median of 5) |", "our row in Markdown"},
	} {
		if !strings.Contains(c.doc, c.want) {
			t.Errorf("%s: missing %q", c.reason, c.want)
		}
	}
}

// TestNoSeedTable: an experiment without figures in tables.csv shows no
// table (and no empty section).
func TestNoSeedTable(t *testing.T) {
	r := burstRun()
	r.Meta.Experiment = "no-such-experiment"
	v, err := newRunView(r, "../../assets/", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.SeedTables) != 0 || strings.Contains(string(v.markdown()), "figures beside ours") {
		t.Errorf("seed tables for an experiment without figures: %+v", v.SeedTables)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 600: "600", 1000: "1,000", 60000: "60,000", 1234567: "1,234,567"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestScaledNote: a claim's seed.scaled is written beside the seed's own
// figure, labelled, and only where the manifest gives one that differs.
func TestScaledNote(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	tests := []struct {
		seed seedFigure
		want string
		why  string
	}{
		{seedFigure{Value: 3.99, Scaled: f(2)}, ", scaled to this run's load: 2.00", "pool-sweep: the seed's 3.99 at pool 800 is 2 at our pool 20"},
		{seedFigure{Value: 1000, Scaled: f(600)}, ", scaled to this run's load: 600", "io-bound: 1,000 threads for 1,000 requests are 600 for our 600"},
		{seedFigure{Value: 1.83}, "", "no seed.scaled in the manifest: nothing to add"},
		{seedFigure{Value: 2, Scaled: f(2)}, "", "scaled equals the seed's figure: saying it twice adds nothing"},
	}
	for _, tt := range tests {
		if got := tt.seed.scaledNote(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.why, got, tt.want)
		}
	}
}

// TestSeedSize: the size reading compares our interval with the seed's
// figure at this run's scale where the manifest scales it, and says so.
func TestSeedSize(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	ci := record.Verdict{Ratio: 2.1, Low: 1.9, High: 2.3}
	tests := []struct {
		seed seedFigure
		want string
		why  string
	}{
		{seedFigure{Value: 3.99, Scaled: f(2)}, "reproduced (against the scaled figure)", "pool-sweep: 3.99 at pool 800 would read 'smaller here'; the scaled 2 lies in 1.9-2.3"},
		{seedFigure{Value: 3.99}, "smaller here", "no seed.scaled: the seed's own figure, above our interval"},
		{seedFigure{Value: 1.5, Scaled: f(1.5)}, "larger here", "scaled equals the seed's figure: no note"},
		{seedFigure{Value: 3.99, Scaled: f(1.2)}, "larger here (against the scaled figure)", "scaled figure below our interval"},
		{seedFigure{Value: 3.99, Scaled: f(2)}.withNaN(), "", "no figure: no reading"},
	}
	for _, tt := range tests {
		if got := tt.seed.size(ci); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.why, got, tt.want)
		}
	}
	// Ties: the claim's band decides whether the size reproduced before the
	// digits do.
	band := &[2]float64{0.9, 1.1}
	flat := record.Verdict{Ratio: 1.004, Low: 1.004, High: 1.005}
	ties := []struct {
		seed seedFigure
		x    record.Verdict
		want string
		why  string
	}{
		{seedFigure{Value: 1, Band: band}, flat, "reproduced (both inside the claim's band 0.90–1.10)", "a tie: seed 1 and 1.004–1.005 both inside ±10%"},
		{seedFigure{Value: 1}, flat, "larger here", "no band (a one-sided claim): the digits decide, as before"},
		{seedFigure{Value: 1, Band: band}, record.Verdict{Ratio: 1.08, Low: 1.02, High: 1.15}, "larger here", "our interval reaches past the band: not shown as reproduced"},
		{seedFigure{Value: 1.3, Band: band}, flat, "smaller here", "the seed's own figure lies outside the band: the digits decide"},
		{seedFigure{Value: 3.99, Scaled: f(1), Band: band}, flat, "reproduced (both inside the claim's band 0.90–1.10) (against the scaled figure)", "the scaled figure is the one read against the band, and the reading says so"},
		{seedFigure{Value: 1, Band: band}.withNaN(), flat, "", "no figure: no reading, band or not"},
		{seedFigure{Value: 1, Band: &[2]float64{1 / 1.1, 1.1}}, flat, "reproduced (both inside the claim's band 0.91–1.10)", "flat_over's band (stats.Check.Band), as call-depth's loom-netty-median-is-the-delay has it"},
	}
	for _, tt := range ties {
		if got := tt.seed.size(tt.x); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.why, got, tt.want)
		}
	}
	if got := (seedFigure{Value: 2}).size(record.Verdict{}); got != "" {
		t.Errorf("a verdict without an interval has no size reading, got %q", got)
	}
}

func (s seedFigure) withNaN() seedFigure {
	nan := math.NaN()
	s.Value, s.Scaled = nan, &nan
	return s
}
