package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/markdown"
	"github.com/threadlab/threadlab/store/record"
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
		"<script>x</script>": `\<script\>x\</script\>`,
		"[link](http://x)":   `\[link\](http:` + "\u2060" + `//x)`, // store/markdown: a word joiner stops the autolink
		"two\nlines":         "two lines",
		"*bold* _it_":        `\*bold\* \_it\_`,
		"~42 and ~53":        `\~42 and \~53`, // GitHub would strike through "42 and "
	} {
		if got := mdText(in); got != want {
			t.Errorf("mdText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMarkdownHostileGolden: claim text, the profile, title, question, host
// and error of a run set to store/markdown's hostile corpus (a link, a
// remote image, a mention, an issue reference, math, HTML, a backtick
// closing the profile's code span, a line break into a heading) render in
// report.md as plain text: no fragment of it is live outside a code span.
// The golden pins the exact escaping; go test -update rewrites it.
func TestMarkdownHostileGolden(t *testing.T) {
	_, runDir := copyRun(t, "pool-sweep/"+poolRun)
	var meta map[string]any
	b, err := os.ReadFile(filepath.Join(runDir, record.RunFile))
	must(t, err)
	must(t, json.Unmarshal(b, &meta))
	for _, k := range []string{"profile", "title", "question", "host", "error"} {
		meta[k] = k + " " + markdown.Hostile
	}
	meta["state"] = "failed"
	b, _ = json.MarshalIndent(meta, "", "  ")
	must(t, os.WriteFile(filepath.Join(runDir, record.RunFile), b, 0o644))
	var verdicts []map[string]any
	b, err = os.ReadFile(filepath.Join(runDir, record.VerdictsFile))
	must(t, err)
	must(t, json.Unmarshal(b, &verdicts))
	for _, v := range verdicts {
		v["says"] = "says " + markdown.Hostile
		v["id"] = v["id"].(string) + "`x"
	}
	b, _ = json.MarshalIndent(verdicts, "", "  ")
	must(t, os.WriteFile(filepath.Join(runDir, record.VerdictsFile), b, 0o644))

	r, err := record.Read(runDir)
	must(t, err)
	out := t.TempDir()
	_, err = Run(r, out)
	must(t, err)
	got := readFile(t, out, "pool-sweep/"+poolRun+"/"+MarkdownFile)
	if live := markdown.Live(got, markdown.HostileFragments); len(live) > 0 {
		t.Errorf("report.md renders hostile text as markup: %q", live)
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "# heading") || strings.HasPrefix(line, "> quote") {
			t.Errorf("a line break in data started a block: %q", line)
		}
	}
	path := filepath.Join("testdata", "golden", "hostile-report.md")
	if *update {
		must(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no golden (run go test ./render/report -run TestMarkdownHostileGolden -update): %v", err)
	}
	if got != string(want) {
		t.Errorf("report.md differs from %s (inspect, then -update):\n%s", path, got)
	}
}

// TestMarkdownWarnings: the run's warnings reach report.md as a list, as
// plain text, so a pull request's reader sees what the HTML page says
// (review reports.md 2.1: report.md had none of them).
func TestMarkdownWarnings(t *testing.T) {
	v := &runView{run: &record.Run{}, Title: "t", Experiment: "x", ID: "1", Warnings: []string{"variant sync-21 skipped: no JDK 21", "a <b>|c</b>"}}
	md := string(v.markdown())
	for _, want := range []string{"**Warnings:**\n\n- variant sync-21 skipped: no JDK 21\n- a \\<b\\>\\|c\\</b\\>\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if md := string((&runView{run: &record.Run{}, Title: "t"}).markdown()); strings.Contains(md, "Warnings") {
		t.Errorf("a run without warnings has a Warnings list:\n%s", md)
	}
}
