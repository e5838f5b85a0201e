package report

import (
	"fmt"
	"strings"

	"github.com/threadlab/threadlab/pipeline/record"
)

// The steady-state table (issue 10): per cell of the measured group, how
// its forks' iteration sequences were classified (flat, warm-up, slowdown,
// no steady state), whether the forks agree, how many iterations were left
// out before their steady state, how the measured windows behaved second
// by second, and the warm-up recommendation from warmup.csv. It is read
// from steady.json, which runs made before it existed lack: the section is
// then left out.

// steadyView is the template data of the "steady" block.
type steadyView struct {
	Metric string
	Sweep  bool
	Rows   []steadyRow
	First  *firstView // the run-wide first-iteration test; nil without one
}

// firstView is steady.json's first_iteration for the template.
type firstView struct {
	record.FirstIteration
}

// PText renders the sign test's p-value.
func (f firstView) PText() string { return fmt.Sprintf("%.2g", f.P) }

type steadyRow struct {
	Variant, Point                   string
	Flat, Warmup, Slowdown, Unsteady int
	Consistency                      string
	Sweep                            bool // the run has sweep points: show the point column
	Bad                              bool // a fork never settled or slowed down
	Excluded                         int
	Windows                          string // "3 of 4 flat", "" without windows
	WarmupNote                       string
}

// Steady returns the steady-state table, or nil when the run has no
// steady.json (or it cannot be read: the report says nothing rather than
// fail the page; the data stay on disk).
func (v *runView) Steady() *steadyView {
	if v.run == nil || v.run.Dir == "" {
		return nil
	}
	st, ok, err := record.ReadSteady(v.run.Dir)
	if err != nil || !ok {
		return nil
	}
	out := &steadyView{Metric: st.Metric}
	if st.FirstIteration != nil {
		out.First = &firstView{*st.FirstIteration}
	}
	for _, c := range st.Cells {
		if c.Group != v.run.Meta.Measured && v.run.Meta.Measured != "" {
			continue
		}
		r := steadyRow{Variant: c.Variant, Point: c.Point, Consistency: orDash(c.Consistency), Excluded: c.Excluded,
			Flat: c.Counts["flat"], Warmup: c.Counts["warmup"], Slowdown: c.Counts["slowdown"], Unsteady: c.Counts["no steady state"]}
		r.Bad = r.Unsteady > 0 || r.Slowdown > 0
		if len(c.Windows) > 0 {
			flat := 0
			for _, w := range c.Windows {
				if w.Class == "flat" {
					flat++
				}
			}
			r.Windows = fmt.Sprintf("%d of %d flat", flat, len(c.Windows))
		}
		r.WarmupNote = c.WarmupNote
		out.Sweep = out.Sweep || c.Point != ""
		out.Rows = append(out.Rows, r)
	}
	if len(out.Rows) == 0 {
		return nil
	}
	for i := range out.Rows {
		out.Rows[i].Sweep = out.Sweep
	}
	return out
}

// PointText renders a row's sweep point for the table.
func (r steadyRow) PointText() string { return strings.ReplaceAll(r.Point, ";", ", ") }
