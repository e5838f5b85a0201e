package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/judge/across"
	"github.com/threadlab/threadlab/stats"
)

// TestAcrossBlock renders the across-runs table: every comparable run's
// estimate, the combined interval, the components, and the runs left out.
func TestAcrossBlock(t *testing.T) {
	res := &across.Result{
		Latest: "r2", Comparable: []string{"r1", "r2"},
		Excluded: []across.Excluded{{Run: "r0", Why: []string{`cpu.model "Xeon", not "EPYC"`, "topology one machine, not separate hosts [load target]"}}},
		Claims: []across.Claim{{ID: "virtual-beats-platform",
			Runs: []stats.RunEstimate{{Run: "r1", Estimate: 1.95, Low: 1.85, High: 2.17}, {Run: "r2", Estimate: 2.54, Low: math.NaN(), High: math.NaN()}},
			// τ = ln 1.2 → "±20.0%"; within NaN → "–"
			Across: stats.Across{Runs: 2, Estimate: 2.23, Low: 0.96, High: 5.15, BetweenSD: math.Log(1.2), WithinSD: math.NaN()}}},
	}
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, "across", page{runView: &runView{Across: newAcrossView(res)}}); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	for _, want := range []string{"<th>r1</th><th>r2</th>", "1.95 (1.85–2.17)", `<td class="n">2.54</td>`, "2.23 (0.96–5.15)",
		"±20.0%", "<li>r0: cpu.model &#34;Xeon&#34;, not &#34;EPYC&#34;; topology one machine"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if newAcrossView(&across.Result{Latest: "r1", Comparable: []string{"r1"}}) != nil {
		t.Error("one run and nothing excluded: want no table")
	}
}
