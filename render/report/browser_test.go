package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/internal/testenv"
)

// chromium finds a headless-capable Chromium; THREADLAB_CHROMIUM overrides.
func chromium() string {
	for _, name := range []string{os.Getenv("THREADLAB_CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func needChromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	bin := chromium()
	if bin == "" {
		testenv.Need(t, errors.New("not on PATH"), "chromium", "apt-get install -y chromium (scripts/setup.sh does), so that charts are checked in a real browser")
	}
	return bin
}

// runChromium runs one headless Chromium command on a fresh profile.
func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	profile := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir=" + profile, "--virtual-time-budget=4000"}
	out, err := exec.CommandContext(ctx, bin, append(base, args...)...).Output()
	if err != nil {
		t.Fatalf("chromium %s: %v", strings.Join(args, " "), err)
	}
	return out
}

var chartDiv = regexp.MustCompile(`<div id="(chart_[a-z0-9_]+)" class="plot"`)

// probe runs first in an instrumented copy of a page: it records script
// errors, failed resource loads and console.error calls, and after load
// writes what it saw, the page's scroll width and any sign of injected
// code into the DOM for --dump-dom to return.
const probe = `<script>
window.__errors = [];
window.addEventListener('error', function (e) {
  var t = e.target && (e.target.src || e.target.href);
  window.__errors.push(t ? 'failed to load ' + t : 'error: ' + e.message);
}, true);
window.addEventListener('unhandledrejection', function (e) { window.__errors.push('rejection: ' + e.reason); });
(function () {
  var ce = console.error, cw = console.warn;
  console.error = function () { window.__errors.push('console.error: ' + Array.prototype.join.call(arguments, ' ')); ce.apply(console, arguments); };
  console.warn = function () { window.__errors.push('console.warn: ' + Array.prototype.join.call(arguments, ' ')); cw.apply(console, arguments); };
})();
window.addEventListener('load', function () {
  setTimeout(function () {
    var d = document.documentElement;
    window.dispatchEvent(new Event('beforeprint'));
    var closed = document.querySelectorAll('details:not([open])').length;
    var wide = [];
    document.querySelectorAll('body *').forEach(function (el) {
      var r = el.getBoundingClientRect();
      if (r.right > d.clientWidth + 1 && !el.closest('.tbl') && wide.length < 5) {
        wide.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className ? '.' + el.className : '') + ' ' + Math.round(r.right) + 'px');
      }
    });
    var r = document.createElement('pre');
    r.id = '__probe';
    r.textContent = JSON.stringify({errors: window.__errors, scrollWidth: d.scrollWidth, clientWidth: d.clientWidth,
      pwned: window.pwned || 0, closedWhenPrinting: closed, wide: wide});
    document.body.appendChild(r);
    if (window.parent !== window) { window.parent.postMessage(r.textContent, '*'); }
  }, 1000);
});
</script>`

type probeResult struct {
	Errors             []string `json:"errors"`
	ScrollWidth        int      `json:"scrollWidth"`
	ClientWidth        int      `json:"clientWidth"`
	Pwned              int      `json:"pwned"`
	ClosedWhenPrinting int      `json:"closedWhenPrinting"`
	Wide               []string `json:"wide"`
}

// frame is a page that shows another in an iframe of a given width and
// copies the probe's report into its own DOM: Chromium's windows are at
// least 500 px wide, so a 400 px screen needs a 400 px frame.
func frame(t *testing.T, page string, width, height int) string {
	t.Helper()
	path := filepath.Join(filepath.Dir(page), fmt.Sprintf(".frame-%d-%s", width, filepath.Base(page)))
	html := fmt.Sprintf(`<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0}iframe{border:0;display:block}</style></head><body>
<iframe src="%s" style="width:%dpx;height:%dpx"></iframe>
<script>window.addEventListener('message', function (e) { var r = document.createElement('pre'); r.id = '__probe'; r.textContent = e.data; document.body.appendChild(r); });</script>
</body></html>`, filepath.Base(page), width, height)
	if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var probeOut = regexp.MustCompile(`(?s)<pre id="__probe">(.*?)</pre>`)

// TestPagesInBrowser opens rendered pages in headless Chromium from
// file:// at 1400 and 400 px: no script error, console error or failed
// load; no horizontal page scroll (wide tables scroll in their own box);
// every chart div drew a canvas (echarts.min.js loaded by its relative
// path and every option, formatters included, evaluated); printing opens
// every collapsed section. Golden files cannot see any of that.
func TestPagesInBrowser(t *testing.T) {
	bin := needChromium(t)
	t.Parallel() // headless Chromium on its own profile, virtual time, no timing assertion: the browser tests share the 2 cores (CI time)
	out := renderFixture(t)
	hostileData, hostileRunDir := hostileRun(t)
	hostile := renderOne(t, hostileData, hostileRunDir)
	pages := []struct {
		path   string
		charts int
	}{
		{filepath.Join(out, "io-bound", ioRun, "index.html"), 7},     // burst curves, spectrum, distribution, series
		{filepath.Join(out, "io-bound", "index.html"), 7},            // the latest copy loads assets from one level up
		{filepath.Join(out, "pool-sweep", poolRun, "index.html"), 8}, // sweep lines and bands, pool series with a gap
		{filepath.Join(out, "index.html"), 0},
		{filepath.Join(out, "io-bound", ioRun, CompareFile), 0}, // the comparison with the earlier run
		{hostile, 5}, // __f__ markers in a sweep value, variant name and claim
	}
	for _, p := range pages {
		src, err := os.ReadFile(p.path)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range chartDiv.FindAllSubmatch(src, -1) {
			ids = append(ids, string(m[1]))
		}
		if len(ids) < p.charts {
			t.Errorf("%s: %d charts in the page source, want at least %d", p.path, len(ids), p.charts)
		}
		probed := filepath.Join(filepath.Dir(p.path), ".probe-"+filepath.Base(p.path))
		if err := os.WriteFile(probed, []byte(strings.Replace(string(src), "<head>", "<head>\n"+probe, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, width := range []int{1400, 400} {
			target := probed
			if width < 500 {
				target = frame(t, probed, width, 1000)
			}
			dom := string(runChromium(t, bin, "--window-size=1400,1000", "--dump-dom", "file://"+target))
			m := probeOut.FindStringSubmatch(dom)
			if m == nil {
				t.Errorf("%s at %d px: the probe did not report (the page did not finish loading)", p.path, width)
				continue
			}
			var r probeResult
			if err := json.Unmarshal([]byte(htmlUnescape(m[1])), &r); err != nil {
				t.Fatalf("probe output %q: %v", m[1], err)
			}
			if len(r.Errors) > 0 {
				t.Errorf("%s at %d px: console or load errors: %q", p.path, width, r.Errors)
			}
			if r.ScrollWidth > r.ClientWidth {
				t.Errorf("%s at %d px: the page scrolls sideways (%d px wide in a %d px window; too wide: %q)", p.path, width, r.ScrollWidth, r.ClientWidth, r.Wide)
			}
			if r.Pwned != 0 {
				t.Errorf("%s: injected code ran (window.pwned = %d)", p.path, r.Pwned)
			}
			if r.ClosedWhenPrinting != 0 {
				t.Errorf("%s: %d collapsed sections stay closed when printing", p.path, r.ClosedWhenPrinting)
			}
			if width < 500 {
				continue // the frame's DOM is not in the dump; the 1400 px pass checks the charts
			}
			if r.ClientWidth != width-0 && r.ClientWidth > width {
				t.Errorf("%s: probed at %d px but the page was %d px wide", p.path, width, r.ClientWidth)
			}
			if strings.Contains(dom, "plot nojs") {
				t.Errorf("%s: echarts.min.js did not load (a chart div got the nojs class)", p.path)
			}
			for _, id := range ids {
				i := strings.Index(dom, `id="`+id+`"`)
				if i < 0 {
					t.Errorf("%s: chart %s missing from the DOM", p.path, id)
					continue
				}
				rest := dom[i:]
				if end := strings.Index(rest, "</figure>"); end >= 0 {
					rest = rest[:end]
				}
				if !strings.Contains(rest, "<canvas") {
					t.Errorf("%s at %d px: chart %s has no <canvas>: the chart did not draw", p.path, width, id)
				}
			}
		}
	}
}

// TestScreenshotsAndPrint takes the screenshots a reviewer looks at (light
// at 1400 and 400 px, dark at 1400 px) and prints a run page to PDF. The
// PDF must carry text that only collapsed sections hold (the execution
// order), proving print opens them. Set THREADLAB_SCREENSHOTS to keep the
// files; they are checked for size only, a person looks at them.
func TestScreenshotsAndPrint(t *testing.T) {
	bin := needChromium(t)
	t.Parallel() // headless Chromium on its own profile, virtual time, no timing assertion: the browser tests share the 2 cores (CI time)
	out := renderFixture(t)
	dir := os.Getenv("THREADLAB_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	page := "file://" + filepath.Join(out, "io-bound", ioRun, "index.html")
	sweep := "file://" + filepath.Join(out, "pool-sweep", poolRun, "index.html")
	shots := []struct {
		name, url string
		args      []string
	}{
		{"run-1400.png", page, []string{"--window-size=1400,6000"}},
		{"run-400.png", "file://" + frame(t, strings.TrimPrefix(page, "file://"), 400, 9000), []string{"--window-size=400,9000"}},
		{"run-dark-1400.png", page, []string{"--window-size=1400,6000", "--force-dark-mode"}},
		{"sweep-1400.png", sweep, []string{"--window-size=1400,6000"}},
		{"index-400.png", "file://" + frame(t, filepath.Join(out, "index.html"), 400, 3000), []string{"--window-size=400,3000"}},
	}
	for _, s := range shots {
		path := filepath.Join(dir, s.name)
		runChromium(t, bin, append(s.args, "--screenshot="+path, s.url)...)
		if st, err := os.Stat(path); err != nil || st.Size() < 20_000 {
			t.Errorf("screenshot %s missing or blank: %v", path, err)
		}
	}
	pdf := filepath.Join(dir, "run.pdf")
	runChromium(t, bin, "--no-pdf-header-footer", "--print-to-pdf="+pdf, page)
	b, err := os.ReadFile(pdf)
	if err != nil || !strings.HasPrefix(string(b), "%PDF") {
		t.Fatalf("print to PDF: %v", err)
	}
	// Last, so that without pdftotext every check above has run.
	pdftotext := testenv.LookPath(t, "pdftotext", "apt-get install poppler-utils (scripts/setup.sh does), so that the PDF's text is checked")
	text, err := exec.Command(pdftotext, "-layout", pdf, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	// Only inside collapsed <details>: the execution order, the fingerprint
	// facts and the all-trials table.
	for _, want := range []string{"platform||1", "cpu.flags_hash", "cool-down gate timed out"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the printed page lacks %q, which a collapsed section holds: print must expand sections", want)
		}
	}
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&quot;", `"`, "&lt;", "<", "&gt;", ">", "&#39;", "'", "&amp;", "&").Replace(s)
}

// renderOne renders one run directory (and the index of its data dir)
// into a new reports directory and returns the run page's path.
func renderOne(t *testing.T, dataDir, runDir string) string {
	t.Helper()
	r, err := readRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	path, err := Run(r, out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Index(dataDir, out); err != nil {
		t.Fatal(err)
	}
	return path
}
