package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments/seeds"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

func TestClaimText(t *testing.T) {
	seed := seedFigure{Value: 1.83, From: "000: virtual 1042 ms vs WebFlux 569 ms wall."}
	beats := &stats.Check{Metric: "wall_ms", Compare: []string{"virtual", "webflux"}, AtLeast: stats.F(1.2)}
	for _, c := range []struct {
		v         record.Verdict
		check     *stats.Check
		seed      seedFigure
		want, why string
	}{
		{record.Verdict{Says: "Virtual threads win.", Status: "supported", Ratio: 2.21, Low: 2.09, High: 2.33, P: 0.004, Level: 0.05,
			Outcome: "supported", Direction: 1, DirectionP: 0.004}, beats, seedFigure{},
			"Supported: virtual threads win (webflux better: virtual/webflux above 1, one-sided Mann-Whitney U p = 0.004; ratio 2.21× (90% CI 2.09–2.33); claim virtual/webflux wall time (ms) ≥ 1.20).",
			"three answers in brackets, first word lowered; lower wall time is better, so the denominator wins"},
		{record.Verdict{Says: "WebFlux beats virtual", Status: "contradicted", Ratio: 1.08, Low: 0.998, High: 1.147, Level: 0.05}, beats, seed,
			"Smaller than claimed: WebFlux beats virtual (neither virtual nor webflux ahead: the interval of virtual/webflux includes 1; ratio 1.08× (90% CI 0.998–1.15); claim virtual/webflux wall time (ms) ≥ 1.20; seed 1.83).",
			"an old run without a direction: read off the interval; a shortfall is not a reversal"},
		{record.Verdict{Says: "Virtual threads win.", Status: "inconclusive", Ratio: 1.17, Low: 1.12, High: 1.24, P: 0.057, Level: 0.05,
			Outcome: "inconclusive", Direction: 1, DirectionP: 0.014}, beats, seedFigure{},
			"Not settled: whether virtual threads win (webflux better: virtual/webflux above 1, one-sided Mann-Whitney U p = 0.014; ratio 1.17× (90% CI 1.12–1.24); claim virtual/webflux wall time (ms) ≥ 1.20; left open by the test against the claim's bound: p = 0.057, above the 0.05 level).",
			"reactor-parallel's serial-worse-tail: a direction p of 0.014 reads as settled unless the line says which test fell short"},
		{record.Verdict{Says: "Platform wins", Status: "contradicted"}, nil, seedFigure{}, "Reversed: the data say the opposite of platform wins.",
			"no check to tell a shortfall from a reversal: the old reading"},
		{record.Verdict{Says: "Virtual threads saturate the CPU.", Status: "not-applicable", Ratio: 2, Low: 1.5, High: 2.5,
			Reason: "not applicable here: it needs at least 4 CPUs for the target, and this host gave it 2"}, beats, seed,
			"Not applicable here: whether virtual threads saturate the CPU (it needs at least 4 CPUs for the target, and this host gave it 2).",
			"the failed precondition, without figures that answer another question"},
	} {
		if got := claimText(c.v, readClaim(c.v, c.check, c.seed)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.why, got, c.want)
		}
	}
	if got := because(record.Verdict{Reason: "median at most 200."}, seed); got != "median at most 200; the seed: 1.83 (000: virtual 1042 ms vs WebFlux 569 ms wall)" {
		t.Errorf("because without a ratio = %q", got)
	}
}

