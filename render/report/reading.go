package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/threadlab/threadlab/judge/verdicts"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// This file turns a verdict into what a reader acts on: three answers per
// claim (the direction, the size beside the seed's and the claim's
// threshold, and the threshold verdict), the outcome that the decision
// framework recommends from, one-sentence answers, the count of claims
// that held, and the Benjamini-Hochberg statement across the claims a page
// shows. The threshold verdict stays as recorded (verdicts.json's status);
// this only reads it.

// reading is one claim's three answers.
type reading struct {
	Outcome     string // stats.Outcome*
	OutcomeText string // "same direction, smaller than claimed"
	Dir         int    // +1 A/B above 1, -1 below, 0 none or not a compare
	// Direction says which variant is ahead and by which test ("" for a
	// claim on one variant); Size the estimate as a ratio or a value with
	// its unit and interval; Threshold the claim's bound; Seed the write-
	// up's figure (and the comparable point when the manifest names one).
	Direction, Size, Threshold, Seed string
	// Derived is set when the run was judged before directions were
	// recorded: the direction is read off the verdict's interval, not its
	// test (`threadlab report --reevaluate` records the test).
	Derived bool
	Warn    bool // reversed: the decision framework says "do not follow"
	// Negligible is the lead ("2.6%") when the direction holds but its
	// interval lies inside the margin the reports count as equal
	// (negligibleText); "" otherwise.
	Negligible    string
	negligibleWhy string // why it counts as equal, for Direction
}

// readClaim reads a recorded verdict with its manifest check (nil when
// the manifest could not be read) and the seed's figure.
func readClaim(x record.Verdict, c *stats.Check, seed seedFigure) reading {
	r := reading{Outcome: x.Outcome, Dir: x.Direction, Size: sizeText(x, c), Threshold: thresholdText(c)}
	compare := c != nil && len(c.Compare) == 2
	if r.Outcome == "" {
		r.Derived = true
		if compare && (x.Low != 0 || x.High != 0) {
			switch {
			case x.Low > 1:
				r.Dir = 1
			case x.High < 1:
				r.Dir = -1
			}
		}
		switch {
		case c != nil:
			lo, hi := math.NaN(), math.NaN()
			if x.Low != 0 || x.High != 0 {
				lo, hi = x.Low, x.High
			}
			r.Outcome = stats.Outcome(*c, x.Status, r.Dir, lo, hi)
		case x.Status == stats.Contradicted:
			r.Outcome = stats.OutcomeReversed // no check to tell a shortfall from a reversal: the old reading
		default:
			r.Outcome = stats.Outcome(stats.Check{}, orDefault(x.Status, stats.Inconclusive), 0, math.NaN(), math.NaN())
		}
	}
	r.OutcomeText = stats.OutcomeText(r.Outcome, r.Dir)
	r.Warn = r.Outcome == stats.OutcomeReversed
	if compare {
		if r.Dir != 0 {
			r.negligibleWhy, r.Negligible = negligibleText(x, *c)
		}
		r.Direction = directionText(x, *c, r)
	} else if t := absoluteTest(x); t != "" {
		// A claim on one variant's value gets its test beside the value,
		// as a compare claim's direction does: a "not settled" value of
		// exactly the bound says why (too few forks for the test's level).
		r.Size += ", " + t + " p = " + pval(x.P)
	}
	if seed.From != "" || seed.Value != 0 {
		r.Seed = "seed " + seedNum(seed.Value)
		if !compare && c != nil && !math.IsNaN(seed.Value) {
			r.Seed += unitSuffix(c.Metric)
		}
		r.Seed += seed.scaledNote()
		if p := comparablePoint(x, seed.Point); p != "" {
			r.Seed += "; ours at the comparable point " + p
		}
	}
	return r
}

// absoluteTest names the one-sample test of a claim on one variant's value
// as its recorded reason does (stats/absolute.go), "" when the
// verdict recorded no test (an older run, or no data).
func absoluteTest(x record.Verdict) string {
	if x.P <= 0 {
		return ""
	}
	for _, t := range []string{"one-sided Wilcoxon signed-rank test", "one-sided sign test"} {
		if strings.Contains(x.Reason, t) {
			return t
		}
	}
	return ""
}

