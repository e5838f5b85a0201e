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
