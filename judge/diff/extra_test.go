package diff

import (
	"math"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/stats"
)

func TestGeomean(t *testing.T) {
	tab := Table{Rows: []Row{
		{Cmp: &stats.Comparison{MedianA: 100, MedianB: 120}}, // ratio 1.2
		{Cmp: &stats.Comparison{MedianA: 200, MedianB: 150}}, // ratio 0.75
		{Cmp: &stats.Comparison{MedianA: 0, MedianB: 3}},     // no logarithm: left out
		{}, // one run only: left out
	}}
	g := geomean(tab)
	// sqrt(1.2 * 0.75) = sqrt(0.9) = 0.948683 -> -5.1%
	if g.Cells != 2 || math.Abs(g.Ratio-math.Sqrt(0.9)) > 1e-12 || g.String() != "-5.1%" {
		t.Errorf("geomean = %+v (%s), want 2 cells, ratio sqrt(0.9), -5.1%%", g, g)
	}
	if g := geomean(Table{}); g.String() != "–" {
		t.Errorf("empty table geomean = %s, want –", g)
	}
}

func TestDeltaCI(t *testing.T) {
	// The bootstrap interval of new/old, 0.9–1.47, as a change: −10% to +47%.
	r := Row{RatioLow: 0.9, RatioHigh: 1.467}
	if got := deltaCI(r); got != "-10% to +47%" {
		t.Errorf("deltaCI = %s, want -10%% to +47%%", got)
	}
	r.RatioLow = math.NaN()
	if got := deltaCI(r); got != "–" {
		t.Errorf("deltaCI without an interval = %s, want –", got)
	}
}

func TestHTMLChangedVerdictAndEscaping(t *testing.T) {
	res := diffRuns(t, "base", "slower", Options{})
	res.Verdicts[1].Says = `<script>alert(1)</script>`
	var b strings.Builder
	if err := res.HTML(&b, Links{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`<tr class="changed">`, "<strong>inconclusive</strong> (changed)", `<tr class="geomean">`, "&lt;script&gt;alert(1)&lt;/script&gt;", "Fingerprints side by side"} {
		if !strings.Contains(page, want) {
			t.Errorf("comparison page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>alert(1)") {
		t.Error("claim text reached the page unescaped")
	}
}
