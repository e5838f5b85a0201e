package stats

import (
	"fmt"
	"math"
	"strings"
)

// Verdict statuses.
const (
	Supported    = "supported"
	Contradicted = "contradicted"
	Inconclusive = "inconclusive"
	// NotApplicable is a claim whose precondition does not hold on this
	// host or in this run (the target's CPU never saturated, too few
	// cores, a variant whose JDK is not installed): the data neither
	// supports nor contradicts it here. SetAside makes one.
	NotApplicable = "not-applicable"
)

// MinReplicates is the fewest independent replicates per cell (forks, or
// trials when a cell has no fork structure) on which a claim is decided:
// with 3 against 3 the smallest one-sided Mann-Whitney p is 1/C(6,3) = 0.05,
// so fewer can never reach Alpha.
const MinReplicates = 3

// Cell holds one metric for one variant at one sweep point and request
// group.
type Cell struct {
	Variant string
	Point   map[string]string // sweep key -> value, e.g. {"pool": "400"}; empty without a sweep
	Group   string
	Metric  string
	// Values holds one value per independent replicate (trial), in trial
	// order. It is ignored when Forks is set.
	Values []float64
	// Forks, when set, holds the iterations of each fork (a fresh JVM) in
	// order: the tests compare per-fork medians, so a fork is the unit of
	// replication, and intervals resample the forks by their medians.
	Forks [][]float64
}

// Options tunes an evaluation; the zero value is a fixed design at Alpha
// with Resamples resamples and seed 0.
type Options struct {
	Seed       int64
	Alpha      float64    // overall one-sided level of each test; 0 means Alpha
	Resamples  int        // bootstrap resamples; 0 means Resamples
	Sequential Sequential // the look this evaluation is; zero value: a single look
	Version    string     // the threadlab version deciding, recorded in the verdict
	// lazyCI skips the bootstrap at units where no test is significant,
	// since the interval cannot change their status then; the calibration
	// suite sets it (the verdicts are identical, only evidence differs).
	lazyCI bool
}

// needCI reports whether a unit's interval must be computed.
func (o Options) needCI(sides []side) bool {
	if !o.lazyCI {
		return true
	}
	for _, s := range sides {
		if s.pClaim <= o.level() || s.pOpp <= o.level() {
			return true
		}
	}
	return false
}

func (o Options) alpha() float64 {
	if o.Alpha > 0 && o.Alpha < 1 {
		return o.Alpha
	}
	return Alpha
}

func (o Options) resamples() int {
	if o.Resamples > 0 {
		return o.Resamples
	}
	return Resamples
}

// level is the nominal level at this look.
func (o Options) level() float64 { return o.Sequential.Level(o.alpha()) }

// Estimate is a claim's result at one unit of the claim: a sweep point
// (compare, absolute), a pair of levels of one slice (flat_over) or a slice
// (trend).
type Estimate struct {
	// Point names the unit ("pool=400", "pool=20 vs pool=40", "users=2000");
	// "" when there is nothing to name (a run without a sweep).
	Point string
	// Ratio is the unit's estimate: A/B of the medians (compare), the
	// ratio of two levels' medians (flat_over), the median itself
	// (absolute), the last level's median over the first's (trend). Low
	// and High bound its bootstrap interval at the level of the test (for
	// a trend, that of its size test, last/first against 1 ± tolerance).
	Ratio float64
	Low   float64
	High  float64
	// P is the one-sided p-value that decided the unit, PAdj the same
	// after Holm's correction across the claim's units.
	P      float64
	PAdj   float64
	Status string
	Reason string
	leans  string
	margin float64 // how far the interval clears the bound (relative); picks the weakest point
}

// Verdict is a claim's outcome with its evidence. store/record holds its
// on-disk shape.
type Verdict struct {
	ID     string
	Says   string
	Status string // Supported, Contradicted, Inconclusive or NotApplicable
	// Reason says in one sentence why the status is what it is; for
	// Inconclusive it names what to change (more trials, an absolute check).
	Reason string
	// Leans is, for an Inconclusive verdict, what the estimates alone say
	// (Supported or Contradicted), "" when they point both ways or there is
	// no data. The decision framework marks such rows "directional".
	Leans    string
	Evidence []string
	// Point, Ratio, Low, High and P (Holm-adjusted) are the numbers of the
	// unit that decided the verdict: the contradicting one, the weakest
	// supporting one, or the first inconclusive one. NaN when nothing could
	// be computed.
	Point  string
	Ratio  float64
	Low    float64
	High   float64
	P      float64
	Method string
	Flags  []string // "noisy-cv (webflux, pool=400)": evidence, never a gate
	Points []Estimate
	// Open is true when the verdict is inconclusive for want of data that
	// more trials could bring (too few replicates, a test not yet
	// significant); false when it is decided or more trials cannot help
	// (a zero denominator, a missing variant).
	Open bool
	// Look and MaxLooks place a group-sequential evaluation (0 for a fixed
	// design); Level is the nominal one-sided level the tests ran at.
	Look     int
	MaxLooks int
	Level    float64
	Version  string
	// Direction is, for a compare check, where A/B lies against 1 by the
	// verdict's own test and level (direction.go): +1 above, -1 below, 0
	// not significant; DirectionP the p-value that decided it and
	// DirectionText the sentence. Outcome is what the reader is told
	// (OutcomeSupported ... OutcomeNotApplicable), from the status and
	// the direction: the status stays the threshold verdict.
	Direction     int
	DirectionP    float64
	DirectionText string
	Outcome       string
}

