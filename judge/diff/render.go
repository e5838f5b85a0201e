package diff

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/digits"
	"github.com/threadlab/threadlab/store/markdown"
)

// Markdown writes the comparison for a pull request: warnings about the
// hosts and the design first (GitHub alerts), then the two runs, one table
// per metric with numbered footnotes, the method, and every fingerprint
// difference folded away at the end.
func (r *Result) Markdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "## threadlab diff: %s\n\n", md(r.title()))
	for _, a := range r.alerts() {
		fmt.Fprintf(bw, "> [!WARNING]\n> **%s**", md(a.headline))
		if a.detail != "" {
			fmt.Fprintf(bw, " %s", md(a.detail))
		}
		fmt.Fprintln(bw)
		if len(a.fields) > 0 {
			fmt.Fprintln(bw, ">\n> | field | old | new |\n> |---|---|---|")
			for _, d := range a.fields {
				fmt.Fprintf(bw, "> | %s | %s | %s |\n", md(d.Field), md(orDash(d.A)), md(orDash(d.B)))
			}
		}
		for _, l := range a.list {
			fmt.Fprintf(bw, "> - %s\n", md(l))
		}
		fmt.Fprintln(bw)
	}
	if line := r.sameHost(); line != "" {
		fmt.Fprintf(bw, "%s\n\n", md(line))
	}
	fmt.Fprintln(bw, "| | run | experiment | profile | state | trials |\n|---|---|---|---|---|---|")
	for _, s := range []struct {
		name string
		side Side
	}{{"old", r.Old}, {"new", r.New}} {
		fmt.Fprintf(bw, "| %s | %s | %s | %s | %s | %s |\n", s.name, markdown.Code(s.side.Dir),
			md(s.side.Experiment), md(orDash(s.side.Profile)), md(orDash(s.side.State)), trialCount(s.side))
	}
	fmt.Fprintf(bw, "\n%s\n", md(r.verdictLine()))
	if len(r.Verdicts) > 0 {
		fmt.Fprintf(bw, "\n### Claims (%s)\n\n| claim | old | new | old figure | new figure |\n|---|---|---|--:|--:|\n", r.claimLine())
		for _, v := range r.Verdicts {
			mark := ""
			if v.Changed() {
				mark = "**"
			}
			fmt.Fprintf(bw, "| %s %s | %s | %s%s%s | %s | %s |\n", md(v.Says), markdown.Code(v.ID), md(v.Old), mark, md(v.New), mark, md(orDash(v.OldFigure)), md(orDash(v.NewFigure)))
		}
	}
	for _, t := range r.Tables {
		fmt.Fprintf(bw, "\n### %s (%s)\n\n", md(t.Metric), direction(t))
		cols := t.columns(r.Level)
		var head, align []string
		for _, c := range cols {
			head = append(head, c.name)
			align = append(align, c.align)
		}
		fmt.Fprintf(bw, "| %s |\n|%s|\n", strings.Join(head, " | "), strings.Join(align, "|"))
		notes := t.footnotes(r.Alpha)
		for i, row := range t.Rows {
			var cells []string
			for _, c := range cols {
				cells = append(cells, md(c.value(row, notes.marks[i])))
			}
			fmt.Fprintf(bw, "| %s |\n", strings.Join(cells, " | "))
		}
		if t.Geomean.Cells > 0 {
			row := make([]string, len(cols))
			row[0] = "**geomean**"
			row[len(cols)-3] = "**" + t.Geomean.String() + "**"
			fmt.Fprintf(bw, "| %s |\n", strings.Join(row, " | "))
		}
		if len(notes.texts) > 0 {
			fmt.Fprintln(bw)
			for i, n := range notes.texts {
				fmt.Fprintf(bw, "%s %s  \n", sup(i+1), md(n))
			}
		}
	}
	fmt.Fprintf(bw, "\n<sub>%s</sub>\n", md(r.method()))
	if len(r.Fingerprint) > 0 {
		fmt.Fprintf(bw, "\n<details><summary>%d fingerprint difference(s), %d that can move the numbers</summary>\n\n",
			len(r.Fingerprint), len(r.Mismatch()))
		fmt.Fprintln(bw, "| field | old | new | matters |\n|---|---|---|---|")
		for _, d := range r.Fingerprint {
			m := "no"
			if d.Matters {
				m = "**yes**"
			}
			fmt.Fprintf(bw, "| %s | %s | %s | %s |\n", md(d.Field), md(orDash(d.A)), md(orDash(d.B)), m)
		}
		fmt.Fprintln(bw, "\n</details>")
	}
	return bw.Flush()
}