// TestInconclusiveNoRecommendation: an inconclusive row of the decision
// framework names no pick in bold, on the index and on the run page.
func TestInconclusiveNoRecommendation(t *testing.T) {
	out := renderFixture(t)
	for _, p := range []string{"index.html", "io-bound/" + ioRun + "/index.html"} {
		b := readFile(t, out, p)
		if strings.Contains(b, "<strong>webflux</strong>") {
			t.Errorf("%s: the inconclusive webflux row recommends webflux in bold", p)
		}
		if !strings.Contains(b, "no pick yet") && !strings.Contains(b, "no recommendation") {
			t.Errorf("%s: the inconclusive row does not say it makes no recommendation", p)
		}
	}
	page := readFile(t, out, "io-bound/"+ioRun+"/index.html")
	for _, want := range []string{`<section id="method"`, "a burst of 600 requests released at the same instant", `class="answer"`, "seed 1.83"} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	index := readFile(t, out, "index.html")
	if !strings.Contains(index, "ratio 2.21× (95% CI 2.09–2.33)") || !strings.Contains(index, "seed 1.83") {
		t.Error("the decision framework's because column lacks the measured ratio or the seed's figure")
	}
}

func readFile(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNotApplicableRendered: a claim whose precondition failed shows as
// not applicable here, with its own badge, its reason instead of figures
// in the reproduction table, no size reading, no pick in the decision
// framework; a skipped variant is named in the Method section.
func TestNotApplicableRendered(t *testing.T) {
	data := t.TempDir()
	dir := filepath.Join(data, "io-bound", ioRun)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(fixtureDir, "io-bound", ioRun))); err != nil {
		t.Fatal(err)
	}
	vs, err := record.ReadVerdictsFile(dir, record.VerdictsFile)
	if err != nil || len(vs) == 0 {
		t.Fatalf("fixture verdicts: %v", err)
	}
	const why = "not applicable here: variant virtual did not run on this host (jdk: 21: no JDK 21 is installed)"
	for i := range vs {
		if vs[i].ID == "webflux-beats-virtual" { // it has a seed figure and a decision row
			vs[i].Status, vs[i].Reason, vs[i].Leans = "not-applicable", why, ""
		}
	}
	if err := record.WriteJSON(dir, record.VerdictsFile, vs); err != nil {
		t.Fatal(err)
	}
	var meta record.Meta
	if err := record.ReadJSON(dir, record.RunFile, &meta); err != nil {
		t.Fatal(err)
	}
	meta.Skipped = []record.SkippedVariant{{Variant: "virtual", JDK: 21, Reason: "jdk: 21: no JDK 21 is installed"}}
	if err := record.WriteJSON(dir, record.RunFile, meta); err != nil {
		t.Fatal(err)
	}
	r, err := record.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := Run(r, out); err != nil {
		t.Fatal(err)
	}
	if _, err := Index(data, out); err != nil {
		t.Fatal(err)
	}
	page := readFile(t, out, "io-bound/"+ioRun+"/index.html")
	md := readFile(t, out, "io-bound/"+ioRun+"/"+MarkdownFile)
	index := readFile(t, out, "index.html")
	for _, c := range []struct{ where, text, want, why string }{
		{"run page", page, `<span class="badge b-not-applicable">not applicable here</span>`, "its own badge and colour, in words"},
		{"run page", page, "Variant virtual did not run on this host: jdk: 21: no JDK 21 is installed; the claims that read it are not applicable here.", "the Method section names the skipped variant"},
		{"run page", page, "Not applicable here: whether WebFlux finishes an I/O-bound burst faster than virtual threads (variant virtual did not run", "the Answer says so, with the reason"},
		{"report.md", md, "`webflux-beats-virtual` (000.3) | 1.83 (000: virtual 1042 ms vs WebFlux 569 ms wall, single trials) | " + mdText(why) + " | **not applicable here** | – |",
			"the seed's figure stays; the reason replaces our figure; no size reading (it read smaller here before)"},
		{"index", index, `<span class="badge b-not-applicable">not applicable here</span>`, "the decision framework's badge"},
		{"index", index, "no pick here: the claim did not apply on this host", "no recommendation from a claim that did not apply"},
		{"index", index, "a precondition did not hold on the host (the row says what would be needed)", "the legend explains the badge"},
	} {
		if !strings.Contains(c.text, c.want) {
			t.Errorf("%s: %s lacks %q", c.why, c.where, c.want)
		}
	}
}

