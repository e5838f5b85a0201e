package report

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/threadlab/threadlab/judge/across"
	"github.com/threadlab/threadlab/store/record"
)

// The across-runs table (issue 20): on the experiment's page, beside the
// latest run, each claim's estimate in every comparable run of the
// experiment and combined across them with the run-to-run variance as a
// random effect (judge/across), and the runs left out with why. It is
// left out when the experiment has fewer than two comparable runs and
// nothing to exclude.

// acrossView is the template data of the "across" block.
type acrossView struct {
	Runs     []string // comparable run IDs, oldest first
	Rows     []acrossRow
	Excluded []across.Excluded
}

type acrossRow struct {
	Claim, Point string
	PerRun       []string // "1.95 (1.85–2.17)" per comparable run, in Runs order; "–" when absent
	Across       string   // "2.23 (0.96–5.15)"
	Between      string   // τ as a percentage on the log scale
	Within       string
}

// readAcross reads the runs beside r (data/<experiment>/*) for the table;
// nil when r was not read from disk or there is nothing to show. A failure
// to read the other runs leaves the table out rather than the page.
func readAcross(r *record.Run) *acrossView {
	if r.Dir == "" {
		return nil
	}
	parent := filepath.Dir(filepath.Clean(r.Dir))
	res, err := across.Read(filepath.Dir(parent), filepath.Base(parent))
	if err != nil || res == nil {
		return nil
	}
	return newAcrossView(res)
}

func newAcrossView(res *across.Result) *acrossView {
	if len(res.Claims) == 0 && len(res.Excluded) == 0 {
		return nil
	}
	v := &acrossView{Runs: res.Comparable, Excluded: res.Excluded}
	for _, c := range res.Claims {
		row := acrossRow{Claim: c.ID, Point: c.Point,
			Across:  interval(c.Across.Estimate, c.Across.Low, c.Across.High),
			Between: logPct(c.Across.BetweenSD), Within: logPct(c.Across.WithinSD)}
		by := map[string]string{}
		for _, e := range c.Runs {
			by[e.Run] = interval(e.Estimate, e.Low, e.High)
		}
		for _, id := range res.Comparable {
			row.PerRun = append(row.PerRun, orDash(by[id]))
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// interval renders an estimate with its interval, or the estimate alone.
func interval(est, lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) || !(lo > 0) {
		return num(est)
	}
	return fmt.Sprintf("%s (%s–%s)", num(est), num(lo), num(hi))
}

// logPct renders a standard deviation on the log scale as "±x%".
func logPct(sd float64) string {
	if math.IsNaN(sd) {
		return "–"
	}
	return fmt.Sprintf("±%.1f%%", 100*(math.Exp(sd)-1))
}
