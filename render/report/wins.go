package report

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/store/record"
)

// Seed 002 ranks its approaches by a "wins per metric" tally: in every
// scenario and metric the approach with the best value wins the cell, an
// approach with request errors ranks below the error-free ones, and a cell
// whose top two are close has no clear winner; the wins are then counted
// per approach ("Virtual Threads on Netty won ~50% of the contests"). The
// report shows the same tally for an experiment with several variants,
// beside the verdicts and with a note on why a count of wins is not a test.

// minWinsVariants is "several": with two variants the tally only restates
// the comparisons table.
const minWinsVariants = 3

// winsNote says what the tally is and is not; the page and report.md print it.
const winsNote = "Seed 002's tally: at each sweep point and for each metric, the variant with the best median wins " +
	"when its interval of the median does not overlap the runner-up's (with too few trials for intervals: when no trial of " +
	"one overlaps the other's range); variants with request errors rank below " +
	"the error-free ones (the seed's rule); otherwise the contest has no clear winner. Contests where every variant " +
	"measured 0 are left out. A win count is not a test: it counts point estimates without error rates, weighs every " +
	"metric alike (p50, p90 and p99 are three wins for one effect, a GC count weighs as much as throughput), hides " +
	"how large a lead is, and changes with the list of metrics. The verdicts above are the tests; read this table " +
	"for where each variant leads, not to decide."

// winsTable is the tally of one run's measured group.
type winsTable struct {
	Variants []string
	Rows     []winsRow // one per metric with at least one contest, in table order
	Total    winsRow
	Note     string
}

// winsRow counts one metric's contests (or all of them, in Total).
type winsRow struct {
	Metric    string // the metric's name; "" in Total
	Label     string
	Wins      []int // per variant, in Variants order
	Undecided int
	Contests  int
}

// Pct is a count as a share of the row's contests, for the total row.
func (r winsRow) Pct(n int) string {
	if r.Contests == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(r.Contests))
}

// newWins tallies the summary rows of the measured group; nil when the run
// has fewer than minWinsVariants variants or no contest at all.
func newWins(sum []record.Summary, variants, points []string, group string) *winsTable {
	if len(variants) < minWinsVariants {
		return nil
	}
	type cell struct{ point, metric string }
	at := map[cell]map[string]*record.Summary{}
	for i := range sum {
		s := &sum[i]
		if s.Group != group || !slices.Contains(variants, s.Variant) {
			continue
		}
		k := cell{s.Point, s.Metric}
		if at[k] == nil {
			at[k] = map[string]*record.Summary{}
		}
		at[k][s.Variant] = s
	}
	w := &winsTable{Variants: variants, Note: winsNote, Total: winsRow{Label: "all metrics", Wins: make([]int, len(variants))}}
	for _, name := range metric.Claimable() {
		row := winsRow{Metric: name, Label: metric.Label(name), Wins: make([]int, len(variants))}
		for _, p := range points {
			byVariant := at[cell{p, name}]
			if len(byVariant) < 2 {
				continue
			}
			winner, ok := contest(byVariant, at[cell{p, "errors"}], variants, metric.HigherIsBetter(name))
			if !ok {
				continue // nothing measured: not a contest
			}
			row.Contests++
			if i := slices.Index(variants, winner); i >= 0 {
				row.Wins[i]++
			} else {
				row.Undecided++
			}
		}
		if row.Contests == 0 {
			continue
		}
		w.Rows = append(w.Rows, row)
		w.Total.Contests += row.Contests
		w.Total.Undecided += row.Undecided
		for i, n := range row.Wins {
			w.Total.Wins[i] += n
		}
	}
	if w.Total.Contests == 0 {
		return nil
	}
	return w
}

// contest decides one metric at one point: the winning variant, "" for no
// clear winner, and ok false when every variant measured 0 (a pool metric
// on a target without a pool: nothing to contest).
func contest(byVariant, errs map[string]*record.Summary, variants []string, higher bool) (winner string, ok bool) {
	var cands []*record.Summary
	allZero := true
	for _, v := range variants {
		if s := byVariant[v]; s != nil && !math.IsNaN(s.Median) {
			cands = append(cands, s)
			allZero = allZero && s.Median == 0
		}
	}
	if len(cands) < 2 || allZero {
		return "", false
	}
	// The seed's derank rule: a variant with request errors ranks below
	// every error-free one.
	clean := slices.DeleteFunc(slices.Clone(cands), func(s *record.Summary) bool {
		e := errs[s.Variant]
		return e != nil && e.Median > 0
	})
	if len(clean) == 1 {
		return clean[0].Variant, true
	}
	if len(clean) > 1 {
		cands = clean
	}
	better := func(a, b *record.Summary) bool {
		if higher {
			return a.Median > b.Median
		}
		return a.Median < b.Median
	}
	slices.SortStableFunc(cands, func(a, b *record.Summary) int {
		switch {
		case better(a, b):
			return -1
		case better(b, a):
			return 1
		}
		return 0
	})
	best, next := cands[0], cands[1]
	if !better(best, next) {
		return "", true
	}
	// The intervals of the medians must not overlap; with too few trials
	// for an interval, the ranges of all trials must not.
	lo, hi := best.Low, next.High
	if !higher {
		lo, hi = next.Low, best.High
	}
	if !hasCI(best) || !hasCI(next) {
		lo, hi = best.Min, next.Max
		if !higher {
			lo, hi = next.Min, best.Max
		}
	}
	if lo > hi {
		return best.Variant, true
	}
	return "", true
}

// markdown renders the tally for report.md; nothing for a nil table.
func (w *winsTable) markdown() []byte {
	if w == nil {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("## Wins per metric\n\n| metric |")
	for _, v := range w.Variants {
		b.WriteString(" " + mdText(v) + " |")
	}
	b.WriteString(" no clear winner | contests |\n|---|" + strings.Repeat("--:|", len(w.Variants)+2) + "\n")
	for _, r := range w.Rows {
		fmt.Fprintf(&b, "| %s |", mdText(r.Label))
		for _, n := range r.Wins {
			fmt.Fprintf(&b, " %d |", n)
		}
		fmt.Fprintf(&b, " %d | %d |\n", r.Undecided, r.Contests)
	}
	b.WriteString("| **all metrics** |")
	for _, n := range w.Total.Wins {
		fmt.Fprintf(&b, " **%d** (%s) |", n, w.Total.Pct(n))
	}
	fmt.Fprintf(&b, " **%d** (%s) | **%d** |\n\n", w.Total.Undecided, w.Total.Pct(w.Total.Undecided), w.Total.Contests)
	b.WriteString(mdText(w.Note) + "\n\n")
	return b.Bytes()
}
