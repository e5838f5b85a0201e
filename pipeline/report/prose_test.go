package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/pipeline/record"
)

func TestClaimSentence(t *testing.T) {
	seed := seedFigure{1.83, "000: virtual 1042 ms vs WebFlux 569 ms wall."}
	for _, c := range []struct {
		v         record.Verdict
		seed      seedFigure
		want, why string
	}{
		{record.Verdict{Says: "Virtual threads win.", Status: "supported", Ratio: 2.21, Low: 2.09, High: 2.33, P: 0.004}, seedFigure{},
			"Supported: virtual threads win (measured ratio 2.21, 95% CI 2.09–2.33, p = 0.004).", "figures in brackets, first word lowered"},
		{record.Verdict{Says: "WebFlux beats virtual", Status: "inconclusive", Ratio: 0.95, Low: 0.89, High: 1.45, Leans: "supported"}, seed,
			"Not settled: whether WebFlux beats virtual (measured ratio 0.95, 95% CI 0.89–1.45). The seed reported 1.83 (000: virtual 1042 ms vs WebFlux 569 ms wall). The medians alone lean supported, which is a direction, not a result.",
			"a proper noun keeps its case; the seed's figure; the lean is not a result"},
		{record.Verdict{Says: "Platform wins", Status: "contradicted"}, seedFigure{}, "Not so: the data contradicts that platform wins.", "no figures"},
	} {
		if got := claimSentence(c.v, c.seed); got != c.want {
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
	for _, want := range []string{`<section id="method"`, "a burst of 600 requests released at the same instant", `class="answer"`, "The seed reported 1.83"} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q", want)
		}
	}
	index := readFile(t, out, "index.html")
	if !strings.Contains(index, "measured ratio 2.21, 95% CI 2.09–2.33, p = 0.004") || !strings.Contains(index, "the seed: 1.83") {
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