// comparablePoint is our figure at the unit the manifest names as
// comparable with the seed's: "pool=40: 3.98× (90% CI 3.9–4.1)".
func comparablePoint(x record.Verdict, point string) string {
	if point == "" || point == x.Point {
		return ""
	}
	for _, p := range x.Points {
		if p.Point != point || p.Ratio == nil {
			continue
		}
		s := point + ": " + num(*p.Ratio) + "×"
		if p.Low != nil && p.High != nil {
			s += " (" + ciText(x, *p.Low, *p.High) + ")"
		}
		return s
	}
	return ""
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// directionText names the better variant of a compare claim, the test
// and its p, or says that neither is ahead.
func directionText(x record.Verdict, c stats.Check, r reading) string {
	a, b := c.Compare[0], c.Compare[1]
	if r.Dir == 0 {
		if r.Derived {
			return fmt.Sprintf("neither %s nor %s ahead: the interval of %s/%s includes 1", a, b, a, b)
		}
		return fmt.Sprintf("neither %s nor %s significantly ahead (%s)", a, b, x.DirectionText)
	}
	better := a
	if (r.Dir > 0) != metric.HigherIsBetter(c.Metric) {
		better = b
	}
	side := "above"
	if r.Dir < 0 {
		side = "below"
	}
	test := fmt.Sprintf("%s/%s %s 1, one-sided Mann-Whitney U p = %s", a, b, side, pval(x.DirectionP))
	if r.Derived {
		test = fmt.Sprintf("%s/%s %s 1 by its %s (re-evaluate the run for the test)", a, b, side, ciLabel(x))
	}
	if r.Negligible != "" {
		return fmt.Sprintf("%s ahead by only %s: %s, with %s", better, r.Negligible, test, r.negligibleWhy)
	}
	return better + " better: " + test
}

// negligibleText says why a lead the test detects is too small to call
// one variant better, "" when it is not: the interval of A/B at every unit
// (every point of the claim, or the one) lies inside the claim's band (a
// band check: the claim counts the two as equal there), or inside
// ±stats.EquivalenceMargin, the least difference the reports count,
// narrowed to a superiority claim's own bound when that is nearer to 1 (a
// claim "A/B ≥ 1.05" counts a 5% lead, one "≥ 1" any lead). A test on tight data finds 0.06%
// (fixed-rate-sweep 20261205T120504Z: p50 medians 100.06 against
// 100.00 ms, p = 0.024); like benchstat's "~", the page then names the
// size, not a winner. lead is the largest distance of a unit's ratio
// from 1, "0.064%".
func negligibleText(x record.Verdict, c stats.Check) (why, lead string) {
	type unit struct{ ratio, low, high float64 }
	var units []unit
	for _, p := range x.Points {
		if p.Ratio == nil || p.Low == nil || p.High == nil {
			return "", "" // a unit without an interval cannot be shown small
		}
		units = append(units, unit{*p.Ratio, *p.Low, *p.High})
	}
	if len(units) == 0 {
		units = append(units, unit{x.Ratio, x.Low, x.High})
	}
	lo, lok := stats.Bound(c.AtLeast)
	hi, hok := stats.Bound(c.AtMost)
	band := lok && hok && lo < 1 && hi > 1
	if !band {
		m := stats.EquivalenceMargin
		if lok && lo >= 1 {
			m = min(m, lo-1)
		}
		if hok && hi <= 1 {
			m = min(m, 1/hi-1)
		}
		if m <= 0 {
			return "", ""
		}
		lo, hi = 1/(1+m), 1+m
	}
	far := 1.0
	for _, u := range units {
		if !(u.ratio > 0 && u.low >= lo && u.high <= hi) { // NaN fails too
			return "", ""
		}
		if math.Abs(u.ratio-1) > math.Abs(far-1) {
			far = u.ratio
		}
	}
	where := "its " + ciLabel(x)
	if len(units) > 1 {
		where = "its " + ciLabel(x) + " at every point"
	}
	if band {
		return fmt.Sprintf("%s inside the claim's band %s–%s, which counts the two as equal", where, num(lo), num(hi)), pctDiff(far)
	}
	return fmt.Sprintf("%s inside %s–%s, the ±%s under which the reports count two variants as equal",
		where, num(lo), num(hi), pctDiff(hi)), pctDiff(far)
}

// pctDiff is a ratio's distance from 1 as a percentage to two significant
// digits: 1.00064 → "0.064%", 0.973 → "2.7%", 1.1 → "10%".
func pctDiff(ratio float64) string {
	return strconv.FormatFloat(math.Abs(ratio-1)*100, 'g', 2, 64) + "%"
}

// unitSuffix is " ms", " req/s", "%" or "" for a metric's values.
func unitSuffix(name string) string {
	d, ok := metric.Lookup(name)
	if !ok || d.Unit == "" {
		return ""
	}
	if d.Unit == "%" {
		return "%"
	}
	return " " + d.Unit
}

// ciText is an interval as the page prints it, "90% CI 1.00–1.15". One
// whose ends print alike means the forks' resamples gave the same figure
// to the digits shown, which a reader may take for a bug: with a fixed
// heap and a fixed rate a GC count per window is nearly deterministic
// (connection-burst 20261203T070155Z: webflux/loom-tomcat 0.333 in every
// fork), so it says so.
func ciText(x record.Verdict, low, high float64) string {
	if num(low) == num(high) {
		return ciLabel(x) + " " + num(low) + "–" + num(high) + ": the forks agree to the digits shown"
	}
	return ciLabel(x) + " " + num(low) + "–" + num(high)
}

// sizeText is the deciding unit's estimate: a ratio "1.08× (90% CI
// 1.00–1.15)" for checks between variants or levels, a value with its unit
// "955 ms (90% CI 937–975)" for a check on one variant.
func sizeText(x record.Verdict, c *stats.Check) string {
	if x.Ratio == 0 && x.Low == 0 && x.High == 0 {
		// A figure of 0 (no errors) is left out of verdicts.json's top
		// level; the deciding unit keeps it.
		found := false
		for _, p := range x.Points {
			if p.Point == x.Point && p.Ratio != nil {
				x.Ratio, found = *p.Ratio, true
				if p.Low != nil && p.High != nil {
					x.Low, x.High = *p.Low, *p.High
				}
				break
			}
		}
		if !found {
			return ""
		}
	}
	value := c != nil && len(c.Compare) == 0 && len(c.FlatOver) == 0 && len(c.IncreasesOver) == 0 && len(c.DecreasesOver) == 0
	suffix, what := "×", "ratio "
	if value {
		suffix, what = unitSuffix(c.Metric), "value "
	}
	s := what + num(x.Ratio) + suffix
	if x.Low != 0 || x.High != 0 {
		s += " (" + ciText(x, x.Low, x.High) + ")"
	}
	if x.Point != "" {
		s += " at " + x.Point
	}
	return s
}

// thresholdText is the claim's bound: "platform/virtual ≥ 1.1", "error %
// of loom-tomcat ≥ 50%", "flat within ±10%".
func thresholdText(c *stats.Check) string {
	if c == nil {
		return ""
	}
	var bounds []string
	if r, ok := stats.Bound(c.AtLeast); ok {
		bounds = append(bounds, "≥ "+num(r))
	}
	if r, ok := stats.Bound(c.AtMost); ok {
		bounds = append(bounds, "≤ "+num(r))
	}
	switch {
	case len(c.Compare) == 2:
		return c.Compare[0] + "/" + c.Compare[1] + " " + metric.Label(c.Metric) + " " + strings.Join(bounds, " and ")
	case len(c.FlatOver) > 0:
		tol := c.Tolerance
		if tol == 0 {
			tol = 0.1
		}
		return fmt.Sprintf("%s of %s flat within ±%s%%", metric.Label(c.Metric), c.Variant, num(100*tol))
	case len(c.IncreasesOver) > 0 || len(c.DecreasesOver) > 0:
		tol := c.Tolerance
		if tol == 0 {
			tol = stats.DefaultTolerance
		}
		dir, over := "increases", c.IncreasesOver
		if len(c.DecreasesOver) > 0 {
			dir, over = "decreases", c.DecreasesOver
		}
		return fmt.Sprintf("%s of %s %s over %s by at least %s%%", metric.Label(c.Metric), c.Variant, dir, strings.Join(sortedKeys(over), ", "), num(100*tol))
	}
	u := unitSuffix(c.Metric)
	for i := range bounds {
		bounds[i] += u
	}
	return metric.Label(c.Metric) + " of " + c.Variant + " " + strings.Join(bounds, " and ")
}

// shortfall says by how much a "smaller than claimed" claim fell short:
// "1.40× against the claim's ≥ 2 and the seed's 1.83".
func shortfall(x record.Verdict, r reading) string {
	s := r.Size
	if r.Threshold != "" {
		s += " against the claim's " + r.Threshold
	}
	if r.Seed != "" {
		s += " and the " + strings.Replace(r.Seed, "seed ", "seed's ", 1)
	}
	return s
}

// claimText is one claim's line in the per-claim list of a page: its
// outcome in words, the three answers, and the reason for a claim that
// did not hold. The one place per-claim prose is written, so a manifest's
// own explanation of a contradicted or smaller claim plugs in here.
func claimText(x record.Verdict, r reading) string {
	says := strings.TrimRight(strings.TrimSpace(x.Says), ".")
	var parts []string
	switch r.Outcome {
	case stats.OutcomeNotApplicable:
		return fmt.Sprintf("Not applicable here: whether %s (%s).", lowerFirst(says),
			strings.TrimPrefix(strings.TrimRight(x.Reason, "."), "not applicable here: "))
	case stats.OutcomeSupported:
		parts = append(parts, "Supported: "+lowerFirst(says))
	case stats.OutcomeSmaller:
		parts = append(parts, upperFirst(r.OutcomeText)+": "+lowerFirst(says))
	case stats.OutcomeEquivalent:
		parts = append(parts, "Equivalent here, not the claimed difference: "+lowerFirst(says))
	case stats.OutcomeReversed:
		parts = append(parts, "Reversed: the data say the opposite of "+lowerFirst(says))
	default:
		parts = append(parts, "Not settled: whether "+lowerFirst(says))
	}
	dir := r.Direction
	if r.Outcome == stats.OutcomeInconclusive && strings.HasPrefix(x.Reason, verdicts.NotSteadyPrefix) {
		// Left open because its forks never settled: that, not "neither
		// ahead", is why (the steady rule left too few forks to test).
		dir = strings.TrimRight(x.Reason, ".")
	}
	// An interval inside the claim with a direction p of 0.014 reads as
	// settled; when the test against the claim's bound is what fell short
	// (reactor-parallel's serial-worse-tail: 1.17, 90% CI 1.12-1.24, claim
	// >= 1.10, p = 0.057 at 4+4 forks), the line says so.
	var open string
	if r.Outcome == stats.OutcomeInconclusive && dir == r.Direction && r.Threshold != "" && x.Level > 0 && x.P > x.Level {
		open = fmt.Sprintf("left open by the test against the claim's bound: p = %s, above the %s level", pval(x.P), strconv.FormatFloat(x.Level, 'f', -1, 64))
	}
	var nums []string
	for _, s := range []string{dir, r.Size, thresholdPart(r.Threshold), open, r.Seed} {
		if s != "" {
			nums = append(nums, s)
		}
	}
	if len(nums) > 0 {
		parts[0] += " (" + strings.Join(nums, "; ") + ")"
	}
	return parts[0] + "."
}

func thresholdPart(t string) string {
	if t == "" {
		return ""
	}
	return "claim " + t
}

// tally counts a page's claims by outcome. The one place claims are
// counted, so claims that cannot fail (design facts) can be left out of
// "held" in one line.
type tally struct {
	Total, Held, Smaller, Equivalent, Reversed, Open, NotApplicable int
}

func countClaims(xs []record.Verdict, rs []reading) tally {
	var t tally
	for i := range xs {
		t.Total++
		switch rs[i].Outcome {
		case stats.OutcomeSupported:
			t.Held++
		case stats.OutcomeSmaller:
			t.Smaller++
		case stats.OutcomeEquivalent:
			t.Equivalent++
		case stats.OutcomeReversed:
			t.Reversed++
		case stats.OutcomeNotApplicable:
			t.NotApplicable++
		default:
			t.Open++
		}
	}
	return t
}

// String is the tally in words: "of its 10 claims, 7 held, 1 smaller
// than claimed, 2 not settled".
func (t tally) String() string {
	s := fmt.Sprintf("of its %d claim%s, %d held", t.Total, plural(t.Total != 1), t.Held)
	for _, p := range []struct {
		n    int
		what string
	}{{t.Smaller, "smaller than claimed"}, {t.Equivalent, "equivalent rather than different"},
		{t.Reversed, "reversed"}, {t.Open, "not settled"}, {t.NotApplicable, "not applicable here"}} {
		if p.n > 0 {
			s += fmt.Sprintf(", %d %s", p.n, p.what)
		}
	}
	return s
}

// bhAdjust returns Benjamini-Hochberg adjusted p-values (step-up:
// min over j ≥ i of p(j)·m/j, capped at 1), NaN where p is NaN; NaNs are
// not counted in m.
func bhAdjust(ps []float64) []float64 {
	idx := make([]int, 0, len(ps))
	for i, p := range ps {
		if !math.IsNaN(p) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	out := make([]float64, len(ps))
	for i := range out {
		out[i] = math.NaN()
	}
	m := float64(len(idx))
	running := 1.0
	for k := len(idx) - 1; k >= 0; k-- {
		running = math.Min(running, ps[idx[k]]*m/float64(k+1))
		out[idx[k]] = running
	}
	return out
}

// fdr is a page's multiplicity statement: the decided claims (supported,
// smaller or reversed on a significant test, i.e. supported or
// contradicted) whose p-values survive Benjamini-Hochberg at q across
// every claim with a p-value on the page.
type fdr struct {
	Q        float64
	Tested   int      // claims with a p-value
	Decided  int      // of those, decided (supported or contradicted)
	Survive  []string // decided claims that survive, by ID
	Fall     []string // decided claims that do not
	Untested int      // claims without a p-value
}

func multiplicity(xs []record.Verdict, q float64) fdr {
	f := fdr{Q: q}
	ps := make([]float64, len(xs))
	for i, x := range xs {
		ps[i] = math.NaN()
		if x.P > 0 && x.Status != stats.NotApplicable {
			ps[i] = x.P
			f.Tested++
		} else {
			f.Untested++
		}
	}
	adj := bhAdjust(ps)
	for i, x := range xs {
		if math.IsNaN(adj[i]) || (x.Status != stats.Supported && x.Status != stats.Contradicted) {
			continue
		}
		f.Decided++
		if adj[i] <= q {
			f.Survive = append(f.Survive, x.ID)
		} else {
			f.Fall = append(f.Fall, x.ID)
		}
	}
	return f
}

// String says the statement in one or two sentences.
func (f fdr) String() string {
	if f.Tested == 0 {
		return "No claim here has a p-value, so no false-discovery rate is stated."
	}
	s := fmt.Sprintf("Across the %d claim%s with a p-value here, Benjamini-Hochberg at a %g%% false-discovery rate keeps %d of the %d decided",
		f.Tested, plural(f.Tested != 1), 100*f.Q, len(f.Survive), f.Decided)
	if len(f.Fall) > 0 {
		s += "; it would not keep " + strings.Join(f.Fall, ", ")
	}
	s += "."
	if f.Untested > 0 {
		s += fmt.Sprintf(" %d claim%s without a p-value (not applicable, or decided by a count with no test) %s not in it.", f.Untested, plural(f.Untested != 1), map[bool]string{true: "are", false: "is"}[f.Untested != 1])
	}
	return s
}
