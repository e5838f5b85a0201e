package diff

import (
	_ "embed"
	"html/template"
	"io"
	"strings"

	"github.com/threadlab/threadlab/env"
)

//go:embed compare.html
var compareHTML string

var comparePage = template.Must(template.New("compare").Funcs(template.FuncMap{
	"oldCell":   oldCell,
	"newCell":   newCell,
	"ciName":    ciName,
	"delta":     delta,
	"deltaCI":   deltaCI,
	"pCell":     pCell,
	"direction": direction,
	"trials":    trialCount,
	"orDash":    orDash,
	"alpha":     func(r *Result) float64 { return r.Alpha },
	"regress":   func(t Table, row Row) bool { return row.Regression(t.HigherIsBetter) },
	"notes":     htmlNotes,
	"better": func(t Table, row Row) bool {
		return row.Cmp != nil && row.Cmp.Significant && !row.Regression(t.HigherIsBetter)
	},
	"lower": func(s string) string {
		if s == "" {
			return s
		}
		return strings.ToLower(s[:1]) + s[1:]
	},
}).Parse(compareHTML))

// noteView is a table's footnotes for the page: the same numbered texts
// and cell markers as the Markdown and text outputs.
type noteView struct {
	Texts []string
	Marks []markView
}

type markView struct{ Old, New, Delta string }

func htmlNotes(t Table, alpha float64) noteView {
	n := t.footnotes(alpha)
	v := noteView{Texts: n.texts}
	for _, m := range n.marks {
		v.Marks = append(v.Marks, markView{m.old, m.new, m.delta})
	}
	return v
}

// htmlView is what the comparison page shows.
type htmlView struct {
	*Result
	Title    string
	Alerts   []alertView
	SameHost string
	Summary  string
	Claims   string
	Method   string
	Points   bool
	Groups   bool
	Links    Links
}

type alertView struct {
	Headline, Detail string
	Fields           []env.Difference
	List             []string
}

// Links are the pages a comparison page points to, relative to it; empty
// fields are left out.
type Links struct {
	Up, Old, New string
}

// HTML writes the comparison as a standalone page (inline CSS, no script):
// the warnings first, the two runs, changed verdicts, a table per metric
// with Δ, its interval, p and a geomean row, and the two fingerprints side
// by side. Everything from the data is escaped by html/template.
func (r *Result) HTML(w io.Writer, links Links) error {
	v := htmlView{Result: r, Title: r.title(), SameHost: r.sameHost(), Summary: r.verdictLine(), Claims: r.claimLine(), Method: r.method(), Links: links}
	for _, a := range r.alerts() {
		v.Alerts = append(v.Alerts, alertView{a.headline, a.detail, a.fields, a.list})
	}
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			v.Points = v.Points || row.Point != ""
			v.Groups = v.Groups || (row.Group != "" && row.Group != t.Rows[0].Group)
		}
	}
	return comparePage.Execute(w, v)
}