// Text writes the same comparison as aligned plain text for a terminal.
func (r *Result) Text(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "threadlab diff: %s\n", r.title())
	for _, a := range r.alerts() {
		fmt.Fprintf(bw, "\nWARNING: %s", strings.ToLower(a.headline[:1])+a.headline[1:])
		if a.detail != "" {
			fmt.Fprintf(bw, " %s", a.detail)
		}
		fmt.Fprintln(bw)
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
		for _, d := range a.fields {
			fmt.Fprintf(tw, "  %s\told: %s\tnew: %s\n", d.Field, orDash(d.A), orDash(d.B))
		}
		tw.Flush()
		for _, l := range a.list {
			fmt.Fprintf(bw, "  - %s\n", l)
		}
	}
	if line := r.sameHost(); line != "" {
		fmt.Fprintf(bw, "\n%s\n", line)
	}
	fmt.Fprintln(bw)
	for _, s := range []struct {
		name string
		side Side
	}{{"old", r.Old}, {"new", r.New}} {
		trials := fmt.Sprintf("%d trials", s.side.Trials)
		if s.side.Invalid > 0 {
			trials += fmt.Sprintf(", %d invalid and left out", s.side.Invalid)
		}
		fmt.Fprintf(bw, "%s: %s (%s, profile %s, %s, %s)\n", s.name, s.side.Dir, s.side.Experiment,
			orDash(s.side.Profile), orDash(s.side.State), trials)
	}
	fmt.Fprintf(bw, "\n%s\n", r.verdictLine())
	if len(r.Verdicts) > 0 {
		fmt.Fprintf(bw, "\nclaims: %s\n", r.claimLine())
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
		for _, v := range r.Verdicts {
			mark := ""
			if v.Changed() {
				mark = "  (changed)"
			}
			fmt.Fprintf(tw, "  %s\t%s -> %s%s\n", v.ID, v.Old, v.New, mark)
		}
		tw.Flush()
	}
	for _, t := range r.Tables {
		fmt.Fprintf(bw, "\n%s (%s)\n", t.Metric, direction(t))
		cols := t.columns(r.Level)
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
		var head []string
		for _, c := range cols {
			head = append(head, c.name)
		}
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		notes := t.footnotes(r.Alpha)
		for i, row := range t.Rows {
			var cells []string
			for _, c := range cols {
				cells = append(cells, c.value(row, notes.marks[i]))
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		if t.Geomean.Cells > 0 {
			row := make([]string, len(cols))
			row[0] = "geomean"
			row[len(cols)-3] = t.Geomean.String()
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		tw.Flush()
		for i, n := range notes.texts {
			fmt.Fprintf(bw, "%s %s\n", sup(i+1), n)
		}
	}
	fmt.Fprintf(bw, "\n%s\n", r.method())
	return bw.Flush()
}

func (r *Result) title() string {
	if r.Old.Experiment == r.New.Experiment {
		return fmt.Sprintf("%s, %s vs %s", r.Old.Experiment, r.Old.ID, r.New.ID)
	}
	return fmt.Sprintf("%s/%s vs %s/%s", r.Old.Experiment, r.Old.ID, r.New.Experiment, r.New.ID)
}

// alert is a warning shown before any number.
type alert struct {
	headline string
	detail   string
	fields   []env.Difference
	list     []string
}

// alerts are the reasons not to take the numbers at face value: another
// machine or software stack, a missing fingerprint, a different design.
func (r *Result) alerts() []alert {
	var out []alert
	if m := r.Mismatch(); len(m) > 0 {
		var names []string
		for _, d := range m {
			names = append(names, d.Field)
		}
		out = append(out, alert{
			headline: "These runs come from different machines/software: " + strings.Join(names, ", ") + ".",
			detail:   "A difference below may come from the host rather than the change; rerun both sides on one machine to attribute it.",
			fields:   m,
		})
	}
	if len(r.NoFingerprint) > 0 {
		out = append(out, alert{
			headline: fmt.Sprintf("Cannot tell whether these runs come from the same machine: the %s run has no fingerprint.json.",
				strings.Join(r.NoFingerprint, " and the ")),
			detail: "Nothing shows that the CPU, kernel and JDK were the same; treat every difference as possibly the host's.",
		})
	}
	if len(r.Design) > 0 {
		out = append(out, alert{headline: "These runs did not measure the same thing:", list: r.Design})
	}
	return out
}

// sameHost is the reassurance line when the fingerprints agree on
// everything that matters.
func (r *Result) sameHost() string {
	if len(r.NoFingerprint) > 0 || len(r.Mismatch()) > 0 {
		return ""
	}
	if len(r.Fingerprint) == 0 {
		return "Same machine and software: the fingerprints are identical."
	}
	var minor []string
	for _, d := range r.Fingerprint {
		minor = append(minor, d.Field)
	}
	return fmt.Sprintf("Same machine and software: nothing that can move the numbers differs (%d minor difference(s): %s).",
		len(minor), strings.Join(minor, ", "))
}

// verdictLine counts the rows by outcome.
func (r *Result) verdictLine() string {
	var worse, better, same, missing int
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			switch {
			case row.Cmp == nil:
				missing++
			case !row.Cmp.Significant:
				same++
			case row.Regression(t.HigherIsBetter):
				worse++
			default:
				better++
			}
		}
	}
	s := fmt.Sprintf("%d significant regression(s), %d significant improvement(s), %d without a significant difference (~)", worse, better, same)
	if missing > 0 {
		s += fmt.Sprintf(", %d cell(s) in one run only", missing)
	}
	return s + "."
}