// TestSeedClaimsTable: the site lists every statement of the seed
// inventory, encoded or not, with the verdict of the latest run where a
// manifest claim decides it, and says so where none does.
func TestSeedClaimsTable(t *testing.T) {
	out := renderFixture(t)
	index := readFile(t, out, "index.html")
	all, err := seeds.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range all {
		if !strings.Contains(index, `<tr id="seed-`+c.ID+`">`) {
			t.Errorf("seed claim %s is missing from the site's table", c.ID)
		}
	}
	for _, want := range []struct{ text, why string }{
		{`<a href="io-bound/` + ioRun + `/index.html#claim-webflux-beats-virtual">io-bound/webflux-beats-virtual</a>: <span class="badge b-inconclusive">inconclusive</span> ratio 0.95×`,
			"a row names its claim, links the run's verdict and shows our figure"},
		{`<code>pool-sweep/pool-limited-tie</code>: <span class="muted">not decided in run ` + poolRun + ` (profile smoke)</span>`,
			"a claim the latest run did not decide says which run and profile"},
		{`<code>cpu-bound/virtual-ties-platform</code>: <span class="muted">no run with verdicts yet</span>`, "an experiment without runs"},
		{`<span class="badge b-other">not-encoded</span> not encoded: a functional property with no performance figure`, "not encoded, with why"},
		{`<span class="badge b-other">precondition</span> precondition of every 004 claim`, "a precondition row"},
		{`<tr><td colspan="5"><strong>003: Virtual Threads vs WebFlux: Which to Choose in 2026 (1000 requests at once, and blocking on the event loop)</strong></td></tr>`, "a heading per write-up, with its title"},
		{`at most 4 <code>distinct_threads</code>`, "backticks in the inventory become code"},
	} {
		if !strings.Contains(index, want.text) {
			t.Errorf("%s: index lacks %q", want.why, want.text)
		}
	}
	page := readFile(t, out, "io-bound/"+ioRun+"/index.html")
	for _, want := range []struct{ text, why string }{
		{`<tr><td><a href="#claim-webflux-beats-virtual">WebFlux finishes an I/O-bound burst faster than virtual threads</a> <span class="muted">(seed 000.3)</span></td><td>1.83 (000: virtual 1042 ms vs WebFlux 569 ms wall, single trials)</td><td>ratio 0.95× (`,
			"the run page's reproduction table: the claim, its seed statement and figure beside ours"},
		{`<td>smaller here</td>`, "the size reading"},
		{`<li>000.1: virtual threads finish an I/O burst sooner than 200 platform threads (wall 1325 vs 1042 ms (1.27x), single trials); io-bound/virtual-beats-platform: no verdict in this run`,
			"a seed statement about this experiment that the run has no verdict for is listed, not dropped"},
		{`The write-up&#39;s figure: 1.83`, "each verdict block shows the seed's figure"},
	} {
		if !strings.Contains(page, want.text) {
			t.Errorf("%s: run page lacks %q", want.why, want.text)
		}
	}
}

func TestCellOutcome(t *testing.T) {
	cell := func(v, p string, forks, retries int, reason string) record.CellStop {
		return record.CellStop{Variant: v, Point: p, Planned: 5, Max: 5, Forks: forks, Runs: forks + retries, Retries: retries, Reason: reason}
	}
	tests := []struct {
		cells []record.CellStop
		want  string
		why   string
	}{
		{nil, "", "a run from before forks: nothing to say"},
		{[]record.CellStop{cell("a", "", 5, 0, "planned n reached"), cell("b", "", 5, 0, "planned n reached")},
			"Every cell ended at its planned 5 forks, with no re-run.", "the plain case in one sentence"},
		{[]record.CellStop{cell("a", "pool=5", 5, 2, "planned n reached"), cell("b", "pool=5", 5, 0, "planned n reached")},
			"Every cell ended at its planned 5 forks; 2 re-runs (a pool=5: 2).", "re-runs named per cell"},
		{[]record.CellStop{cell("a", "", 3, 3, "retry budget (3) spent: 3 of 5 forks valid"), cell("b", "", 7, 0, "decided at n=7")},
			"Where each cell stopped: a: 3 forks, retry budget (3) spent: 3 of 5 forks valid, 3 re-runs; b: 7 forks, decided at n=7.", "a shortfall or an early stop: every cell and why"},
	}
	for _, tt := range tests {
		if got := cellOutcome(record.Meta{Cells: tt.cells, SweepKeys: []string{"pool"}}); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.why, got, tt.want)
		}
	}
}

