package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current renderer")

// fixtureRuns are rendered oldest first, as a user rendering each run after
// it finished would.
var fixtureRuns = []string{"io-bound/" + ioOld, "io-bound/" + ioRun, "pool-sweep/" + poolRun, "event-loop-starvation/" + starRun}

// renderFixture returns a new reports directory (the test's own, to read
// or add to) holding every fixture run and the index as rendered. The
// fixture is rendered once per test binary and copied: a render takes
// seconds and fifteen tests read it (CI time). The copy is the render
// byte for byte, since a render of the same data is the same bytes
// (TestRenderIsDeterministic renders twice afresh and compares every file;
// TestGoldenViews renders afresh through its view hook).
func renderFixture(t *testing.T) string {
	t.Helper()
	fixtureRender.Do(func() {
		fixtureRender.dir, fixtureRender.err = os.MkdirTemp("", "threadlab-report-fixture-")
		if fixtureRender.err == nil {
			fixtureRender.err = renderFixtureErr(fixtureRender.dir)
		}
	})
	if fixtureRender.err != nil {
		t.Fatalf("rendering the fixture: %v", fixtureRender.err)
	}
	out := t.TempDir()
	if err := os.CopyFS(out, os.DirFS(fixtureRender.dir)); err != nil {
		t.Fatalf("copying the rendered fixture: %v", err)
	}
	return out
}

// fixtureRender is the one render renderFixture copies; TestMain removes it.
var fixtureRender struct {
	sync.Once
	dir string
	err error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureRender.dir != "" {
		os.RemoveAll(fixtureRender.dir)
	}
	os.Exit(code)
}

// renderFixtureInto renders every fixture run and the index into out,
// afresh, and returns out.
func renderFixtureInto(t *testing.T, out string) string {
	t.Helper()
	if err := renderFixtureErr(out); err != nil {
		t.Fatal(err)
	}
	return out
}

// renderFixtureErr is renderFixtureInto's work, with its failure as an error.
func renderFixtureErr(out string) error {
	for _, p := range fixtureRuns {
		r, err := record.Read(filepath.Join(fixtureDir, p))
		if err != nil {
			return err
		}
		path, err := Run(r, out)
		if err != nil {
			return fmt.Errorf("Run(%s): %v", p, err)
		}
		if want := filepath.Join(out, p, "index.html"); path != want {
			return fmt.Errorf("Run(%s) returned %s, want %s", p, path, want)
		}
	}
	path, err := Index(fixtureDir, out)
	if err != nil {
		return err
	}
	if want := filepath.Join(out, "index.html"); path != want {
		return fmt.Errorf("Index returned %s, want %s", path, want)
	}
	return nil
}

