package stats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// This file turns numbers into the prose of evidence lines and reasons.

// pointName is a point label for prose: the empty point of an unswept run
// reads "the only point".
func pointName(label string) string {
	if label == "" {
		return "the only point"
	}
	return label
}

// fmtRatio prints a ratio to three decimals without trailing zeros (2, 1.65,
// 1.002): flatness lives in the third decimal.
func fmtRatio(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return fmt.Sprint(r)
	}
	return strconv.FormatFloat(math.Round(r*1000)/1000, 'f', -1, 64)
}

// fmtHolm describes a Holm-adjusted p-value, or nothing for a family of one
// (where Holm changes nothing).
func fmtHolm(adj float64, m int, unit string) string {
	if m <= 1 {
		return ""
	}
	return fmt.Sprintf(" (Holm %s over %d %s)", fmtP(adj), m, unit)
}

// fmtPct prints a fraction as a percentage with one decimal.
func fmtPct(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

// confName names the two-sided coverage of an interval whose ends are
// one-sided bounds at level: "90%" at 0.05, "99.4%" at 0.003.
func confName(level float64) string {
	c := 100 * (1 - 2*level)
	return strconv.FormatFloat(math.Floor(c*10)/10, 'f', -1, 64) + "%"
}

// resampleText says how an interval was resampled.
func resampleText(o Options) string {
	return fmt.Sprintf("%d resamples of the replicates (a fork by its median), smoothed from %d replicates; seed %d",
		o.resamples(), SmoothFrom, o.Seed)
}

// unitName names a series' replicates: "forks" or "trials".
func unitName(s *series) string {
	if len(s.forks) > 0 {
		return "forks"
	}
	return "trials"
}

// pText is the p-value part of an evidence line.
func pText(e Estimate) string {
	if math.IsNaN(e.P) {
		return " not run"
	}
	if e.Status != Contradicted || e.PAdj == e.P {
		// The claimed side is an intersection-union test: no correction.
		return fmt.Sprintf(" p=%s", fmtP(e.P))
	}
	return fmt.Sprintf(" p=%s (Holm %s over the claim's opposite tests)", fmtP(e.P), fmtP(e.PAdj))
}

// intervalAt formats the unit's interval with its coverage.
func (u unit) intervalAt(level float64) string {
	if u.noCI || math.IsNaN(u.lo) {
		return ""
	}
	return fmt.Sprintf(" (%s CI %s–%s)", confName(level), fmtRatio(u.lo), fmtRatio(u.hi))
}

// joinNums formats values for an evidence line: "1200, 1210, 1190".
func joinNums(xs []float64) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmtNum(x)
	}
	return strings.Join(out, ", ")
}
