package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/threadlab/threadlab/store/markdown"
)

// MarkdownFile is the Markdown twin of a run page, written next to it for
// pull requests and blog posts.
const MarkdownFile = "report.md"

// mdText makes data safe inside Markdown as plain text on one line
// (store/markdown owns the rules).
func mdText(s string) string { return markdown.Text(s) }

// markdown renders the run as Markdown: answer, verdicts, warnings, the
// reproduction table (claim, seed's figure, ours with CI, verdict, host),
// the summary of the primary metric, and links to the HTML page.
func (v *runView) markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", mdText(v.Title))
	fmt.Fprintf(&b, "Experiment %s, run %s, profile %s, state **%s**", markdown.CodeLine(v.Experiment), markdown.CodeLine(v.ID), markdown.CodeLine(orDash(firstOf(v.Profile, "default"))), mdText(orDash(v.State)))
	if v.Host != "" {
		fmt.Fprintf(&b, ", host %s", mdText(v.Host))
	}
	b.WriteString(".\n\n")
	if v.Banner != "" {
		fmt.Fprintf(&b, "> **%s**\n\n", mdText(v.Banner))
	}
	if v.Drift != "" {
		fmt.Fprintf(&b, "> **%s.** %s\n\n", mdText(v.DriftLabel), mdText(v.Drift))
	}
	if len(v.SeedTitles) > 0 {
		fmt.Fprintf(&b, "**Seeds:** %s\n\n", mdText(strings.Join(v.SeedTitles, "; ")))
	}
	if v.Question != "" {
		fmt.Fprintf(&b, "**Question:** %s\n\n", mdText(v.Question))
	}
	if v.Answer != "" {
		fmt.Fprintf(&b, "**Answer:** %s\n\n", mdText(v.Answer))
	}
	for _, c := range v.ClaimList {
		fmt.Fprintf(&b, "- %s\n", mdText(c))
	}
	if len(v.ClaimList) > 0 {
		b.WriteString("\n")
	}
	if v.FDR != "" {
		fmt.Fprintf(&b, "%s\n\n", mdText(v.FDR))
	}
	// The run's warnings, as the HTML page lists them: a reader of the
	// Markdown in a pull request must see them too (review reports.md 2.1).
	if len(v.Warnings) > 0 {
		b.WriteString("**Warnings:**\n\n")
		for _, w := range v.Warnings {
			fmt.Fprintf(&b, "- %s\n", mdText(w))
		}
		b.WriteString("\n")
	}

	// The host's own speed, when it moved or a claim's metric followed it
	// (hostspeed.go): a reader of an inconclusive verdict should know.
	if hs := v.HostSpeed(); hs != nil && (hs.Drifted || len(hs.Followed()) > 0) {
		fmt.Fprintf(&b, "**Host speed:** %s\n\n", mdText(hs.Sentence()))
	}

	b.WriteString("## Reproduction\n\n")
	if len(v.Repro) == 0 {
		b.WriteString("No verdicts were recorded with this run.\n\n")
	} else {
		b.WriteString("| claim | seed's figure | our figure (CI) | verdict | size | host |\n|---|---|---|---|---|---|\n")
		for _, r := range v.Repro {
			ids := ""
			if r.SeedIDs != "" {
				ids = " (" + r.SeedIDs + ")"
			}
			verdict := "**" + mdText(r.StatusText) + "**"
			if r.Strength != r.Status {
				verdict += " (" + mdText(r.Strength) + ")"
			}
			fmt.Fprintf(&b, "| %s %s%s | %s | %s | %s | %s | %s |\n", mdText(r.Says), markdown.Code(r.ID), ids,
				mdText(r.Seed), mdText(r.Ours), verdict, mdText(r.Size), mdText(r.Host))
		}
		b.WriteString("\n")
	}
	if len(v.OtherSeeds) > 0 {
		b.WriteString("The write-ups' other statements about this experiment ([every statement of the five write-ups](../../index.html#seeds)):\n\n")
		b.WriteString("| statement | seed's figure | where it lives | in this run |\n|---|---|---|---|\n")
		for _, o := range v.OtherSeeds {
			fmt.Fprintf(&b, "| %s: %s | %s | %s | %s |\n", o.ID, mdText(o.Says), mdText(o.Figure), mdText(o.Where), mdText(o.In))
		}
		b.WriteString("\n")
	}

	b.Write(v.Wins.markdown())
	for _, t := range v.SeedTables {
		b.Write(t.markdown())
	}

	fmt.Fprintf(&b, "## Summary: %s\n\n", mdText(v.PrimaryTxt))
	t := summaryRows(v)
	if len(t) == 0 {
		b.WriteString("No summary.csv in this run.\n\n")
	} else {
		b.WriteString("| variant | point | n | median | 95% CI | min–max | CV | flags |\n|---|---|--:|--:|--:|--:|--:|---|\n")
		for _, r := range t {
			ci := r.CI
			if r.CIMissing {
				ci = "–"
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", mdText(r.Variant), mdText(orDash(strings.ReplaceAll(r.Point, ";", " "))), r.N, r.Median, ci, r.Range, r.CV, mdText(strings.Join(r.Flags, ", ")))
		}
		b.WriteString("\n")
	}

	if len(v.Merged) > 0 {
		b.WriteString("## Latency of all requests (merged HdrHistograms, ms)\n\n| variant | point | trials | requests |")
		for _, c := range v.MergedCols {
			b.WriteString(" " + c + " |")
		}
		b.WriteString(" max |\n|---|---|--:|--:|" + strings.Repeat("--:|", len(v.MergedCols)) + "--:|\n")
		for _, r := range v.Merged {
			fmt.Fprintf(&b, "| %s | %s | %d | %d |", mdText(r.Variant), mdText(orDash(strings.ReplaceAll(r.Point, ";", " "))), r.Trials, r.Requests)
			for _, c := range r.Cells {
				if c.Hollow {
					b.WriteString(" (" + c.Value + ") |")
				} else {
					b.WriteString(" " + c.Value + " |")
				}
			}
			b.WriteString(" " + r.Max + " |\n")
		}
		fmt.Fprintf(&b, "\nIn brackets: fewer than %d requests lie above that percentile, so it is one of the slowest few requests, not a stable estimate.\n\n", minAbove)
	}
	if len(v.Method) > 0 {
		b.WriteString("## Method\n\n")
		for _, p := range v.Method {
			b.WriteString(mdText(p) + "\n\n")
		}
	}

	b.WriteString("## Links\n\n")
	b.WriteString("- [The full report with charts](index.html) ([charts](index.html#charts), [validity and noise](index.html#validity), [fingerprint](index.html#fingerprint))\n")
	for _, r := range v.Raw {
		fmt.Fprintf(&b, "- [%s](%s): %s\n", mdText(r.Name), r.Href, mdText(r.What))
	}
	if len(v.HistFiles) > 0 {
		fmt.Fprintf(&b, "- %d HdrHistogram logs in [histograms/](index.html#raw), one per trial\n", len(v.HistFiles))
	}
	fmt.Fprintf(&b, "\nReproduce: %s. Rebuild the report from the data alone: %s.\n", markdown.CodeLine(v.Reproduce), markdown.CodeLine(v.Rebuild))
	if v.ReproduceNote != "" {
		fmt.Fprintf(&b, "%s\n", markdown.Text(v.ReproduceNote))
	}
	return b.Bytes()
}

// summaryRows are the primary metric's rows of the measured group.
func summaryRows(v *runView) []summaryRow {
	var out []summaryRow
	for _, r := range v.Summary {
		if r.Primary {
			out = append(out, r)
		}
	}
	return out
}
