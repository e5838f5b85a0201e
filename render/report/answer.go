package report

import (
	"fmt"
	"html/template"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// extraPartial is a rendered block another part of threadlab adds to a run
// page after the verdicts (an across-runs table, a per-fork series
// chart): the hook keeps those additions out of this package's template.
type extraPartial struct {
	ID, Title string
	HTML      template.HTML
}

// answer is the run page's answer in at most two sentences: the best
// median of the primary metric at the headline point against the other
// variants (controls, role: control, given apart and never ranked), then
// how the claims came out (the list below gives each).
func (v *runView) answer() string {
	var sentences []string
	l := v.layout
	if tie := v.tieAnswer(); tie != "" {
		sentences = append(sentences, tie)
	} else if len(l.Points) > 0 && l.Primary != "" {
		point := l.Points[len(l.Points)-1]
		type med struct {
			name string
			x    float64
		}
		// Controls (role: control) are references, not choices: the
		// ranking is of the others, and the controls are given after it.
		var ms, ctl []med
		for _, vr := range l.Variants {
			if s := v.summaryOf(vr, point, l.Measured, l.Primary); s != nil {
				if v.controls[vr] {
					ctl = append(ctl, med{vr, s.Median})
				} else {
					ms = append(ms, med{vr, s.Median})
				}
			}
		}
		higher := metric.HigherIsBetter(l.Primary)
		byBest := func(xs []med) {
			sort.SliceStable(xs, func(i, j int) bool {
				if higher {
					return xs[i].x > xs[j].x
				}
				return xs[i].x < xs[j].x
			})
		}
		byBest(ms)
		byBest(ctl)
		label, _, _ := strings.Cut(metric.Label(l.Primary), " (")
		at := ""
		if point != "" {
			at = " at " + pointLabel(point, l.SweepKeys)
		}
		u := unitSuffix(l.Primary)
		// controlsClause gives the controls by name while there is one,
		// and as a range when there are more.
		controlsClause := func() string {
			switch len(ctl) {
			case 0:
				return ""
			case 1:
				return "; the control " + ctl[0].name + " " + num(ctl[0].x) + u
			}
			lo, hi := ctl[0].x, ctl[len(ctl)-1].x
			if lo > hi {
				lo, hi = hi, lo
			}
			return fmt.Sprintf("; the %d controls between %s and %s%s", len(ctl), num(lo), num(hi), u)
		}
		switch {
		case len(ms) > 1:
			// Up to three others are named one by one; more read as a
			// list nobody follows, so the runner-up is named and the
			// rest given as a range.
			var rest []string
			others := ms[1:]
			if len(others) > 3 {
				lo, hi := others[1].x, others[len(others)-1].x
				if lo > hi {
					lo, hi = hi, lo
				}
				rest = []string{others[0].name + " " + num(others[0].x) + u,
					fmt.Sprintf("the other %d between %s and %s%s", len(others)-1, num(lo), num(hi), u)}
			} else {
				for _, m := range others {
					rest = append(rest, m.name+" "+num(m.x)+u)
				}
			}
			best := "highest"
			if !higher {
				best = "lowest"
			}
			sentences = append(sentences, fmt.Sprintf("On this host %s had the %s median %s%s, %s%s, against %s%s",
				ms[0].name, best, label, at, num(ms[0].x), u, strings.Join(rest, " and "), controlsClause()))
		case len(ms) == 1 && len(ctl) > 0:
			sentences = append(sentences, fmt.Sprintf("On this host %s had a median %s%s of %s%s%s",
				ms[0].name, label, at, num(ms[0].x), u, controlsClause()))
		}
	}
	if len(v.recorded) > 0 {
		s := upperFirst(countClaims(v.recorded, v.readings).String()) + ", each listed below"
		if v.State != "complete" {
			s += "; the run did not complete, so these may change"
		}
		sentences = append(sentences, s)
	}
	if len(sentences) == 0 {
		return "No answer yet: this run has neither a summary of its primary metric nor claim verdicts (state " + orDash(v.State) + ": they are computed when a run completes)."
	}
	return strings.Join(sentences, ". ") + "."
}

// tieAnswer is the answer's first sentence when every claim of the run is
// an equality between two variants (a band: at_least with at_most): such
// a manifest asks whether pairs are the same, and ranking all its variants
// by the primary metric compares what no claim compares (aot-cache's page
// ranked a CPU burst against an I/O burst). It gives the range of the
// pairs' ratios and the pairs; "" when any claim is not such a tie, or no
// verdict has a ratio.
func (v *runView) tieAnswer() string {
	if len(v.recorded) == 0 {
		return ""
	}
	lo, hi := 0.0, 0.0
	var pairs, bands []string
	seen := map[string]bool{}
	for _, x := range v.recorded {
		c := v.checks[x.ID]
		if c == nil || len(c.Compare) != 2 || c.AtLeast == nil || c.AtMost == nil {
			return ""
		}
		if x.Ratio == 0 {
			continue
		}
		if len(pairs) == 0 || x.Ratio < lo {
			lo = x.Ratio
		}
		if len(pairs) == 0 || x.Ratio > hi {
			hi = x.Ratio
		}
		if p := c.Compare[0] + "/" + c.Compare[1]; !seen[p] {
			seen[p] = true
			pairs = append(pairs, p)
		}
		if b := strconv.FormatFloat(*c.AtLeast, 'f', 2, 64) + "–" + strconv.FormatFloat(*c.AtMost, 'f', 2, 64); !seen["band "+b] {
			seen["band "+b] = true
			bands = append(bands, b)
		}
	}
	if len(pairs) == 0 {
		return ""
	}
	claims := "Its claim asks"
	if len(v.recorded) > 1 {
		claims = fmt.Sprintf("Each of its %d claims asks", len(v.recorded))
	}
	band := "the band " + bands[0]
	if len(bands) > 1 {
		band = "their bands (" + strings.Join(bands, ", ") + ")"
	}
	ratio := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) } // ties differ in the third digit
	ratios := "the ratio came out at " + ratio(lo)
	if hi != lo {
		ratios = "the ratios came out between " + ratio(lo) + " and " + ratio(hi)
	}
	return fmt.Sprintf("%s whether two variants are the same within %s; on this host %s (%s)",
		claims, band, ratios, strings.Join(pairs, ", "))
}

