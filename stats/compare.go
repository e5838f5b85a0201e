package stats

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"golang.org/x/perf/benchmath"
)

// Alpha is the significance level used when a caller passes none.
const Alpha = 0.05

// MinEffect is the smallest relative difference ever reported as a change,
// criterion's default noise threshold: below 1%, a difference is not worth a
// reader's attention even when it is statistically real.
const MinEffect = 0.01

// Comparison is the benchstat-style comparison of two cells, A ("old") and B
// ("new"). Ratio and Delta are B relative to A, as in a diff table.
type Comparison struct {
	// A and B label the two sides; Compare leaves them empty for the caller.
	A string
	B string

	MedianA float64
	MedianB float64
	NA      int
	NB      int
	Ratio   float64 // MedianB / MedianA
	Delta   float64 // (MedianB - MedianA) / MedianA = Ratio - 1

	// P is the two-sided Mann-Whitney U p-value; PAdj the same after a
	// multiple-comparison correction (equal to P until AdjustHolm runs).
	P     float64
	PAdj  float64
	Alpha float64
	// Band is the noise band: max(MinEffect, CV of A, CV of B). A difference
	// smaller than the trials' own spread is not reported as a winner even
	// when the test rejects, because the spread is what seed 000 saw swing.
	Band float64

	// Significant is true when PAdj < Alpha and |Delta| >= Band.
	Significant bool
	// Verdict is "~" (no difference worth reporting) or the signed change,
	// e.g. "+12.3%"; "?" when MedianA is 0 and a percentage is undefined.
	Verdict string
	// Note says in words why the verdict is "~", or what weakens it.
	Note string

	cvA, cvB float64
	warnings []string
}

// Compare tests whether b differs from a with the Mann-Whitney U test
// (benchmath.AssumeNothing.Compare, exact for small samples, as benchstat
// does) and applies the noise band. alpha outside (0, 1) means Alpha. The
// inputs are not modified. Compare treats its pair alone; when a family of
// comparisons is reported together (one metric across a sweep), run
// AdjustHolm over them.
func Compare(a, b []float64, alpha float64) Comparison {
	if !(alpha > 0 && alpha < 1) {
		alpha = Alpha
	}
	sa, sb := Summarize(a), Summarize(b)
	c := Comparison{
		MedianA: sa.Median, MedianB: sb.Median, NA: sa.N, NB: sb.N,
		Ratio: sb.Median / sa.Median, Alpha: alpha, cvA: sa.CV, cvB: sb.CV,
	}
	c.Delta = c.Ratio - 1
	c.Band = MinEffect
	for _, cv := range []float64{sa.CV, sb.CV} {
		if cv > c.Band { // NaN never wins
			c.Band = cv
		}
	}
	c.P = 1
	if len(a) > 0 && len(b) > 0 {
		th := benchmath.Thresholds{CompareAlpha: alpha}
		res := benchmath.AssumeNothing.Compare(
			benchmath.NewSample(slices.Clone(a), &th), benchmath.NewSample(slices.Clone(b), &th))
		c.P = res.P
		for _, w := range res.Warnings {
			c.warnings = append(c.warnings, w.Error())
		}
	} else {
		c.warnings = append(c.warnings, "no trials on one side")
	}
	c.PAdj = c.P
	c.decide()
	return c
}

// decide sets Significant, Verdict and Note from PAdj and the noise band.
func (c *Comparison) decide() {
	absDelta := math.Abs(c.Delta)
	var why []string
	switch {
	case !(c.PAdj < c.Alpha):
		if c.PAdj != c.P {
			why = append(why, fmt.Sprintf("p=%s (Holm-adjusted %s) >= %g: no significant difference",
				fmtP(c.P), fmtP(c.PAdj), c.Alpha))
		} else {
			why = append(why, fmt.Sprintf("p=%s >= %g: no significant difference", fmtP(c.P), c.Alpha))
		}
	case math.IsNaN(c.Delta):
		why = append(why, "a median is missing or zero: no relative difference")
	case absDelta < c.Band:
		why = append(why, fmt.Sprintf("p=%s but |Δ|=%.1f%% is inside the noise band ±%.1f%% (%s)",
			fmtP(c.PAdj), 100*absDelta, 100*c.Band, c.bandSource()))
	}
	why = append(why, c.warnings...)
	c.Note = strings.Join(why, "; ")
	c.Significant = c.PAdj < c.Alpha && !math.IsNaN(c.Delta) && absDelta >= c.Band
	switch {
	case !c.Significant:
		c.Verdict = "~"
	case math.IsInf(c.Delta, 0): // MedianA is 0
		c.Verdict = "?"
	default:
		c.Verdict = fmt.Sprintf("%+.1f%%", 100*c.Delta)
	}
}

// Regression reports whether B is significantly worse than A for a metric
// of the given direction (see HigherIsBetter): slower throughput, or higher
// latency or error counts. It is what `threadlab diff --fail-on-regression`
// fails on; a "~" is never a regression.
func (c Comparison) Regression(higherIsBetter bool) bool {
	if !c.Significant {
		return false
	}
	if higherIsBetter {
		return c.Delta < 0
	}
	return c.Delta > 0
}

// bandSource names what set the noise band, for the Note.
func (c *Comparison) bandSource() string {
	switch c.Band {
	case c.cvA:
		return "CV of " + orDefault(c.A, "A")
	case c.cvB:
		return "CV of " + orDefault(c.B, "B")
	}
	return "minimum effect"
}

// Holm returns Holm-Bonferroni adjusted p-values, in the order of ps: sort
// ascending, multiply the i-th smallest (from 0) by m-i, carry the running
// maximum so the adjusted values keep the order of the raw ones, cap at 1.
// Rejecting where the adjusted p < alpha controls the family-wise error rate
// at alpha with no assumption about how the tests depend on each other
// (points of one sweep share a host and a run). A NaN p-value (no test
// possible) is treated as 1: never significant, still counted in m.
func Holm(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	p := func(i int) float64 {
		if math.IsNaN(ps[i]) {
			return 1
		}
		return ps[i]
	}
	sort.SliceStable(idx, func(x, y int) bool { return p(idx[x]) < p(idx[y]) })
	adj := make([]float64, m)
	running := 0.0
	for rank, i := range idx {
		v := math.Min(1, float64(m-rank)*p(i))
		running = math.Max(running, v)
		adj[i] = running
	}
	return adj
}

// AdjustHolm applies Holm's correction across a family of comparisons (one
// metric across the points of a sweep) and recomputes each one's PAdj,
// Significant, Verdict and Note in place.
func AdjustHolm(cs []Comparison) {
	ps := make([]float64, len(cs))
	for i, c := range cs {
		ps[i] = c.P
	}
	for i, padj := range Holm(ps) {
		cs[i].PAdj = padj
		cs[i].decide()
	}
}

// fmtP prints a p-value with two significant digits (0.0022, 0.31, 1).
func fmtP(p float64) string { return fmt.Sprintf("%.2g", p) }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