// pagesIn lists every HTML page under dir, relative to it.
func pagesIn(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".html") {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGolden keeps wholePages byte for byte (viewgolden_test.go has the
// view models of every page). -update rewrites them and removes any other
// page golden, so the directory holds exactly what is checked.
func TestGolden(t *testing.T) {
	out := renderFixture(t)
	pages := pagesIn(t, out)
	// 4 run pages, 3 experiment pages, the index, and the comparison of
	// the later io-bound run with the earlier one (the only experiment
	// with two runs).
	if len(pages) != 9 {
		t.Errorf("rendered %d pages, want 9: %v", len(pages), pages)
	}
	golden := filepath.Join("testdata", "golden")
	if *update {
		for _, p := range pagesIn(t, golden) {
			if err := os.Remove(filepath.Join(golden, p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range wholePages {
		got, err := os.ReadFile(filepath.Join(out, p))
		if err != nil {
			t.Errorf("%s was not rendered: %v", p, err)
			continue
		}
		checkGolden(t, filepath.Join(golden, p), got)
	}
	if !*update {
		if kept := pagesIn(t, golden); len(kept) != len(wholePages) {
			t.Errorf("testdata/golden holds pages %v, want only %v (run go test ./render/report -update)", kept, wholePages)
		}
	}
}

// checkGolden compares got with the golden file gp, naming the first line
// that differs and showing both sides of it, or writes gp with -update.
func checkGolden(t *testing.T, gp string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(gp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(gp, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(gp)
	if err != nil {
		t.Errorf("no golden file %s (run go test ./render/report -update): %v", gp, err)
		return
	}
	if !bytes.Equal(got, want) {
		n := firstDiffLine(got, want)
		t.Errorf("%s differs at line %d:\n  got:  %s\n  want: %s\n(inspect, then run go test ./render/report -update)", gp, n, lineAt(got, n), lineAt(want, n))
	}
}

func firstDiffLine(a, b []byte) int {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(la) && i < len(lb); i++ {
		if !bytes.Equal(la[i], lb[i]) {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

func TestRenderIsDeterministic(t *testing.T) {
	// Two fresh renders, not renderFixture's copies of one: this test is
	// what lets the other tests share a render.
	a, b := renderFixtureInto(t, t.TempDir()), renderFixtureInto(t, t.TempDir())
	var files []string // every file: pages, report.md, compare.html, published logs and histograms
	err := filepath.WalkDir(a, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(a, path)
			files = append(files, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		x, _ := os.ReadFile(filepath.Join(a, p))
		y, err := os.ReadFile(filepath.Join(b, p))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two renders of the same data (line %d): chart IDs, map order or a clock leaked in", p, firstDiffLine(x, y))
		}
	}
}

// attrURL finds src/href attributes and CSS url() references.
var attrURL = regexp.MustCompile(`(?i)(?:\b(?:src|href)\s*=\s*["']?|url\(\s*["']?|@import\s+["'])([^"'\s>)]*)`)

func TestOffline(t *testing.T) {
	out := renderFixture(t)
	for _, p := range pagesIn(t, out) {
		b, _ := os.ReadFile(filepath.Join(out, p))
		for _, m := range attrURL.FindAllSubmatch(b, -1) {
			u := string(m[1])
			if strings.HasPrefix(strings.ToLower(u), "http:") || strings.HasPrefix(strings.ToLower(u), "https:") || strings.HasPrefix(u, "//") {
				t.Errorf("%s loads or links %q: a report must work offline from file:// with no external URL", p, u)
			}
		}
		if bytes.Contains(b, []byte("go-echarts.github.io")) || bytes.Contains(b, []byte("cdn.jsdelivr")) {
			t.Errorf("%s names a CDN host", p)
		}
	}
}

// TestLinksResolve follows every relative src and href of every page: the
// script, the raw data files, the run pages and the latest-run copies must
// all exist in the reports tree, as on a static host.
func TestLinksResolve(t *testing.T) {
	out := renderFixture(t)
	checked := 0
	for _, p := range pagesIn(t, out) {
		b, _ := os.ReadFile(filepath.Join(out, p))
		for _, m := range attrURL.FindAllSubmatch(b, -1) {
			u := string(m[1])
			if u == "" || strings.HasPrefix(u, "#") || strings.HasPrefix(u, "data:") {
				continue
			}
			u, _, _ = strings.Cut(u, "#")
			path, err := url.PathUnescape(u)
			if err != nil {
				t.Errorf("%s: bad link %q: %v", p, u, err)
				continue
			}
			target := filepath.Join(out, filepath.Dir(p), filepath.FromSlash(path))
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links %q, which does not exist in the reports tree", p, u)
			}
			checked++
		}
	}
	if checked < 50 {
		t.Errorf("followed only %d links: the pages lost their links", checked)
	}
}

func TestAssetsShipped(t *testing.T) {
	out := renderFixture(t)
	got, err := os.ReadFile(filepath.Join(out, AssetsDir, "echarts.min.js"))
	if err != nil {
		t.Fatalf("reports/assets/echarts.min.js not written: %v", err)
	}
	sum := sha256.Sum256(got)
	hexSum := hex.EncodeToString(sum[:])
	readme, _ := os.ReadFile(filepath.Join("assets", "README.md"))
	script, _ := os.ReadFile(filepath.Join("..", "..", "scripts", "vendor-echarts.sh"))
	if !bytes.Contains(readme, []byte(hexSum)) {
		t.Errorf("assets/README.md does not record the shipped echarts.min.js sha256 %s", hexSum)
	}
	if !bytes.Contains(script, []byte("SHA256="+hexSum)) {
		t.Errorf("scripts/vendor-echarts.sh does not pin the shipped echarts.min.js sha256 %s", hexSum)
	}
	if !bytes.Contains(got[:200], []byte("Apache")) && !bytes.Contains(got, []byte("echarts")) {
		t.Errorf("echarts.min.js does not look like ECharts")
	}
	for _, f := range []string{"LICENSE-echarts", "NOTICE-echarts"} {
		if _, err := os.Stat(filepath.Join(out, AssetsDir, f)); err != nil {
			t.Errorf("%s must ship beside echarts.min.js (Apache-2.0): %v", f, err)
		}
	}
	st, err := os.Stat(filepath.Join(out, "index.html"))
	if err != nil || st.Mode().Perm()&0o044 != 0o044 {
		t.Errorf("reports must be readable by a web server running as another user, got mode %v", st.Mode())
	}
}

// copyRun copies a fixture run into a fresh data directory for tests that
// edit it.
func copyRun(t *testing.T, rel string) (dataDir, runDir string) {
	t.Helper()
	dataDir = t.TempDir()
	runDir = filepath.Join(dataDir, rel)
	src := filepath.Join(fixtureDir, rel)
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(runDir, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(runDir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dataDir, runDir
}

func TestEscapesManifestAndData(t *testing.T) {
	dataDir, runDir := copyRun(t, "io-bound/"+ioRun)
	evil := `<script>alert(1)</script>`
	evilVariant := `</script><script>alert(2)</script>`
	m, _ := os.ReadFile(filepath.Join(runDir, record.ManifestFile))
	m = bytes.Replace(m, []byte("title: 'I/O-bound burst: platform threads queue, virtual threads and WebFlux do not'"), []byte("title: '"+evil+"'"), 1)
	m = bytes.Replace(m, []byte("question: How long"), []byte("question: <img src=x onerror=alert(3)> How long"), 1)
	if err := os.WriteFile(filepath.Join(runDir, record.ManifestFile), m, 0o644); err != nil {
		t.Fatal(err)
	}
	var meta record.Meta
	if err := record.ReadJSON(runDir, record.RunFile, &meta); err != nil {
		t.Fatal(err)
	}
	meta.Title = ""
	for i, v := range meta.Variants {
		if v == "webflux" {
			meta.Variants[i] = evilVariant // the data's variants are run.json's (record.Read checks)
		}
	}
	if err := record.WriteJSON(runDir, record.RunFile, meta); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{record.TrialsFile, record.SummaryFile, record.LatencyFile, record.SeriesFile, record.ComparisonsFile} {
		b, _ := os.ReadFile(filepath.Join(runDir, f))
		b = bytes.ReplaceAll(b, []byte("webflux,"), []byte(`"`+evilVariant+`",`))
		if err := os.WriteFile(filepath.Join(runDir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := record.Read(runDir)
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
	page, _ := os.ReadFile(path)
	index, _ := os.ReadFile(filepath.Join(out, "index.html"))
	for name, b := range map[string][]byte{"run page": page, "index": index} {
		if bytes.Contains(b, []byte("<script>alert(")) || bytes.Contains(b, []byte("<img src=x")) {
			t.Errorf("%s: manifest or data text reached the HTML unescaped", name)
		}
	}
	if !bytes.Contains(page, []byte("&lt;script&gt;alert(1)&lt;/script&gt;")) {
		t.Errorf("run page: the title should appear escaped as text")
	}
	if !bytes.Contains(index, []byte("&lt;script&gt;alert(1)&lt;/script&gt;")) {
		t.Errorf("index: the experiment title should appear escaped as text")
	}
	if !bytes.Contains(page, []byte(`\u003c/script\u003e\u003cscript\u003ealert(2)\u003c/script\u003e`)) {
		t.Errorf("run page: a variant name inside chart data should have its < escaped as \\u003c")
	}
	// Every <script> the page opens is closed by its own </script>: none
	// was ended early by data.
	if o, c := bytes.Count(page, []byte("<script")), bytes.Count(page, []byte("</script>")); o != c {
		t.Errorf("run page opens %d script elements and closes %d", o, c)
	}
}

func TestInterruptedRun(t *testing.T) {
	out := t.TempDir()
	r, err := record.Read(filepath.Join(fixtureDir, "io-bound", ioOld))
	if err != nil {
		t.Fatal(err)
	}
	path, err := Run(r, out)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(path)
	for _, want := range []string{`role="alert"`, "This run was interrupted", "interrupted by signal after 4 of 18 trials", "No verdicts were recorded", "No summary.csv in this run"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("interrupted run page lacks %q", want)
		}
	}
	// Rendering the older run must still leave the experiment page on the
	// newest run, which Run renders too so the copy's links resolve.
	latest, err := os.ReadFile(filepath.Join(out, "io-bound", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(latest, []byte("run <code>"+ioRun+"</code>")) || bytes.Contains(latest, []byte("This run was interrupted")) {
		t.Errorf("io-bound/index.html should show the newest run %s, not the interrupted %s", ioRun, ioOld)
	}
	if _, err := os.Stat(filepath.Join(out, "io-bound", ioRun, "index.html")); err != nil {
		t.Errorf("the newest run's page should be rendered for the latest copy to link to: %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	if _, err := Run(nil, t.TempDir()); err == nil || !strings.Contains(err.Error(), "record.Read") {
		t.Errorf("Run(nil) = %v, want an error saying how to get a run", err)
	}
	_, runDir := copyRun(t, "pool-sweep/"+poolRun)
	r, err := record.Read(runDir)
	if err != nil {
		t.Fatal(err)
	}
	r.Meta.Experiment = "../../etc"
	_, err = Run(r, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), `"experiment"`) || !strings.Contains(err.Error(), record.RunFile) {
		t.Errorf("a path-like experiment name = %v, want an error naming the field and run.json", err)
	}
	r.Meta.Experiment = "pool-sweep"
	r.Verdicts = json.RawMessage(`{"not": "a list"}`)
	_, err = Run(r, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), record.VerdictsFile) {
		t.Errorf("bad verdicts.json = %v, want an error naming the file", err)
	}
	_, err = Index(filepath.Join(t.TempDir(), "nope"), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Index on a missing data dir = %v, want a clear error", err)
	}
}

func TestIndexListsUnrenderedRuns(t *testing.T) {
	out := t.TempDir()
	if _, err := Index(fixtureDir, out); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(out, "index.html"))
	if !bytes.Contains(b, []byte("not rendered: <code>threadlab report")) {
		t.Errorf("an index of unrendered runs should say how to render them")
	}
	if bytes.Contains(b, []byte(`href="pool-sweep/`)) {
		t.Errorf("an index should not link to pages that do not exist")
	}
}

func TestDecisionRows(t *testing.T) {
	v := func(status string, flags ...string) record.Verdict {
		return record.Verdict{ID: "c", Status: status, Flags: flags, Decision: &record.Decision{When: "w", Pick: "p"}}
	}
	run := func(id, state string, vs ...record.Verdict) indexRun {
		return indexRun{dir: "data/x/" + id, meta: record.Meta{ID: id, State: state}, verdicts: vs}
	}
	cases := []struct {
		why      string
		runs     []indexRun
		wantRun  string
		strength string
	}{
		{"a supported claim with no flag is solid", []indexRun{run("r1", "complete", v("supported"))}, "r1", "solid"},
		{"a noise flag makes a supported claim directional", []indexRun{run("r1", "complete", v("supported", "noisy-cv (webflux)"))}, "r1", "directional"},
		{"an unknown flag weakens too", []indexRun{run("r1", "complete", v("supported", "strange"))}, "r1", "directional"},
		{"too few trials for a CI does not weaken a claim that passed its test", []indexRun{run("r1", "complete", v("supported", "few-trials-ci (platform)"))}, "r1", "solid"},
		{"contradicted stays contradicted, flags or not", []indexRun{run("r1", "complete", v("contradicted", "noisy-cv (a)"))}, "r1", "contradicted"},
		{"inconclusive is shown as such", []indexRun{run("r1", "complete", v("inconclusive"))}, "r1", "inconclusive"},
		{"not applicable is its own strength, flags or not", []indexRun{run("r1", "complete", v("not-applicable", "noisy-cv (a)"))}, "r1", "not-applicable"},
		{"an interrupted newer run does not replace a complete one", []indexRun{run("r1", "complete", v("supported")), run("r2", "interrupted", v("contradicted"))}, "r1", "solid"},
		{"the newest complete run wins", []indexRun{run("r1", "complete", v("contradicted")), run("r2", "complete", v("supported"))}, "r2", "solid"},
		{"without a complete run, the newest run with verdicts", []indexRun{run("r1", "failed", v("supported")), run("r2", "interrupted")}, "r1", "solid"},
	}
	for _, c := range cases {
		rows := decisionRows("x", c.runs)
		if len(rows) != 1 {
			t.Errorf("%s: got %d rows, want 1", c.why, len(rows))
			continue
		}
		if rows[0].Run != c.wantRun || rows[0].Strength != c.strength {
			t.Errorf("%s: got run %s %s, want %s %s", c.why, rows[0].Run, rows[0].Strength, c.wantRun, c.strength)
		}
		if want := "x/" + c.wantRun + "/index.html#claim-c"; rows[0].Href != want {
			t.Errorf("%s: link %s, want %s", c.why, rows[0].Href, want)
		}
	}
	if rows := decisionRows("x", []indexRun{run("r1", "complete", record.Verdict{ID: "no-decision", Status: "supported"})}); len(rows) != 0 {
		t.Errorf("a claim without a decision must not make a row, got %v", rows)
	}
}

func TestPrimaryAndMeasured(t *testing.T) {
	m := func(model, measure string) *record.ManifestInfo {
		mi := &record.ManifestInfo{}
		mi.Load.Model, mi.Load.Measure = model, measure
		return mi
	}
	cases := []struct {
		why      string
		m        *record.ManifestInfo
		groups   []string
		measured string
		primary  string
	}{
		{"a burst is judged by wall time", m("burst", ""), []string{"main"}, "main", "wall_ms"},
		{"a closed model by throughput", m("closed", ""), []string{"main"}, "main", "rps"},
		{"an open model by throughput: the pipeline's rule before run.json named its primary", m("open", ""), []string{"main"}, "main", "rps"},
		{"no manifest: throughput, first group", nil, []string{"a", "b"}, "a", "rps"},
		{"load.measure wins when the data has it", m("burst", "probe"), []string{"background", "probe"}, "probe", "wall_ms"},
		{"load.measure missing from the data is ignored", m("burst", "probe"), []string{"background"}, "background", "wall_ms"},
	}
	for _, c := range cases {
		measured := measuredGroup(c.m, c.groups)
		models := map[string]string{}
		if c.m != nil {
			models[""] = c.m.Load.Model
		}
		primary := primaryMetric(measured, models)
		if measured != c.measured || primary != c.primary {
			t.Errorf("%s: got %s of %q, want %s of %q", c.why, primary, measured, c.primary, c.measured)
		}
	}
}

// TestLayoutPrefersRunJSON: what run.json says wins over what the report
// would infer, and an old run.json without those fields still renders.
func TestLayoutPrefersRunJSON(t *testing.T) {
	r := &record.Run{Trials: []record.Trial{
		{Variant: "b", Group: "bg"}, {Variant: "a", Group: "probe"}, {Variant: "a", Group: "bg"},
	}}
	l := newLayout(r, nil)
	if strings.Join(l.Variants, ",") != "b,a" || l.Measured != "bg" || l.Primary != "rps" {
		t.Errorf("inferred layout %+v: want data order b,a, first group bg, rps", l)
	}
	r.Meta = record.Meta{Variants: []string{"a", "b"}, Groups: []string{"probe", "bg"}, Measured: "probe", Primary: "p99_ms"}
	l = newLayout(r, nil)
	if strings.Join(l.Variants, ",") != "a,b" || l.Measured != "probe" || strings.Join(l.Groups, ",") != "probe,bg" || l.Primary != "p99_ms" {
		t.Errorf("layout from run.json %+v: want a,b / probe,bg / p99_ms", l)
	}
}

func TestSweepPointOrder(t *testing.T) {
	cases := []struct {
		why    string
		points []string
		order  map[string][]string
		want   []string
	}{
		{"numeric, not lexical, without a manifest", []string{"pool=800", "pool=50", "pool=200"}, nil, []string{"pool=50", "pool=200", "pool=800"}},
		{"manifest value order wins", []string{"mode=serial", "mode=parallel", "mode=oversized"}, map[string][]string{"mode": {"serial", "oversized", "parallel"}}, []string{"mode=serial", "mode=oversized", "mode=parallel"}},
		{"two keys: first key outer", []string{"pool=200;users=10", "pool=50;users=100", "pool=50;users=10"}, nil, []string{"pool=50;users=10", "pool=50;users=100", "pool=200;users=10"}},
	}
	for _, c := range cases {
		keys := []string{}
		for k := range record.ParsePoint(c.points[0]) {
			keys = append(keys, k)
		}
		if len(keys) > 1 {
			keys = []string{"pool", "users"}
		}
		got := sortPoints(c.points, keys, c.order)
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: got %v, want %v", c.why, got, c.want)
		}
	}
}

func TestNumberFormats(t *testing.T) {
	cases := []struct {
		why  string
		x    float64
		want string
	}{
		{"hundreds drop decimals: a shared VM cannot resolve them", 989.84, "990"},
		{"tens keep one", 22.627, "22.6"},
		{"units keep two", 2.839, "2.84"},
		{"small values keep 3 significant figures", 0.004321, "0.00432"},
		{"zero is plain", 0, "0"},
		{"negative deltas keep their sign", -54.708, "-54.7"},
	}
	for _, c := range cases {
		if got := num(c.x); got != c.want {
			t.Errorf("%s: num(%v) = %q, want %q", c.why, c.x, got, c.want)
		}
	}
	if got := pval(0.0004); got != "<0.001" {
		t.Errorf("p-values below 0.001 print as <0.001, got %q", got)
	}
}

func TestShellQuote(t *testing.T) {
	cases := []struct{ why, in, want string }{
		{"plain words stay bare", "io-bound", "io-bound"},
		{"spaces are quoted", "my exp", "'my exp'"},
		{"single quotes survive", "it's", `'it'\''s'`},
		{"empty is visible", "", "''"},
		{"shell metacharacters are quoted", "a;rm -rf", "'a;rm -rf'"},
	}
	for _, c := range cases {
		if got := shellQuote(c.in); got != c.want {
			t.Errorf("%s: shellQuote(%q) = %q, want %q", c.why, c.in, got, c.want)
		}
	}
}

func TestHostCheckGeneric(t *testing.T) {
	cases := []struct {
		why     string
		json    string
		columns string
		status  int
		other   int
	}{
		{"checks under a key; name and status first, fix last", `{"busy": false, "checks": [{"fix": "sysctl -w x=1", "value": "1", "status": "warn", "name": "x"}]}`, "name status value fix", 1, 1},
		{"a bare array of checks", `[{"check": "swap", "ok": true}]`, "check ok", 1, 0},
		{"no array: every leaf listed", `{"governor": "performance", "smt": {"on": true}}`, "", -1, 2},
	}
	for _, c := range cases {
		d, err := readCheckDoc([]byte(c.json))
		if err != nil {
			t.Fatalf("%s: %v", c.why, err)
		}
		if got := strings.Join(d.Checks.Columns, " "); got != c.columns || d.Checks.Status != c.status || len(d.Other) != c.other {
			t.Errorf("%s: columns %q status %d other %d, want %q %d %d", c.why, got, d.Checks.Status, len(d.Other), c.columns, c.status, c.other)
		}
	}
}