// sentenceEnd finds the end of a sentence: a full stop, question or
// exclamation mark followed by a space and a capital, or closing the text.
// "2.54", "p = 0.004" and "e.g. x" do not end one.
var sentenceEnd = regexp.MustCompile(`[.!?](\s+[A-Z0-9]|\s*$)`)

// sentences counts the sentences of a plain text.
func sentences(s string) int {
	return len(sentenceEnd.FindAllStringIndex(strings.TrimSpace(s), -1))
}

// thenAdvice is a decision's "then" as a page may show it: only where the
// pick stands (supported, or smaller than claimed), marked measured when
// the manifest names the claims that test it and all of them held, and
// the seed's advice otherwise.
type thenAdvice struct {
	Text   string
	Show   bool
	Tested bool
	Note   string
}

func thenOf(d *record.Decision, rd reading, vs []record.Verdict, checks map[string]*stats.Check, seeds map[string]seedFigure) thenAdvice {
	if d == nil || strings.TrimSpace(d.Then) == "" {
		return thenAdvice{}
	}
	t := thenAdvice{Text: strings.TrimRight(strings.TrimSpace(d.Then), "."),
		Show: rd.Outcome == stats.OutcomeSupported || rd.Outcome == stats.OutcomeSmaller}
	if len(d.TestedBy) == 0 {
		t.Note = "the seed's advice, not tested here"
		return t
	}
	var failed []string
	for _, id := range d.TestedBy {
		found := false
		for _, x := range vs {
			if x.ID != id {
				continue
			}
			found = true
			if r := readClaim(x, checks[id], seeds[id]); r.Outcome != stats.OutcomeSupported {
				failed = append(failed, id+" "+r.OutcomeText)
			}
		}
		if !found {
			failed = append(failed, id+" not in this run")
		}
	}
	if len(failed) > 0 {
		t.Show = false
		t.Note = "tested here and not borne out (" + strings.Join(failed, "; ") + ")"
		return t
	}
	t.Tested = true
	t.Note = "measured here (" + strings.Join(d.TestedBy, ", ") + ")"
	return t
}

// answerClause is one clause of the index's answer: a pick, when it
// applies, and the run page that is its evidence.
type answerClause struct{ Pick, When, Href, Link, Note string }

// indexAnswer is the index's answer in two sentences: the picks the
// evidence supports, then the situations it leaves open or reverses.
type indexAnswer struct {
	Picks, Others []answerClause
	Any           bool
}

// newIndexAnswer writes the index's answer from its decision rows (sorted
// with the rows a reader can act on first).
func newIndexAnswer(rows []decisionRow) indexAnswer {
	var a indexAnswer
	for _, d := range rows {
		a.Any = true
		c := answerClause{Pick: d.Pick, When: clauseText(d.When), Href: d.Href, Link: d.Experiment}
		switch d.Reading.Outcome {
		case stats.OutcomeSupported:
			a.Picks = append(a.Picks, c)
		case stats.OutcomeSmaller:
			c.Note = "a smaller effect than claimed"
			switch {
			case d.Reading.Direction != "" && d.Reading.Dir == 0:
				c.Note = "no clear lead here, and smaller than claimed"
			case d.Reading.Negligible != "":
				c.Note = "ahead by only " + d.Reading.Negligible + ", inside the margin the reports count as equal: close to a tie here"
			}
			a.Picks = append(a.Picks, c)
		default:
			c.Note = d.Reading.OutcomeText
			a.Others = append(a.Others, c)
		}
	}
	return a
}

// clauseText makes a decision's "when" a clause inside a sentence: the
// first word lowered, no full stop inside or at the end.
func clauseText(s string) string {
	s = strings.TrimRight(strings.TrimSpace(s), ".")
	s = strings.ReplaceAll(s, ". ", "; ")
	// Lower a capitalised first word ("Blocking," too), keep acronyms
	// and proper nouns ("WebFlux", "JDBC", "CPU-bound") as written.
	word := strings.TrimRight(strings.SplitN(s, " ", 2)[0], ",;:")
	r := []rune(word)
	if len(r) > 0 && unicode.IsUpper(r[0]) && strings.ToLower(string(r[1:])) == string(r[1:]) {
		return string(unicode.ToLower(r[0])) + s[len(string(r[0])):]
	}
	return s
}
