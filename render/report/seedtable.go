package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/threadlab/threadlab/experiments/seeds"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/store/record"
)

// seedTable is a seed write-up's own results table beside our medians
// (experiments/seeds/tables.csv): per variant, the seed's rows, one per
// scenario it ran, then ours, one per sweep point. Numbers of the two are
// read at different scales, which Scale states; each seed figure keeps
// the write-up's wording (~42, >99.9) and says what it measured where
// that differs from our column.
type seedTable struct {
	Seed    string
	Heading string
	Scale   string
	Cols    []seedCol
	Rows    []seedTableRow
	Sources []string // where in the write-up the figures come from, once each
}

type seedCol struct{ Metric, Label string }

type seedTableRow struct {
	Variant string // on the first row of a variant only
	Ours    bool
	Source  string // "seed 002" or "ours"
	Load    string // the seed's scenario and its users, or our point and forks
	Cells   []seedCell
}

type seedCell struct{ Value, Note string }

// seedTables builds one table per write-up that has figures for this
// experiment.
func (v *runView) seedTables() ([]*seedTable, error) {
	figs, err := seeds.TableFor(v.Experiment)
	if err != nil {
		return nil, fmt.Errorf("seed tables: %w (fix %s; go test ./experiments/seeds says where)", err, seeds.TablesFile)
	}
	var order []string
	bySeed := map[string][]seeds.Figure{}
	for _, f := range figs {
		if _, ok := bySeed[f.Seed]; !ok {
			order = append(order, f.Seed)
		}
		bySeed[f.Seed] = append(bySeed[f.Seed], f)
	}
	var out []*seedTable
	for _, s := range order {
		out = append(out, v.seedTable(s, bySeed[s]))
	}
	return out, nil
}

func (v *runView) seedTable(seed string, figs []seeds.Figure) *seedTable {
	l := v.layout
	t := &seedTable{Seed: seed, Heading: fmt.Sprintf("Seed %s's figures beside ours", seed)}
	var metrics []string
	for _, f := range figs {
		if !slices.Contains(metrics, f.Metric) {
			metrics = append(metrics, f.Metric)
		}
		if !slices.Contains(t.Sources, f.From) {
			t.Sources = append(t.Sources, f.From)
		}
	}
	slices.SortStableFunc(metrics, func(a, b string) int { return metric.Rank(a) - metric.Rank(b) })
	for _, m := range metrics {
		t.Cols = append(t.Cols, seedCol{Metric: m, Label: metric.Label(m)})
	}
	variants := slices.Clone(l.Variants)
	for _, f := range figs {
		if !slices.Contains(variants, f.Variant) {
			variants = append(variants, f.Variant) // in the seed's table, not in this run
		}
	}
	for _, vr := range variants {
		first := len(t.Rows)
		var scenarios []string
		for _, f := range figs {
			if f.Variant == vr && !slices.Contains(scenarios, f.Scenario) {
				scenarios = append(scenarios, f.Scenario)
			}
		}
		for _, sc := range scenarios {
			row := seedTableRow{Source: "seed " + seed, Cells: make([]seedCell, len(metrics))}
			for _, f := range figs {
				if f.Variant != vr || f.Scenario != sc {
					continue
				}
				row.Load = fmt.Sprintf("%s (%s users)", sc, thousands(f.Users))
				row.Cells[slices.Index(metrics, f.Metric)] = seedCell{Value: f.Value, Note: f.Note}
			}
			t.Rows = append(t.Rows, row)
		}
		if len(scenarios) == 0 {
			t.Rows = append(t.Rows, seedTableRow{Source: "seed " + seed, Load: "not in the write-up's table", Cells: make([]seedCell, len(metrics))})
		}
		ran := false
		for _, p := range l.Points {
			row := seedTableRow{Ours: true, Source: "ours", Cells: make([]seedCell, len(metrics))}
			n := 0
			for i, m := range metrics {
				s := v.summaryOf(vr, p, l.Measured, m)
				if s == nil || math.IsNaN(s.Median) {
					continue
				}
				n = max(n, s.N)
				row.Cells[i] = seedCell{Value: num(s.Median)}
				if d, ok := metric.Lookup(m); ok && d.PerCore {
					row.Cells[i].Note = d.Unit // "% of one core", beside the seed's "% of the whole host"
				}
			}
			if n == 0 {
				continue
			}
			ran = true
			row.Load = orDash(pointLabel(p, l.SweepKeys))
			if p == "" {
				row.Load = "as run"
			}
			row.Load += fmt.Sprintf(" (median of %d)", n)
			t.Rows = append(t.Rows, row)
		}
		if !ran {
			why := "not run here"
			if len(v.run.Summary) == 0 {
				why = "no medians in this run (no summary.csv)"
			}
			t.Rows = append(t.Rows, seedTableRow{Ours: true, Source: "ours", Load: why, Cells: make([]seedCell, len(metrics))})
		}
		t.Rows[first].Variant = vr
	}
	t.Scale = v.seedScale(seed, figs)
	return t
}

