package stats

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"
)

// Verdict statuses.
const (
	Supported    = "supported"
	Contradicted = "contradicted"
	Inconclusive = "inconclusive"
)

// Resamples is the number of bootstrap resamples behind every claim
// interval: enough that the 2.5% and 97.5% percentiles move by well under
// the precision we print when the seed changes.
const Resamples = 10000

// Cell holds the trial values of one metric for one variant at one sweep
// point and request group, in trial order.
type Cell struct {
	Variant string
	Point   map[string]string // sweep key -> value, e.g. {"pool": "400"}; empty without a sweep
	Group   string
	Metric  string
	Values  []float64
	// Forks are the per-fork iteration values; when set, Values holds one summary per fork.
	Forks [][]float64
}

// Estimate is a claim's result at one sweep point (compare) or one slice of
// the sweep (flat_over).
type Estimate struct {
	// Point names the sweep point ("pool=400"); for flat_over, the slice,
	// i.e. the other sweep keys ("users=2000"). "" when there is nothing to
	// name: a run without a sweep, or flat_over over the only sweep key.
	Point string `json:"point"`
	// Ratio is A/B of the medians (compare) or the largest over the smallest
	// median across the flat_over values; Low and High its 95% bootstrap
	// interval.
	Ratio float64 `json:"ratio"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	// P is the Mann-Whitney p-value of the claim's test at this point, PAdj
	// the same after Holm's correction across the claim's points.
	P      float64 `json:"p"`
	PAdj   float64 `json:"p_adj"`
	Status string  `json:"status"`
	Reason string  `json:"reason,omitempty"`
	leans  string
	margin float64 // how far the interval clears the threshold (relative); for picking the weakest point
}

// Verdict is a claim's outcome with its evidence, as saved in verdicts.json.
type Verdict struct {
	ID     string `json:"id"`
	Says   string `json:"says"`
	Status string `json:"status"` // Supported, Contradicted or Inconclusive
	// Reason says in one sentence why the status is what it is; for
	// Inconclusive it names what to change (more trials, less noise).
	Reason string `json:"reason"`
	// Leans is, for an Inconclusive verdict, what the medians alone say
	// (Supported or Contradicted), "" when they point both ways or there is
	// no data. The decision framework marks such rows "directional".
	Leans    string   `json:"leans,omitempty"`
	Evidence []string `json:"evidence"`
	// Point, Ratio, Low, High and P (Holm-adjusted) are the numbers of the
	// point that decided the verdict: the contradicting point, the weakest
	// supporting point, or the first inconclusive one. NaN (null in JSON)
	// when nothing could be computed.
	Point  string     `json:"point,omitempty"`
	Ratio  float64    `json:"ratio"`
	Low    float64    `json:"low"`
	High   float64    `json:"high"`
	P      float64    `json:"p"`
	Method string     `json:"method"`
	Flags  []string   `json:"flags,omitempty"` // "noisy-cv (webflux, pool=400)"
	Points []Estimate `json:"points,omitempty"`
}

// Evaluate decides a claim from the run's cells. seed makes the bootstrap
// reproducible; record it with the run.
//
// A compare check is decided at every selected point on the ratio of
// medians A/B. Its interval is a percentile bootstrap (Resamples resamples
// of each variant's trials, with replacement, seeded by seed and the point).
// Its test is the two-sided Mann-Whitney U test of A against r x B for each
// threshold r: under the claim's own boundary ("A is exactly r times B") the
// two samples have the same distribution, so a small p says the ratio is
// away from the threshold, and for r = 1 it is the plain A-vs-B test. The
// p-values of each threshold are Holm-corrected across the selected points.
// A point supports the claim when
//
//   - the whole interval clears the threshold,
//   - the Holm-adjusted p < Alpha,
//   - the ratio clears the threshold by at least the noise band
//     max(MinEffect, CV of A, CV of B), as Compare requires before naming a
//     winner, and
//   - neither cell is flagged noisy-cv, outlier-trial or slow-first, unless
//     even the worst trials agree (min A / max B clears an at_least
//     threshold): seed 000's "solid despite the noise" argument.
//
// It contradicts the claim under the mirror conditions on the wrong side.
// The claim is contradicted when any point contradicts it, supported when
// every point supports it, and inconclusive otherwise, with the reason.
//
// A flat_over check is decided per slice of the sweep (the other sweep keys
// held fixed) on max/min of the medians across the listed values. It is
// supported when the upper end of that ratio's bootstrap interval is within
// 1 + Tolerance (an equivalence test: overlapping intervals alone would let
// noisy data pass as flat), and contradicted when the lower end is above it
// and the Mann-Whitney test between the highest and lowest cell is
// significant after Holm across slices. Noise flags weaken it as above.
//
// Always inconclusive, saying why: a cell with fewer than MinTrialsTest
// trials, a variant missing at a selected point, no cells for the metric.
func Evaluate(id, says string, c Check, cells []Cell, seed int64) Verdict {
	nan := math.NaN()
	v := Verdict{ID: id, Says: says, Status: Inconclusive, Ratio: nan, Low: nan, High: nan, P: nan}
	picked, problem := pick(c, cells)
	if problem != "" {
		v.Reason = problem
		v.Evidence = []string{problem}
		return v
	}
	var e evaluation
	switch {
	case len(c.Compare) == 2:
		e = evalCompare(c, picked, seed)
	case len(c.FlatOver) == 1 && c.Variant != "":
		e = evalFlat(c, picked, seed)
	default:
		v.Reason = "the check is neither compare: [A, B] nor variant with one flat_over key (fix the manifest; threadlab lint explains)"
		v.Evidence = []string{v.Reason}
		return v
	}
	v.Method = e.method
	v.Points = e.points
	v.Flags = e.flags
	v.Evidence = append(v.Evidence, e.evidence...)
	v.Evidence = append(v.Evidence, e.notes...)
	v.Evidence = append(v.Evidence, e.problems...)
	e.decide(&v)
	return v
}

// evaluation is what evalCompare and evalFlat found, before the verdict.
type evaluation struct {
	points   []Estimate
	problems []string // missing data, too few trials: force Inconclusive
	flags    []string
	notes    []string // one sentence per flagged cell, after the per-point evidence
	whole    string   // how to name the point "" in prose ("the only point", "across pool")
	evidence []string
	method   string
}

// decide turns per-point estimates and problems into the verdict.
func (e evaluation) decide(v *Verdict) {
	var decider *Estimate
	var contra, incon []*Estimate
	weakest := -1
	leansSup, leansCon := 0, 0
	for i := range e.points {
		p := &e.points[i]
		switch p.leans {
		case Supported:
			leansSup++
		case Contradicted:
			leansCon++
		}
		switch p.Status {
		case Contradicted:
			contra = append(contra, p)
		case Inconclusive:
			incon = append(incon, p)
		case Supported:
			if weakest < 0 || p.margin < e.points[weakest].margin {
				weakest = i
			}
		}
	}
	v.Status = Inconclusive
	switch {
	case len(e.problems) > 0:
		v.Reason = strings.Join(e.problems, "; ")
		switch {
		case len(incon) > 0:
			decider = incon[0]
		case len(contra) > 0:
			decider = contra[0]
		case weakest >= 0:
			decider = &e.points[weakest]
		}
	case len(contra) > 0:
		v.Status = Contradicted
		decider = contra[0]
		for _, p := range contra[1:] {
			if p.PAdj < decider.PAdj {
				decider = p
			}
		}
		v.Reason = "contradicted " + e.at(decider.Point) + ": " + decider.Reason
	case len(incon) > 0:
		decider = incon[0]
		var rs []string
		for _, p := range incon {
			rs = append(rs, e.at(p.Point)+": "+p.Reason)
		}
		v.Reason = strings.Join(rs, "; ")
	case weakest >= 0:
		v.Status = Supported
		decider = &e.points[weakest]
		if len(e.points) == 1 {
			v.Reason = "supported: " + decider.Reason
		} else {
			v.Reason = fmt.Sprintf("supported at all %d points; weakest %s: %s",
				len(e.points), e.at(decider.Point), decider.Reason)
		}
	default:
		v.Reason = "no sweep point matched the check (check where and the sweep values)"
	}
	if v.Status == Inconclusive {
		switch {
		case leansCon > 0:
			v.Leans = Contradicted
		case leansSup > 0 && leansSup == len(e.points):
			v.Leans = Supported
		}
	}
	if decider != nil {
		v.Point, v.Ratio, v.Low, v.High, v.P = decider.Point, decider.Ratio, decider.Low, decider.High, decider.PAdj
	}
}

// at names a point in prose: "at pool=400", or the evaluation's name for
// the whole run.
func (e evaluation) at(label string) string {
	if label != "" {
		return "at " + label
	}
	if e.whole != "" {
		return e.whole
	}
	return "at the only point"
}

// series is one variant's trials at one point (duplicate cells merged).
type series struct {
	point  map[string]string
	label  string
	values []float64
}

// pick keeps the cells of the check's metric and group, indexed by variant.
// With no group in the check it uses cells without a group, or the only
// group there is; several named groups make the check ambiguous.
func pick(c Check, cells []Cell) (map[string][]*series, string) {
	var ofMetric []Cell
	groups := map[string]bool{}
	for _, cell := range cells {
		if cell.Metric == c.Metric {
			ofMetric = append(ofMetric, cell)
			groups[cell.Group] = true
		}
	}
	if len(ofMetric) == 0 {
		return nil, fmt.Sprintf("no data for metric %q in this run", c.Metric)
	}
	group := c.Group
	if group == "" && !groups[""] {
		if len(groups) > 1 {
			return nil, fmt.Sprintf("the run measured several request groups (%s) and the check names none (set check.group)",
				strings.Join(sortedKeys(groups), ", "))
		}
		for g := range groups {
			group = g
		}
	}
	if !groups[group] {
		return nil, fmt.Sprintf("no data for group %q of metric %q (the run has groups %s)",
			group, c.Metric, strings.Join(sortedKeys(groups), ", "))
	}
	byVariant := map[string][]*series{}
	for _, cell := range ofMetric {
		if cell.Group != group || !matchWhere(cell.Point, c.Where) {
			continue
		}
		label := pointLabel(cell.Point)
		var s *series
		for _, have := range byVariant[cell.Variant] {
			if have.label == label {
				s = have
			}
		}
		if s == nil {
			s = &series{point: cell.Point, label: label}
			byVariant[cell.Variant] = append(byVariant[cell.Variant], s)
		}
		s.values = append(s.values, cell.Values...)
	}
	for _, ss := range byVariant {
		slices.SortFunc(ss, func(a, b *series) int { return comparePoints(a.point, b.point) })
	}
	return byVariant, ""
}

// bound is one threshold of a compare check.
type bound struct {
	r       float64
	atLeast bool // A/B >= r; otherwise A/B <= r
}

func (b bound) String() string {
	if b.atLeast {
		return "≥ " + fmtRatio(b.r)
	}
	return "≤ " + fmtRatio(b.r)
}

// evalCompare evaluates compare: [A, B] at every selected point.
func evalCompare(c Check, byVariant map[string][]*series, seed int64) evaluation {
	var e evaluation
	nameA, nameB := c.Compare[0], c.Compare[1]
	var bounds []bound
	if r, ok := Bound(c.AtLeast); ok && r > 0 {
		bounds = append(bounds, bound{r, true})
	}
	if r, ok := Bound(c.AtMost); ok && r > 0 {
		bounds = append(bounds, bound{r, false})
	}
	var claim, against []string
	for _, b := range bounds {
		claim = append(claim, b.String())
		if b.r == 1 {
			against = append(against, nameB)
		} else {
			against = append(against, fmtRatio(b.r)+"×"+nameB)
		}
	}
	test := fmt.Sprintf("%s vs %s", nameA, strings.Join(against, " and "))
	if len(bounds) > 1 {
		test += ", the larger"
	}
	e.method = fmt.Sprintf("ratio of medians %s/%s with a 95%% percentile bootstrap interval (%d resamples, seed %d); "+
		"two-sided Mann-Whitney U of %s against threshold × %s, Holm-corrected across points; "+
		"noise band max(%.0f%%, CV); claim %s/%s %s",
		nameA, nameB, Resamples, seed, nameA, nameB, 100*MinEffect, nameA, nameB, strings.Join(claim, " and "))
	if len(bounds) == 0 {
		e.problems = append(e.problems, "the check sets neither at_least nor at_most (add a ratio threshold)")
		return e
	}
	e.problems = append(e.problems, missingAtWhere(c.Where, byVariant, nameA, nameB)...)

	// Pair up the points; a point present for one variant only is missing
	// data for the other.
	type pair struct {
		label string
		a, b  []float64
	}
	var pairs []pair
	var labels []*series
	seen := map[string]bool{}
	for _, name := range []string{nameA, nameB} {
		for _, s := range byVariant[name] {
			if !seen[s.label] {
				seen[s.label] = true
				labels = append(labels, s)
			}
		}
	}
	slices.SortFunc(labels, func(x, y *series) int { return comparePoints(x.point, y.point) })
	for _, name := range []string{nameA, nameB} {
		if len(byVariant[name]) == 0 && len(c.Where) == 0 {
			e.problems = append(e.problems, fmt.Sprintf("no data for variant %s (metric %s)", name, c.Metric))
		}
	}
	for _, s := range labels {
		a, b := find(byVariant[nameA], s.label), find(byVariant[nameB], s.label)
		switch {
		case a == nil && len(byVariant[nameA]) > 0:
			e.problems = append(e.problems, fmt.Sprintf("no data for variant %s at %s", nameA, pointName(s.label)))
		case b == nil && len(byVariant[nameB]) > 0:
			e.problems = append(e.problems, fmt.Sprintf("no data for variant %s at %s", nameB, pointName(s.label)))
		case a != nil && b != nil:
			pairs = append(pairs, pair{s.label, a.values, b.values})
		}
	}

	higher := HigherIsBetter(c.Metric)
	// Raw p-values per bound, then Holm per bound across the points.
	raw := make([][]float64, len(bounds))
	for _, p := range pairs {
		e.problems = append(e.problems, fewTrials(nameA, p.label, p.a)...)
		e.problems = append(e.problems, fewTrials(nameB, p.label, p.b)...)
		for j, b := range bounds {
			raw[j] = append(raw[j], uTest(p.a, scale(p.b, b.r)))
		}
	}
	adj := make([][]float64, len(bounds))
	for j := range bounds {
		adj[j] = Holm(raw[j])
	}

	for i, p := range pairs {
		sa, sb := Summarize(p.a), Summarize(p.b)
		ratio := sa.Median / sb.Median
		rng := rand.New(rand.NewPCG(uint64(seed), hash(p.label)))
		lo, hi := bootstrap(rng, [][]float64{p.a, p.b}, func(m []float64) float64 { return m[0] / m[1] })
		band := MinEffect
		for _, cv := range []float64{sa.CV, sb.CV} {
			if cv > band {
				band = cv
			}
		}
		weak := weakFlags(&e, nameA, p.label, p.a, higher)
		weak = append(weak, weakFlags(&e, nameB, p.label, p.b, higher)...)
		minA, maxA := sa.Min, sa.Max
		minB, maxB := sb.Min, sb.Max

		est := Estimate{Point: p.label, Ratio: ratio, Low: lo, High: hi, margin: math.Inf(1)}
		est.P, est.PAdj = 0, 0
		for j := range bounds {
			est.P = math.Max(est.P, raw[j][i])
			est.PAdj = math.Max(est.PAdj, adj[j][i])
		}

		// Support: every bound cleared on the right side.
		var supWhy []string
		supOK := true
		for j, b := range bounds {
			var clear bool
			var rel, worst float64
			if b.atLeast {
				clear, rel, worst = lo > b.r, ratio/b.r-1, minA/maxB
				est.margin = math.Min(est.margin, lo/b.r-1)
			} else {
				clear, rel, worst = hi < b.r, 1-ratio/b.r, maxA/minB
				est.margin = math.Min(est.margin, 1-hi/b.r)
			}
			worstOK := (b.atLeast && worst >= b.r) || (!b.atLeast && worst <= b.r)
			if !clear {
				supOK = false
				supWhy = append(supWhy, fmt.Sprintf("the 95%% interval %s–%s of %s/%s does not clear %s",
					fmtRatio(lo), fmtRatio(hi), nameA, nameB, b))
			}
			if !(adj[j][i] < Alpha) {
				supOK = false
				supWhy = append(supWhy, fmt.Sprintf("Mann-Whitney p=%s against %s%s is not below %g",
					fmtP(raw[j][i]), fmtRatio(b.r), fmtHolm(adj[j][i], len(pairs), "points"), Alpha))
			}
			if !(rel >= band) {
				supOK = false
				supWhy = append(supWhy, fmt.Sprintf("the ratio %s is within the noise band ±%.1f%% of %s",
					fmtRatio(ratio), 100*band, fmtRatio(b.r)))
			}
			if len(weak) > 0 && !worstOK {
				supOK = false
				supWhy = append(supWhy, fmt.Sprintf("directional only: %s, and the worst trials give %s, not %s",
					strings.Join(weak, ", "), fmtRatio(worst), b))
			}
		}
		// Contradiction: some bound beaten on the wrong side.
		var conWhy []string
		conOK := false
		for j, b := range bounds {
			var wrong bool
			var rel, worst float64
			if b.atLeast {
				wrong, rel, worst = hi < b.r, 1-ratio/b.r, maxA/minB
			} else {
				wrong, rel, worst = lo > b.r, ratio/b.r-1, minA/maxB
			}
			worstOK := (b.atLeast && worst < b.r) || (!b.atLeast && worst > b.r)
			ok := wrong && adj[j][i] < Alpha && rel >= band && (len(weak) == 0 || worstOK)
			if ok {
				conOK = true
				conWhy = []string{fmt.Sprintf("%s/%s = %s (95%% CI %s–%s) is clearly outside %s, p=%s%s",
					nameA, nameB, fmtRatio(ratio), fmtRatio(lo), fmtRatio(hi), b, fmtP(raw[j][i]),
					fmtHolm(adj[j][i], len(pairs), "points"))}
				est.PAdj = adj[j][i]
				est.P = raw[j][i]
				break
			}
		}

		// Where do the medians alone point? Only beyond the noise band does a
		// ratio lean; inside it, it is a tie (seed 000's 372 vs 374 ms).
		leanSup, leanCon := true, false
		for _, b := range bounds {
			rel := ratio/b.r - 1 // > 0: above the threshold
			if !b.atLeast {
				rel = -rel
			}
			if !(rel >= band) {
				leanSup = false
			}
			if -rel >= band {
				leanCon = true
			}
		}
		switch {
		case conOK:
			est.Status, est.Reason, est.leans = Contradicted, conWhy[0], Contradicted
		case supOK:
			est.Status, est.leans = Supported, Supported
			est.Reason = fmt.Sprintf("%s/%s = %s (95%% CI %s–%s) clears %s, p=%s%s",
				nameA, nameB, fmtRatio(ratio), fmtRatio(lo), fmtRatio(hi), strings.Join(claim, " and "),
				fmtP(est.P), fmtHolm(est.PAdj, len(pairs), "points"))
		case math.IsNaN(ratio) || math.IsInf(ratio, 0):
			est.Status = Inconclusive
			est.Reason = fmt.Sprintf("a median is 0 (%s %s, %s %s), so the ratio is undefined",
				nameA, fmtNum(sa.Median), nameB, fmtNum(sb.Median))
		case leanSup:
			est.Status, est.leans = Inconclusive, Supported
			est.Reason = fmt.Sprintf("the medians agree with the claim (%s/%s = %s) but %s",
				nameA, nameB, fmtRatio(ratio), strings.Join(supWhy, "; "))
		case leanCon:
			est.Status, est.leans = Inconclusive, Contradicted
			est.Reason = fmt.Sprintf("the medians disagree with the claim (%s/%s = %s, claim %s) but not clearly: "+
				"95%% CI %s–%s, p=%s%s",
				nameA, nameB, fmtRatio(ratio), strings.Join(claim, " and "), fmtRatio(lo), fmtRatio(hi),
				fmtP(est.P), fmtHolm(est.PAdj, len(pairs), "points"))
			if len(weak) > 0 {
				est.Reason += "; directional only: " + strings.Join(weak, ", ")
			}
		default:
			est.Status = Inconclusive
			est.Reason = fmt.Sprintf("a tie: %s/%s = %s is within the noise band ±%.1f%% of %s (95%% CI %s–%s, p=%s)",
				nameA, nameB, fmtRatio(ratio), 100*band, strings.Join(claim, " and "),
				fmtRatio(lo), fmtRatio(hi), fmtP(est.PAdj))
		}
		if few := append(fewTrials(nameA, p.label, p.a), fewTrials(nameB, p.label, p.b)...); len(few) > 0 {
			est.Status, est.Reason = Inconclusive, strings.Join(few, "; ")
		}
		e.points = append(e.points, est)
		e.evidence = append(e.evidence, fmt.Sprintf(
			"%s: %s/%s %s = %s (95%% CI %s–%s), claim %s; Mann-Whitney p=%s (%s%s); medians %s vs %s, n=%d+%d, CV %s vs %s → %s",
			pointName(p.label), nameA, nameB, c.Metric, fmtRatio(ratio), fmtRatio(lo), fmtRatio(hi),
			strings.Join(claim, " and "), fmtP(est.P), test, holmClause(est.PAdj, len(pairs)),
			fmtNum(sa.Median), fmtNum(sb.Median), sa.N, sb.N, fmtPct(sa.CV), fmtPct(sb.CV), est.Status))
	}
	return e
}

// evalFlat evaluates variant: V, flat_over: {k: [...]} per slice of the
// sweep (the other keys held fixed).
func evalFlat(c Check, byVariant map[string][]*series, seed int64) evaluation {
	key := sortedKeys(c.FlatOver)[0]
	e := evaluation{whole: "across " + key}
	values := c.FlatOver[key]
	name := c.Variant
	limit := 1 + c.tolerance()
	e.method = fmt.Sprintf("largest over smallest median of %s across %s = %s with a 95%% percentile bootstrap interval "+
		"(%d resamples, seed %d); flat when the interval's upper end ≤ %s; two-sided Mann-Whitney U between the highest "+
		"and lowest cell, Holm-corrected across slices",
		name, key, strings.Join(values, ", "), Resamples, seed, fmtRatio(limit))

	// Slice the variant's series by the other sweep keys.
	type slice struct {
		label string
		rest  map[string]string
		cells []*series // one per listed value, nil when missing
	}
	var slicesOf []*slice
	for _, s := range byVariant[name] {
		idx := -1
		for i, v := range values {
			if sameValue(s.point[key], v) {
				idx = i
			}
		}
		if idx < 0 {
			continue
		}
		rest := map[string]string{}
		for k, v := range s.point {
			if k != key {
				rest[k] = v
			}
		}
		label := pointLabel(rest)
		var sl *slice
		for _, have := range slicesOf {
			if have.label == label {
				sl = have
			}
		}
		if sl == nil {
			sl = &slice{label: label, rest: rest, cells: make([]*series, len(values))}
			slicesOf = append(slicesOf, sl)
		}
		if sl.cells[idx] == nil {
			sl.cells[idx] = &series{point: s.point, label: s.label}
		}
		sl.cells[idx].values = append(sl.cells[idx].values, s.values...)
	}
	slices.SortFunc(slicesOf, func(a, b *slice) int { return comparePoints(a.rest, b.rest) })
	if len(slicesOf) == 0 {
		for _, v := range values {
			e.problems = append(e.problems, fmt.Sprintf("no data for variant %s at %s=%s", name, key, v))
		}
		return e
	}

	higher := HigherIsBetter(c.Metric)
	type prepared struct {
		sl           *slice
		cells        []*series
		hiIdx, loIdx int
		few          []string
	}
	var preps []prepared
	var raw []float64
	for _, sl := range slicesOf {
		var present []*series
		var few []string
		for i, cell := range sl.cells {
			if cell == nil {
				at := key + "=" + values[i]
				if sl.label != "" {
					at += ", " + sl.label
				}
				e.problems = append(e.problems, fmt.Sprintf("no data for variant %s at %s", name, at))
				continue
			}
			few = append(few, fewTrials(name, cell.label, cell.values)...)
			present = append(present, cell)
		}
		e.problems = append(e.problems, few...)
		if len(present) < 2 {
			continue
		}
		hiIdx, loIdx := 0, 0
		for i, cell := range present {
			m := median(cell.values)
			if m > median(present[hiIdx].values) {
				hiIdx = i
			}
			if m < median(present[loIdx].values) {
				loIdx = i
			}
		}
		preps = append(preps, prepared{sl, present, hiIdx, loIdx, few})
		raw = append(raw, uTest(present[hiIdx].values, present[loIdx].values))
	}
	adj := Holm(raw)

	for i, pr := range preps {
		samples := make([][]float64, len(pr.cells))
		var medians, allMin, allMax []string
		var weak []string
		minTrial, maxTrial := math.Inf(1), math.Inf(-1)
		for j, cell := range pr.cells {
			samples[j] = cell.values
			s := Summarize(cell.values)
			medians = append(medians, fmtNum(s.Median))
			allMin = append(allMin, fmtNum(s.Min))
			allMax = append(allMax, fmtNum(s.Max))
			minTrial, maxTrial = math.Min(minTrial, s.Min), math.Max(maxTrial, s.Max)
			weak = append(weak, weakFlags(&e, name, cell.label, cell.values, higher)...)
		}
		spreadOf := func(m []float64) float64 { return slices.Max(m) / slices.Min(m) }
		meds := make([]float64, len(samples))
		for j := range samples {
			meds[j] = median(samples[j])
		}
		spread := spreadOf(meds)
		if slices.Min(meds) <= 0 {
			spread = math.NaN()
		}
		rng := rand.New(rand.NewPCG(uint64(seed), hash(key+"|"+pr.sl.label)))
		lo, hi := bootstrap(rng, samples, spreadOf)
		hiCell, loCell := pr.cells[pr.hiIdx], pr.cells[pr.loIdx]
		worstSep := Summarize(hiCell.values).Min / Summarize(loCell.values).Max
		est := Estimate{Point: pr.sl.label, Ratio: spread, Low: lo, High: hi, P: raw[i], PAdj: adj[i], margin: 1 - hi/limit}
		trialSpread := maxTrial / minTrial
		switch {
		case math.IsNaN(spread):
			est.Status, est.Reason = Inconclusive, "a median is 0 or negative, so max/min is undefined"
		case lo > limit && adj[i] < Alpha && (len(weak) == 0 || worstSep > limit):
			est.Status, est.leans = Contradicted, Contradicted
			est.Reason = fmt.Sprintf("max/min of the medians = %s (95%% CI %s–%s) exceeds %s; %s vs %s: p=%s%s",
				fmtRatio(spread), fmtRatio(lo), fmtRatio(hi), fmtRatio(limit),
				pointName(hiCell.label), pointName(loCell.label), fmtP(raw[i]), fmtHolm(adj[i], len(preps), "slices"))
		case hi <= limit && (len(weak) == 0 || trialSpread <= limit):
			est.Status, est.leans = Supported, Supported
			est.Reason = fmt.Sprintf("max/min of the medians = %s (95%% CI %s–%s) stays within %s",
				fmtRatio(spread), fmtRatio(lo), fmtRatio(hi), fmtRatio(limit))
		default:
			est.Status = Inconclusive
			var why []string
			if spread <= limit {
				est.leans = Supported
				if hi > limit {
					why = append(why, fmt.Sprintf("the 95%% interval reaches %s, beyond the tolerance %s", fmtRatio(hi), fmtRatio(limit)))
				}
				if len(weak) > 0 {
					why = append(why, fmt.Sprintf("directional only: %s, and the trials range over %s", strings.Join(weak, ", "), fmtRatio(trialSpread)))
				}
				est.Reason = fmt.Sprintf("the medians look flat (max/min = %s) but %s", fmtRatio(spread), strings.Join(why, "; "))
			} else {
				est.leans = Contradicted
				if lo <= limit {
					why = append(why, fmt.Sprintf("the 95%% interval starts at %s, inside the tolerance %s", fmtRatio(lo), fmtRatio(limit)))
				}
				if !(adj[i] < Alpha) {
					why = append(why, fmt.Sprintf("p=%s%s between the highest and lowest cell is not below %g",
						fmtP(raw[i]), fmtHolm(adj[i], len(preps), "slices"), Alpha))
				}
				if len(weak) > 0 && worstSep <= limit {
					why = append(why, fmt.Sprintf("directional only: %s, and the trial ranges overlap", strings.Join(weak, ", ")))
				}
				est.Reason = fmt.Sprintf("the medians vary by more than the tolerance (max/min = %s > %s) but not clearly: %s",
					fmtRatio(spread), fmtRatio(limit), strings.Join(why, "; "))
			}
		}
		if len(pr.few) > 0 {
			est.Status, est.Reason = Inconclusive, strings.Join(pr.few, "; ")
		}
		e.points = append(e.points, est)
		prefix := ""
		if pr.sl.label != "" {
			prefix = pr.sl.label + ": "
		}
		var keyVals []string
		for _, cell := range pr.cells {
			keyVals = append(keyVals, cell.point[key])
		}
		e.evidence = append(e.evidence, fmt.Sprintf(
			"%s%s %s medians %s over %s = %s (trial ranges %s); max/min = %s (95%% CI %s–%s), tolerance ≤ %s; "+
				"Mann-Whitney highest vs lowest p=%s%s → %s",
			prefix, name, c.Metric, strings.Join(medians, ", "), key, strings.Join(keyVals, ", "),
			rangesOf(allMin, allMax), fmtRatio(spread), fmtRatio(lo), fmtRatio(hi), fmtRatio(limit),
			fmtP(raw[i]), fmtHolm(adj[i], len(preps), "slices"), est.Status))
	}
	return e
}

// rangesOf formats per-cell trial ranges "795–1247, 560–590".
func rangesOf(mins, maxs []string) string {
	out := make([]string, len(mins))
	for i := range mins {
		out[i] = mins[i] + "–" + maxs[i]
	}
	return strings.Join(out, ", ")
}

// weakFlags runs Flags on one cell, records every flag in the evaluation's
// flags and evidence, and returns the ones that weaken a verdict (noise and
// warm-up; too few trials is a problem of its own).
func weakFlags(e *evaluation, variant, label string, xs []float64, higherIsBetter bool) []string {
	var weak []string
	where := variant
	if label != "" {
		where += ", " + label
	}
	for _, f := range Flags(xs, higherIsBetter) {
		tag := fmt.Sprintf("%s (%s)", f.Code, where)
		if !slices.Contains(e.flags, tag) {
			e.flags = append(e.flags, tag)
			e.notes = append(e.notes, fmt.Sprintf("%s at %s: %s: %s", variant, pointName(label), f.Code, f.Message))
		}
		switch f.Code {
		case FlagNoisyCV, FlagOutlierTrial, FlagSlowFirst:
			weak = append(weak, tag)
		}
	}
	return weak
}

// fewTrials reports a cell too small for any test.
func fewTrials(variant, label string, xs []float64) []string {
	if len(xs) >= MinTrialsTest {
		return nil
	}
	return []string{fmt.Sprintf("only %d trials of %s at %s; a claim needs at least %d per cell, since Mann-Whitney cannot reach p < 0.05 with fewer (raise trials)",
		len(xs), variant, pointName(label), MinTrialsTest)}
}

// missingAtWhere reports where-values that no cell of a variant has.
func missingAtWhere(where map[string][]string, byVariant map[string][]*series, names ...string) []string {
	var out []string
	for _, k := range sortedKeys(where) {
		for _, want := range where[k] {
			for _, name := range names {
				found := false
				for _, s := range byVariant[name] {
					if sameValue(s.point[k], want) {
						found = true
					}
				}
				if !found {
					out = append(out, fmt.Sprintf("no data for variant %s at %s=%s", name, k, want))
				}
			}
		}
	}
	return out
}

// uTest is the two-sided Mann-Whitney U p-value via benchmath (1 when the
// test cannot run, e.g. all values equal).
func uTest(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 1
	}
	th := benchmath.DefaultThresholds
	return benchmath.AssumeNothing.Compare(
		benchmath.NewSample(slices.Clone(a), &th), benchmath.NewSample(slices.Clone(b), &th)).P
}

// scale returns xs multiplied by r (a new slice).
func scale(xs []float64, r float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * r
	}
	return out
}

// bootstrap returns the 2.5th and 97.5th percentiles (nearest rank) of stat
// over Resamples resamples: each sample is resampled with replacement to its
// own size, and stat receives the medians of the resamples in order. NaN
// when any sample is empty or a resampled statistic is undefined.
func bootstrap(rng *rand.Rand, samples [][]float64, stat func(medians []float64) float64) (lo, hi float64) {
	for _, s := range samples {
		if len(s) == 0 {
			return math.NaN(), math.NaN()
		}
	}
	bufs := make([][]float64, len(samples))
	for i, s := range samples {
		bufs[i] = make([]float64, len(s))
	}
	meds := make([]float64, len(samples))
	out := make([]float64, Resamples)
	for r := range out {
		for i, s := range samples {
			buf := bufs[i]
			for j := range buf {
				buf[j] = s[rng.IntN(len(s))]
			}
			slices.Sort(buf)
			n := len(buf)
			if n%2 == 1 {
				meds[i] = buf[n/2]
			} else {
				meds[i] = (buf[n/2-1] + buf[n/2]) / 2
			}
		}
		out[r] = stat(meds)
		if math.IsNaN(out[r]) {
			return math.NaN(), math.NaN()
		}
	}
	slices.Sort(out)
	// Nearest rank: the ceil(q*B)-th smallest. The 1e-9 keeps 0.975*10000,
	// which floating point may compute as 9750.000000000002, at rank 9750.
	rank := func(q float64) float64 { return out[int(math.Ceil(q*float64(Resamples)-1e-9))-1] }
	return rank((1 - Confidence) / 2), rank(1 - (1-Confidence)/2)
}

// hash derives the second half of a point's bootstrap seed from its label,
// so that each point gets its own stream and adding a point to a sweep does
// not change the intervals of the others.
func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// find returns the series with the given label, or nil.
func find(ss []*series, label string) *series {
	for _, s := range ss {
		if s.label == label {
			return s
		}
	}
	return nil
}

// matchWhere reports whether point lies in the where selection.
func matchWhere(point map[string]string, where map[string][]string) bool {
	for k, vs := range where {
		v, ok := point[k]
		if !ok {
			return false
		}
		if !slices.ContainsFunc(vs, func(w string) bool { return sameValue(v, w) }) {
			return false
		}
	}
	return true
}

// sameValue compares sweep values as numbers when both parse ("400" and
// "400.0" from YAML are the same pool size), as strings otherwise.
func sameValue(a, b string) bool {
	if a == b {
		return true
	}
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	return errA == nil && errB == nil && x == y
}

// pointLabel is the canonical name of a point: "pool=400, users=2000".
func pointLabel(p map[string]string) string {
	parts := make([]string, 0, len(p))
	for _, k := range sortedKeys(p) {
		parts = append(parts, k+"="+p[k])
	}
	return strings.Join(parts, ", ")
}

// pointName is pointLabel for prose: the empty point of an unswept run
// reads "the only point".
func pointName(label string) string {
	if label == "" {
		return "the only point"
	}
	return label
}

// comparePoints orders points key by key, numerically where both values
// are numbers, so that pool=50 comes before pool=400.
func comparePoints(a, b map[string]string) int {
	keys := sortedKeys(a)
	for _, k := range sortedKeys(b) {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		x, y := a[k], b[k]
		fx, errX := strconv.ParseFloat(x, 64)
		fy, errY := strconv.ParseFloat(y, 64)
		switch {
		case errX == nil && errY == nil && fx != fy:
			if fx < fy {
				return -1
			}
			return 1
		case x != y && (errX != nil || errY != nil):
			return strings.Compare(x, y)
		}
	}
	return 0
}

// fmtRatio prints a ratio to three decimals without trailing zeros (2, 1.65,
// 1.002): flatness lives in the third decimal.
func fmtRatio(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return fmt.Sprint(r)
	}
	return strconv.FormatFloat(math.Round(r*1000)/1000, 'f', -1, 64)
}

// holmClause is fmtHolm inside an existing parenthesis.
func holmClause(adj float64, m int) string {
	if m <= 1 {
		return ""
	}
	return fmt.Sprintf("; Holm %s over %d points", fmtP(adj), m)
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

// MarshalJSON writes NaN fields as null (encoding/json rejects NaN).
func (v Verdict) MarshalJSON() ([]byte, error) {
	type plain Verdict // no methods: avoids recursion
	return marshal(struct {
		plain
		Ratio *float64 `json:"ratio"`
		Low   *float64 `json:"low"`
		High  *float64 `json:"high"`
		P     *float64 `json:"p"`
	}{plain(v), num(v.Ratio), num(v.Low), num(v.High), num(v.P)})
}

// MarshalJSON writes NaN fields as null (encoding/json rejects NaN).
func (e Estimate) MarshalJSON() ([]byte, error) {
	type plain Estimate
	return marshal(struct {
		plain
		Ratio *float64 `json:"ratio"`
		Low   *float64 `json:"low"`
		High  *float64 `json:"high"`
		P     *float64 `json:"p"`
		PAdj  *float64 `json:"p_adj"`
	}{plain(e), num(e.Ratio), num(e.Low), num(e.High), num(e.P), num(e.PAdj)})
}