// claimLine counts the claims whose verdict changed.
func (r *Result) claimLine() string {
	n := 0
	for _, v := range r.Verdicts {
		if v.Changed() {
			n++
		}
	}
	return fmt.Sprintf("%d of %d verdict(s) changed", n, len(r.Verdicts))
}

func (r *Result) method() string {
	ci := ciName(r.Level)
	return fmt.Sprintf("A fork (a fresh JVM) is the unit of replication, as on the run pages and in the verdicts: each fork is the median of its "+
		"valid iterations in steady state, and each cell the median of its forks, ± the larger distance to the ends of its %s "+
		"(bootstrap of the fork medians, as the verdicts resample). Δ: new against old; \"~\" when the two-sided Mann-Whitney U test of the "+
		"fork medians (each direction at the verdicts' one-sided %g, so α = %g), Holm-corrected across the rows of its table, finds no "+
		"difference, or when the change is inside the noise band (the larger of %.0f%% and either side's CV; a footnote says which). "+
		"Δ %s: the bootstrap interval of new/old, as a compare claim's. geomean: the geometric mean of new/old medians over the table's "+
		"cells, as benchstat reports it. p is the Holm-adjusted p-value; n the forks of old+new.",
		ci, r.Level, r.Alpha, 100*stats.MinEffect, ci)
}

// ciName is the coverage of an interval whose ends are one-sided bounds
// at level: "90% CI" at 0.05.
func ciName(level float64) string {
	return fmt.Sprintf("%g%% CI", math.Round(1000*(1-2*level))/10)
}

func direction(t Table) string {
	if t.HigherIsBetter {
		return "higher is better"
	}
	return "lower is better"
}

func trialCount(s Side) string {
	if s.Invalid == 0 {
		return fmt.Sprintf("%d", s.Trials)
	}
	return fmt.Sprintf("%d (%d invalid, left out)", s.Trials, s.Invalid)
}

// column is one column of a metric table.
type column struct {
	name, align string
	value       func(row Row, m marks) string
}

// columns are variant, then point and group when they vary, then the numbers.
func (t Table) columns(level float64) []column {
	var points, groups bool
	seen := map[string]bool{}
	for _, row := range t.Rows {
		points = points || row.Point != ""
		seen[row.Group] = true
	}
	groups = len(seen) > 1
	cols := []column{{"variant", ":--", func(r Row, _ marks) string { return r.Variant }}}
	if points {
		cols = append(cols, column{"point", ":--", func(r Row, _ marks) string { return orDash(r.Point) }})
	}
	if groups {
		cols = append(cols, column{"group", ":--", func(r Row, _ marks) string { return r.Group }})
	}
	return append(cols,
		column{"old", "--:", func(r Row, m marks) string { return oldCell(r) + m.old }},
		column{"new", "--:", func(r Row, m marks) string { return newCell(r) + m.new }},
		column{"Δ", "--:", func(r Row, m marks) string { return delta(r) + m.delta }},
		column{"Δ " + ciName(level), "--:", func(r Row, _ marks) string { return deltaCI(r) }},
		column{"p", ":--", func(r Row, _ marks) string { return pCell(r) }},
	)
}

