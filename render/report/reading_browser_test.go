package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// decisionRun is the io-bound fixture with two decision claims: one that
// fails only on size (the direction holds: "smaller") and one whose
// direction is reversed.
func decisionRun(t *testing.T) (dataDir, runDir string) {
	t.Helper()
	dataDir, runDir = copyRun(t, "io-bound/"+ioRun)
	vs := []record.Verdict{
		{ID: "size-only", Says: "Parallel rails beat subscribeOn by 2x.", Status: stats.Contradicted, Outcome: stats.OutcomeSmaller,
			Direction: 1, DirectionP: 0.004, DirectionText: "subscribe/parallel above 1", Ratio: 1.40, Low: 1.17, High: 1.54, P: 0.01, Level: 0.05,
			Reason:   "contradicted: subscribe/parallel = 1.40 is outside ≥ 2",
			Decision: &record.Decision{When: "Independent CPU items in a reactive pipeline", Pick: "sizepick", Then: "one rail per core"}},
		{ID: "backwards", Says: "WebFlux beats virtual threads by 20%.", Status: stats.Contradicted, Outcome: stats.OutcomeReversed,
			Direction: -1, DirectionP: 0.002, DirectionText: "virtual/webflux below 1", Ratio: 0.7, Low: 0.6, High: 0.8, P: 0.002, Level: 0.05,
			Reason:   "contradicted: virtual/webflux = 0.7 is outside ≥ 1.2",
			Decision: &record.Decision{When: "Pure non-blocking I/O", Pick: "revpick"}},
	}
	b, err := json.Marshal(vs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, record.VerdictsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dataDir, runDir
}

// decisionProbe reports, for every row of the decision framework (index)
// and every decision line (run page), whether any element shows a
// strike-through, whether its visible text says "do not follow", and
// whether its verdict is inside the window.
const decisionProbe = `<script>
window.addEventListener('load', function () {
  setTimeout(function () {
    var out = [];
    var w = document.documentElement.clientWidth;
    document.querySelectorAll('.tbl.decisions tbody tr, p.decision').forEach(function (row) {
      var struck = [];
      row.querySelectorAll('*').forEach(function (el) {
        if (getComputedStyle(el).textDecorationLine.indexOf('line-through') >= 0) { struck.push(el.innerText); }
      });
      var v = row.querySelector('.verdict-cell');
      var r = v ? v.getBoundingClientRect() : null;
      out.push({text: row.innerText, struck: struck, verdictVisible: r ? (r.right <= w + 1 && r.left >= 0 && r.width > 0) : null});
    });
    var p = document.createElement('pre');
    p.id = '__probe';
    p.textContent = JSON.stringify(out);
    document.body.appendChild(p);
    if (window.parent !== window) { window.parent.postMessage(p.textContent, '*'); }
  }, 800);
});
</script>`

type decisionSeen struct {
	Text           string   `json:"text"`
	Struck         []string `json:"struck"`
	VerdictVisible *bool    `json:"verdictVisible"`
}

// TestDecisionsInBrowser is issue 21's acceptance: in a real browser, a
// claim that fails only on size shows no "do not follow" and no
// strike-through, on the index and the run page, at 1400 and 400 px; a
// reversed one shows both; at 400 px the verdict stays on screen.
func TestDecisionsInBrowser(t *testing.T) {
	bin := needChromium(t)
	t.Parallel() // headless Chromium on its own profile, virtual time, no timing assertion: the browser tests share the 2 cores (CI time)
	dataDir, runDir := decisionRun(t)
	runPage := renderOne(t, dataDir, runDir)
	out := filepath.Dir(filepath.Dir(filepath.Dir(runPage)))
	for _, page := range []string{filepath.Join(out, "index.html"), runPage} {
		src, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		probed := filepath.Join(filepath.Dir(page), ".decisions-"+filepath.Base(page))
		if err := os.WriteFile(probed, []byte(strings.Replace(string(src), "<head>", "<head>\n"+decisionProbe, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, width := range []int{1400, 400} {
			target := probed
			if width < 500 {
				target = frame(t, probed, width, 3000)
			}
			dom := string(runChromium(t, bin, "--window-size=1400,3000", "--dump-dom", "file://"+target))
			m := probeOut.FindStringSubmatch(dom)
			if m == nil {
				t.Fatalf("%s at %d px: the probe did not report", page, width)
			}
			var rows []decisionSeen
			if err := json.Unmarshal([]byte(htmlUnescape(m[1])), &rows); err != nil {
				t.Fatalf("probe output %q: %v", m[1], err)
			}
			var sawSize, sawReversed bool
			for _, r := range rows {
				switch {
				case strings.Contains(r.Text, "sizepick"):
					sawSize = true
					if strings.Contains(strings.ToLower(r.Text), "do not follow") || len(r.Struck) > 0 {
						t.Errorf("%s at %d px: the size-only claim's row says do not follow or strikes %q: %s", page, width, r.Struck, r.Text)
					}
				case strings.Contains(r.Text, "revpick"):
					sawReversed = true
					if !strings.Contains(strings.ToLower(r.Text), "do not follow") || len(r.Struck) == 0 || !strings.Contains(strings.Join(r.Struck, " "), "revpick") {
						t.Errorf("%s at %d px: the reversed claim's row does not strike revpick and say do not follow (struck %q): %s", page, width, r.Struck, r.Text)
					}
				}
				if r.VerdictVisible != nil && !*r.VerdictVisible {
					t.Errorf("%s at %d px: a decision row's verdict is off screen: %s", page, width, r.Text)
				}
			}
			if !sawSize || !sawReversed {
				t.Errorf("%s at %d px: rows seen %d; size-only %v, reversed %v", page, width, len(rows), sawSize, sawReversed)
			}
		}
	}
}