func TestReadBack(t *testing.T) {
	tests := []struct {
		as   []record.Affinity
		want string
		why  string
	}{
		{[]record.Affinity{{Role: "target", Asked: "1", Actual: "1", Processes: 30}, {Role: "load generator", Asked: "0", Actual: "0", Processes: 1}},
			"Read back from the kernel during the run: target CPU 1 (30 processes); load generator CPU 0 (1 process).", "as asked: no warning"},
		{[]record.Affinity{{Role: "target", Asked: "1", Actual: "1", Processes: 29}, {Role: "target", Asked: "1", Actual: "0-1", Processes: 1, Pids: []int{4913}, Mismatch: true}},
			"Read back from the kernel during the run: target CPU 1 (29 processes) and CPUs 0-1 (1 process). Warning: not the pinning asked: the target was to run on CPU 1, but 1 process could run on CPUs 0-1 (pid 4913).",
			"one target re-pinned elsewhere: warned with its pid"},
		{[]record.Affinity{{Role: "postgres", Actual: "0-1", Processes: 7, Mixed: true}},
			"Read back from the kernel during the run: postgres CPUs 0-1 (7 processes, threads differ).", "not pinned, threads differ: said, not a mismatch"},
	}
	for _, tt := range tests {
		if got := readBack(tt.as); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.why, got, tt.want)
		}
	}
}

// TestResumesSentence: a run continued with --resume says so in its
// Method, with when and how far it had got; an unbroken run says nothing.
func TestResumesSentence(t *testing.T) {
	cases := []struct {
		name    string
		resumes []record.Resume
		want    []string
	}{
		{"unbroken: no sentence", nil, nil},
		{"once", []record.Resume{{At: "2026-12-04T09:40:00Z", Done: 48, Of: 60}},
			[]string{"resumed once", "at 2026-12-04T09:40:00Z with 48 of 60 forks done", "2 sittings", "one threadlab version"}},
		{"twice", []record.Resume{{At: "2026-12-04T09:40:00Z", Done: 30, Of: 60}, {At: "2026-12-05T09:40:00Z", Done: 50, Of: 60}},
			[]string{"resumed twice", "30 of 60", "50 of 60", "3 sittings"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := resumes(record.Meta{Resumes: c.resumes})
			if c.want == nil {
				if got != "" {
					t.Fatalf("unbroken run: %q", got)
				}
				return
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q does not say %q", got, w)
				}
			}
		})
	}
}

func TestFewForksInterval(t *testing.T) {
	withCI := record.Summary{Variant: "a", Metric: "rps", N: 6, Median: 10, Low: 9, High: 11, Confidence: 0.95}
	noCI := record.Summary{Variant: "b", Metric: "rps", N: 5, Median: 10, Low: math.NaN(), High: math.NaN()}
	for _, c := range []struct {
		name string
		rows []record.Summary
		want string
	}{
		{"every cell has its 95% interval: the method's sentence stands unqualified", []record.Summary{withCI}, ""},
		{"a 5-fork cell has none: the method says what those cells show instead", []record.Summary{withCI, noCI},
			" (cells with too few forks for it show the verdicts' 90% interval, labelled, or none)"},
		{"no summary at all (an interrupted run): nothing to qualify", nil, ""},
	} {
		v := &runView{run: &record.Run{Summary: c.rows}}
		if got := v.fewForksInterval("forks"); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