func oldCell(r Row) string { return summary(r.Old, r.OldLow, r.OldHigh) }
func newCell(r Row) string { return summary(r.New, r.NewLow, r.NewHigh) }

// summary is "median ± half-width of its bootstrap interval, relative".
func summary(s stats.Summary, lo, hi float64) string {
	switch {
	case s.N == 0:
		return "—"
	case math.IsNaN(lo) || math.IsNaN(hi):
		return num(s.Median) + " ± ?"
	case s.Median == 0:
		return num(s.Median) + " ± " + num(math.Max(hi-s.Median, s.Median-lo))
	}
	half := 100 * math.Max(hi-s.Median, s.Median-lo) / math.Abs(s.Median)
	if half < 1 {
		return fmt.Sprintf("%s ± %.1f%%", num(s.Median), half)
	}
	return fmt.Sprintf("%s ± %.0f%%", num(s.Median), half)
}

func delta(r Row) string {
	switch {
	case r.Cmp != nil:
		return r.Cmp.Verdict
	case r.Old.N == 0 && r.New.N == 0:
		return "no valid trials"
	case r.Old.N == 0:
		return "new only"
	default:
		return "old only"
	}
}

func pCell(r Row) string {
	if r.Cmp == nil {
		return ""
	}
	return fmt.Sprintf("p=%s n=%d+%d", fmtP(r.Cmp.PAdj), r.Cmp.NA, r.Cmp.NB)
}

// marks are the footnote markers of one row's cells.
type marks struct{ old, new, delta string }

// notes are a table's numbered footnotes and each row's markers.
type notes struct {
	texts []string
	marks []marks
}

// footnotes numbers every remark on a table's cells: noise flags and
// invalid trials of each side, and why a change with p < α is still "~".
// Identical texts share a number.
func (t Table) footnotes(alpha float64) notes {
	var n notes
	index := map[string]int{}
	mark := func(text string) string {
		i, ok := index[text]
		if !ok {
			n.texts = append(n.texts, text)
			i = len(n.texts)
			index[text] = i
		}
		return sup(i)
	}
	for _, row := range t.Rows {
		var m marks
		for _, s := range []struct {
			name    string
			flags   []stats.Flag
			invalid []string
			dst     *string
		}{{"old", row.OldFlags, row.OldInvalid, &m.old}, {"new", row.NewFlags, row.NewInvalid, &m.new}} {
			var ms []string
			for _, f := range s.flags {
				ms = append(ms, mark(s.name+": "+f.String()))
			}
			if len(s.invalid) > 0 {
				ms = append(ms, mark(fmt.Sprintf("%s: %d invalid trial(s) left out: %s", s.name, len(s.invalid), strings.Join(s.invalid, "; "))))
			}
			*s.dst = joinMarks(ms)
		}
		if c := row.Cmp; c != nil && c.PAdj < alpha && !c.Significant && c.Note != "" {
			m.delta = joinMarks([]string{mark(c.Note)})
		}
		n.marks = append(n.marks, m)
	}
	return n
}

func joinMarks(ms []string) string {
	if len(ms) == 0 {
		return ""
	}
	return " " + strings.Join(ms, " ")
}

// sup writes n in superscript digits, as benchstat marks its footnotes.
func sup(n int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	ds := []rune(digits)
	var b strings.Builder
	for _, c := range fmt.Sprint(n) {
		b.WriteRune(ds[c-'0'])
	}
	return b.String()
}

// num prints a measured value in digits.Diff: four significant digits,
// enough to see a 0.1% change, and whole numbers from 1000 up. It is the
// one formatter of measured values in threadlab diff's text, markdown and
// HTML, and so on a run's comparison page (compare.html); the report's own
// pages print digits.Page, about 3 significant figures.
func num(x float64) string { return digits.Format(x, digits.Diff) }

// fmtP prints a p-value with two significant digits, as stats does.
func fmtP(p float64) string { return fmt.Sprintf("%.2g", p) }

func cellName(r Row) string {
	parts := []string{r.Variant}
	if r.Point != "" {
		parts = append(parts, r.Point)
	}
	if r.Group != "" {
		parts = append(parts, "group "+r.Group)
	}
	return strings.Join(parts, " ")
}

// md makes untrusted text (claim text, fingerprint values, reasons from
// the host) plain text on one line of Markdown (store/markdown owns the
// rules).
func md(s string) string { return markdown.Text(s) }