// Decided reports whether a sequential run can stop adding trials for this
// claim: it is supported, contradicted or not applicable, or inconclusive
// for a reason more trials cannot change. A run also stops at its last look, whatever this says.
func Decided(v Verdict) bool { return v.Status != Inconclusive || !v.Open }

// Evaluate decides a claim at a fixed design with the given bootstrap seed.
func Evaluate(id, says string, c Check, cells []Cell, seed int64) Verdict {
	return EvaluateWith(id, says, c, cells, Options{Seed: seed})
}

// EvaluateWith decides a claim from the run's cells. Each kind of check has
// one established test, named in the method and evidence lines:
//
//   - compare with at_least or at_most (superiority against a ratio r):
//     one-sided Mann-Whitney U of A against r×B at each of the claim's
//     points, AND the bootstrap interval of the ratio of medians clearing r
//     (superiority.go);
//   - compare with both bounds (a band): two one-sided tests, TOST
//     (equivalence.go);
//   - flat_over: TOST of every pair of the listed levels within the
//     tolerance, every pair of every slice (flat.go);
//   - variant with at_least/at_most and no compare (absolute): one-sample
//     Wilcoxon signed-rank of log(value/bound), or the sign test when a
//     value or the bound is not positive, AND the bootstrap interval of the
//     median (absolute.go);
//   - increases_over/decreases_over: one-sided Jonckheere-Terpstra across
//     the listed levels, in every slice (trend.go).
//
// Every unit must support a supported claim, an intersection-union test
// that needs no correction (judge.go). Every kind is contradicted by the
// mirror test in the other direction (with the mirror interval), Holm
// across all of the claim's opposite tests. Noise
// flags are evidence only: they never make a verdict harder to reach.
// A cell with fewer than MinReplicates replicates, a missing variant or a
// zero denominator keeps a claim inconclusive, saying why.
func EvaluateWith(id, says string, c Check, cells []Cell, o Options) Verdict {
	nan := math.NaN()
	v := Verdict{ID: id, Says: says, Status: Inconclusive, Ratio: nan, Low: nan, High: nan, P: nan,
		Level: o.level(), Version: o.Version}
	if o.Sequential.active() {
		v.Look, v.MaxLooks = min(o.Sequential.Look, o.Sequential.MaxLooks), o.Sequential.MaxLooks
	}
	v.DirectionP, v.Outcome = nan, OutcomeInconclusive
	fail := func(reason string) Verdict {
		v.Reason, v.Evidence = reason, []string{reason}
		return v
	}
	if err := o.Sequential.validate(); err != nil {
		return fail(err.Error() + " (fix the caller's Sequential options)")
	}
	picked, problem := pick(c, cells)
	if problem != "" {
		return fail(problem)
	}
	var e evaluation
	switch kindOf(c) {
	case kindSuperiority, kindBand:
		e = evalCompare(c, picked, o)
	case kindFlat:
		e = evalFlat(c, picked, o)
	case kindAbsolute:
		e = evalAbsolute(c, picked, o)
	case kindTrend:
		e = evalTrend(c, picked, o)
	default:
		return fail("the check is none of compare: [A, B], flat_over, increases_over/decreases_over or an absolute " +
			"at_least/at_most on one variant (fix the manifest; threadlab lint explains)")
	}
	v.Method = e.method
	if d := o.Sequential.describe(o.alpha()); d != "" {
		v.Method += "; " + d
	}
	v.Points, v.Flags = e.points, e.flags
	v.Evidence = append(append(append(v.Evidence, e.evidence...), e.notes...), e.problems...)
	e.decide(&v)
	if e.directed {
		v.Direction, v.DirectionP = e.dir, e.dirP
		v.DirectionText = DirectionText(c.Compare[0]+"/"+c.Compare[1], e.dir, e.dirP)
	}
	v.Outcome = Outcome(c, v.Status, v.Direction, v.Low, v.High)
	if v.Status == Inconclusive && v.Open && o.Sequential.active() {
		if o.Sequential.final() {
			v.Reason += fmt.Sprintf(" (last look %d of %d: max reached)", v.Look, v.MaxLooks)
		} else {
			v.Reason += fmt.Sprintf(" (look %d of %d: more trials may decide it)", v.Look, v.MaxLooks)
		}
	}
	return v
}