// seedScale states the two scales side by side: the seed's scenarios and
// host against this run's points and host.
func (v *runView) seedScale(seed string, figs []seeds.Figure) string {
	lo, hi := figs[0].Users, figs[0].Users
	for _, f := range figs {
		lo, hi = min(lo, f.Users), max(hi, f.Users)
	}
	users := thousands(lo)
	if hi != lo {
		users += "–" + thousands(hi)
	}
	var ours []string
	for _, p := range v.layout.Points {
		if p != "" {
			ours = append(ours, pointLabel(p, v.layout.SweepKeys))
		}
	}
	load := "the load in Method"
	if len(ours) > 0 {
		load = strings.Join(ours, ", ")
	}
	host := orDash(v.Host)
	return fmt.Sprintf("Scale: seed %s ran %s users on %s. This run ran %s on %s, and its figures are medians over forks of "+
		"the measured group %q. Read directions and ratios across the two, not absolute values: the loads, hosts and "+
		"durations differ, and where a seed figure measured something else than our column (CPU of the whole host, "+
		"heap as %% of 2 GiB, an average rather than a peak) its note says so.",
		seed, users, seeds.Hosts[seed], load, host, v.layout.Measured)
}

// thousands writes n with thousands separators: 60,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// markdown renders the table for report.md.
func (t *seedTable) markdown() []byte {
	if t == nil {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n%s\n\n", mdText(t.Heading), mdText(t.Scale))
	b.WriteString("| variant | source | load |")
	for _, c := range t.Cols {
		b.WriteString(" " + mdText(c.Label) + " |")
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat("--:|", len(t.Cols)) + "\n")
	for _, r := range t.Rows {
		src := mdText(r.Source)
		if r.Ours {
			src = "**" + src + "**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |", mdText(r.Variant), src, mdText(r.Load))
		for _, c := range r.Cells {
			cell := orDash(c.Value)
			if c.Note != "" {
				cell += " (" + c.Note + ")"
			}
			b.WriteString(" " + mdText(cell) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\nFrom the write-up: " + mdText(strings.Join(t.Sources, "; ")) + ".\n\n")
	return []byte(b.String())
}

// size reads our interval against the seed's figure at this run's scale
// (issue 22): the scaled figure where the manifest gives one, the seed's own
// otherwise, so a figure measured at the seed's larger load is not read as
// "smaller here" at ours. The reading names which figure it used.
//
// A claim of equality's band decides before the digits do: when the claim
// is "the same within a band" (Band: a tie, or flat_over), the seed's
// figure lies inside it and so does our whole interval, the size is
// reproduced. Call-depth's flat median (flat_over, seed 1.00, ours 1.004
// with a 90% CI of 1.004–1.005 inside 0.91–1.10) read "larger here"
// before, true to the digit and wrong about the claim.
func (s seedFigure) size(x record.Verdict) string {
	fig, note := s.Value, ""
	if s.Scaled != nil && *s.Scaled != s.Value {
		fig, note = *s.Scaled, " (against the scaled figure)"
	}
	if x.Low == 0 && x.High == 0 || math.IsNaN(fig) {
		return ""
	}
	if b := s.Band; b != nil && fig >= b[0] && fig <= b[1] && x.Low >= b[0] && x.High <= b[1] {
		return "reproduced (both inside the claim's band " + strconv.FormatFloat(b[0], 'f', 2, 64) + "–" + strconv.FormatFloat(b[1], 'f', 2, 64) + ")" + note
	}
	if m := magnitude(fig, x); m != "" {
		return m + note
	}
	return ""
}

// scaledNote is the seed's figure scaled to this run's load, where the
// manifest gives one (seed.scaled: the write-up's 1,000 threads for 1,000
// requests are 600 for our 600), written beside the seed's own figure and
// labelled so the two are never read as one: ", scaled to this run's load:
// 600". Empty when the manifest gives none or it equals the seed's.
func (s seedFigure) scaledNote() string {
	if s.Scaled == nil || *s.Scaled == s.Value {
		return ""
	}
	return ", scaled to this run's load: " + num(*s.Scaled)
}
