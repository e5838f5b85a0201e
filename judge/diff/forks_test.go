package diff

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// forkRun builds a run of one cell with forks x iterations, the wall time
// of fork f, iteration i being base + f + i/10 (so iterations differ from
// forks only slightly: counting them as samples would inflate n to 15).
func forkRun(t *testing.T, id string, base float64, forks, iterations int) *record.Run {
	r := &record.Run{Dir: t.TempDir(), Meta: record.Meta{ID: id, Experiment: "io-bound", State: "complete",
		Variants: []string{"platform"}, Primary: "wall_ms"}}
	seq := 0
	for f := 1; f <= forks; f++ {
		for i := 1; i <= iterations; i++ {
			seq++
			r.Trials = append(r.Trials, record.Trial{Variant: "platform", Trial: seq, Seq: seq, Valid: true,
				Fork: f, Iteration: i, WallMs: base + float64(f) + float64(i)/10})
		}
	}
	return r
}

// TestDiffCountsForks is issue 21's acceptance: two runs of 5 forks x 3
// iterations compare n = 5 per side, in every format.
func TestDiffCountsForks(t *testing.T) {
	old, new := forkRun(t, "old", 1000, 5, 3), forkRun(t, "new", 1200, 5, 3)
	res, err := Runs(old, new, Options{Metrics: []string{"wall_ms"}})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Tables[0].Rows[0]
	if r.Cmp == nil || r.Cmp.NA != 5 || r.Cmp.NB != 5 || r.Old.N != 5 || len(r.OldForks) != 5 {
		t.Fatalf("n = %d+%d (summary %d, forks %d), want 5+5", r.Cmp.NA, r.Cmp.NB, r.Old.N, len(r.OldForks))
	}
	// Fork medians: old 1001.2 .. 1005.2, new 1201.2 .. 1205.2; medians
	// 1003.2 and 1203.2. Every new fork is above every old one: the exact
	// two-sided Mann-Whitney p is 2/C(10,5) = 2/252 = 0.0079.
	if r.Old.Median != 1003.2 || r.New.Median != 1203.2 {
		t.Errorf("medians %g / %g, want 1003.2 / 1203.2", r.Old.Median, r.New.Median)
	}
	if p := r.Cmp.P; p < 0.0079 || p > 0.008 {
		t.Errorf("p = %g, want 2/252 = 0.0079", p)
	}
	// The ratio's interval lies within the extreme fork ratios
	// 1201.1/1005.3 and 1205.3/1001.1.
	if !(r.RatioLow >= 1201.1/1005.3-1e-9 && r.RatioHigh <= 1205.3/1001.1+1e-9 && r.RatioLow < r.RatioHigh) {
		t.Errorf("ratio interval %g–%g outside the fork extremes", r.RatioLow, r.RatioHigh)
	}
	var md, txt, page bytes.Buffer
	if err := res.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := res.Text(&txt); err != nil {
		t.Fatal(err)
	}
	if err := res.HTML(&page, Links{}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"markdown": md.String(), "text": txt.String(), "html": html.UnescapeString(page.String())} {
		if !strings.Contains(out, "n=5+5") {
			t.Errorf("%s does not report n=5+5", name)
		}
		if strings.Contains(out, "n=15+15") || strings.Contains(out, "95% CI") {
			t.Errorf("%s counts iterations or mislabels the 90%% interval", name)
		}
		if !strings.Contains(out, "90% CI") {
			t.Errorf("%s does not name its 90%% interval", name)
		}
		if !strings.Contains(strings.ToLower(out), "cannot tell whether these runs come from the same machine") {
			t.Errorf("%s lacks the warning for runs without fingerprints", name)
		}
	}
}

// TestDiffSteadyExclusions: the iterations steady.json leaves out of a
// fork's median are left out of the diff too.
func TestDiffSteadyExclusions(t *testing.T) {
	r := forkRun(t, "x", 1000, 3, 3)
	// Fork 1's first iteration is a slow warm-up, excluded by steady.json.
	r.Trials[0].WallMs = 5000
	if err := record.WriteJSON(r.Dir, record.SteadyFile, record.Steady{Metric: "wall_ms", Cells: []record.SteadyCell{
		{Variant: "platform", Forks: []record.SteadyFork{{Fork: 1, Iterations: 3, Excluded: 1}}}}}); err != nil {
		t.Fatal(err)
	}
	meds, forks := forkValues(r.Trials, "wall_ms", skipped(r))
	// Fork 1 keeps 1001.2 and 1001.3: median 1001.25.
	if len(forks[0]) != 2 || meds[0] != 1001.25 {
		t.Errorf("fork 1: %v (median %g), want the two steady iterations, median 1001.25", forks[0], meds[0])
	}
}