// Check kinds.
const (
	kindSuperiority = "superiority"
	kindBand        = "band"
	kindFlat        = "flat"
	kindAbsolute    = "absolute"
	kindTrend       = "trend"
)

// kindOf classifies a check; "" when it is none of the forms (the manifest
// validator rejects such checks before a run).
func kindOf(c Check) string {
	bounds := 0
	if c.AtLeast != nil {
		bounds++
	}
	if c.AtMost != nil {
		bounds++
	}
	trend := len(c.IncreasesOver) + len(c.DecreasesOver)
	switch {
	case len(c.Compare) == 2 && bounds == 2:
		return kindBand
	case len(c.Compare) == 2 && bounds == 1:
		return kindSuperiority
	case len(c.Compare) > 0 || c.Variant == "":
		return ""
	case len(c.FlatOver) == 1 && bounds == 0 && trend == 0:
		return kindFlat
	case trend == 1 && bounds == 0 && len(c.FlatOver) == 0:
		return kindTrend
	case bounds > 0 && trend == 0 && len(c.FlatOver) == 0:
		return kindAbsolute
	}
	return ""
}

// evaluation is what one kind's evaluator found, before the verdict.
type evaluation struct {
	points   []Estimate
	problems []string // missing data: force Inconclusive
	closed   bool     // a problem more trials cannot fix (zero denominator, missing variant)
	flags    []string
	notes    []string // one sentence per flagged cell, after the per-unit evidence
	whole    string   // how to name the unit "" in prose ("the only point", "across pool")
	units    string   // the plural of a unit in prose: "points" (default), "pairs", "slices"
	evidence []string
	method   string
	// directed is set by compare checks, with the claim's direction and
	// its p-value (direction.go).
	directed bool
	dir      int
	dirP     float64
}

// missing records problems that more trials of the same design cannot
// fix: a variant, point or level the run has no data for.
func (e *evaluation) missing(problems ...string) {
	if len(problems) > 0 {
		e.problems = append(e.problems, problems...)
		e.closed = true
	}
}

// weaker reports whether supported point a is at least as weak as b: a
// smaller margin, or the same margin with a p-value at least as large.
func weaker(a, b *Estimate) bool {
	if a.margin != b.margin {
		return a.margin < b.margin
	}
	return !(a.PAdj < b.PAdj)
}

// decide turns per-unit estimates and problems into the verdict.
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
			// The weakest point decides: the smallest margin, then (zero-error claims clear
			// their bound by 0 at every load) the largest p, then, points coming in sweep
			// order, the last and hardest one rather than the first.
			if weakest < 0 || weaker(p, &e.points[weakest]) {
				weakest = i
			}
		}
	}
	v.Status = Inconclusive
	switch {
	case len(contra) > 0:
		v.Status = Contradicted
		decider = contra[0]
		for _, p := range contra[1:] {
			if p.PAdj < decider.PAdj {
				decider = p
			}
		}
		v.Reason = "contradicted " + e.at(decider.Point) + ": " + decider.Reason
	case len(e.problems) > 0:
		v.Reason = strings.Join(e.problems, "; ")
		v.Open = !e.closed
		switch {
		case len(incon) > 0:
			decider = incon[0]
		case weakest >= 0:
			decider = &e.points[weakest]
		}
	case len(incon) > 0:
		decider = incon[0]
		var rs []string
		for _, p := range incon {
			rs = append(rs, e.at(p.Point)+": "+p.Reason)
		}
		v.Reason = strings.Join(rs, "; ")
		v.Open = !e.closed
	case weakest >= 0:
		v.Status = Supported
		decider = &e.points[weakest]
		if len(e.points) == 1 {
			v.Reason = "supported: " + decider.Reason
		} else {
			v.Reason = fmt.Sprintf("supported at all %d %s; weakest %s: %s",
				len(e.points), orDefault(e.units, "points"), e.at(decider.Point), decider.Reason)
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

// at names a unit in prose: "at pool=400", or the evaluation's name for
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
