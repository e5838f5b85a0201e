package report

import (
	"strings"
	"testing"
)

func TestMarkdownTwin(t *testing.T) {
	out := renderFixture(t)
	md := readFile(t, out, "io-bound/"+ioRun+"/"+MarkdownFile)
	for _, want := range []string{
		"| claim | seed's figure | our figure (CI) | verdict | size | host |",
		"| WebFlux finishes an I/O-bound burst faster than virtual threads `webflux-beats-virtual` (000.3) | 1.83 (000: virtual 1042 ms vs WebFlux 569 ms wall, single trials) | ratio 0.95× (95% CI 0.89–1.45), p = 0.065 | **inconclusive** | smaller here |",
		"**Answer:** On this host ",
		"- Supported: ",
		"Benjamini-Hochberg at a 5% false-discovery rate",
		"[The full report with charts](index.html)",
		// the inventory's statements about io-bound that this run has no verdict for
		"| 000.1: virtual threads finish an I/O burst sooner than 200 platform threads | wall 1325 vs 1042 ms (1.27x), single trials | io-bound/virtual-beats-platform | no verdict in this run (a claim of another profile or a newer manifest) |",
		"[every statement of the five write-ups](../../index.html#seeds)",
		"## Method",
		// seed 000's own table beside our medians
		"| platform | seed 000 | I/O-bound, 600 concurrent (600 users) | 0 (600 of 600 succeeded) | 733 (single trial) | 1201 (single trial) | 1325 (single trial, reused from an earlier post) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if page := readFile(t, out, "io-bound/index.html"); !strings.Contains(page, `href="`+ioRun+`/report.md"`) {
		t.Error("the latest copy does not link the run's report.md")
	}
}

func TestMarkdownEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"a | b":              `a \| b`,
		"<script>x</script>": "&lt;script&gt;x&lt;/script&gt;",
		"[link](http://x)":   `\[link\](http://x)`,
		"two\nlines":         "two lines",
		"*bold* _it_":        `\*bold\* \_it\_`,
		"~42 and ~53":        `\~42 and \~53`, // GitHub would strike through "42 and "
	} {
		if got := mdText(in); got != want {
			t.Errorf("mdText(%q) = %q, want %q", in, got, want)
		}
	}
}
