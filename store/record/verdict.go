package record

import (
	"encoding/json"
	"math"
)

// PreviousVerdictsFile keeps the verdicts a run had before `threadlab
// report --reevaluate` recomputed them, byte for byte.
const PreviousVerdictsFile = "verdicts.previous.json"

// PreviousManifestFile keeps the manifest a run was made with when
// `threadlab report --reevaluate --claims` replaced its claims.
const PreviousManifestFile = "manifest.previous.yaml"

// Verdict is one entry of verdicts.json: a claim and what the data says of
// it, with the numbers of the unit that decided it and every unit's result.
// Numbers that could not be computed are absent (never written as 0 when
// they are undefined: a ratio over a zero denominator has no value).
type Verdict struct {
	ID       string    `json:"id"`
	Says     string    `json:"says"`
	Status   string    `json:"status"`           // supported, contradicted, inconclusive
	Reason   string    `json:"reason,omitempty"` // why the status is what it is, in one sentence
	Leans    string    `json:"leans,omitempty"`  // inconclusive only: what the estimates alone say
	Evidence []string  `json:"evidence"`
	Point    string    `json:"point,omitempty"` // the unit that decided the verdict
	Ratio    float64   `json:"ratio,omitempty"`
	Low      float64   `json:"ci_low,omitempty"`
	High     float64   `json:"ci_high,omitempty"`
	P        float64   `json:"p,omitempty"`
	Method   string    `json:"method,omitempty"` // the test, named, with its level and resampling
	Flags    []string  `json:"flags,omitempty"`
	Points   []Point   `json:"points,omitempty"`
	Decision *Decision `json:"decision,omitempty"`
	// Open is true when more trials could still decide an inconclusive
	// claim; Look and MaxLooks place a group-sequential decision; Level is
	// the nominal one-sided level of its tests.
	Open     bool    `json:"open,omitempty"`
	Look     int     `json:"look,omitempty"`
	MaxLooks int     `json:"max_looks,omitempty"`
	Level    float64 `json:"level,omitempty"`
	// Version is the threadlab version whose rules decided the verdict.
	Version string `json:"version,omitempty"`
	// Direction (+1 A/B above 1, -1 below, 0 neither), its p-value and
	// sentence are a compare claim's direction by the verdict's own test
	// and level; Outcome is what the reader is told (supported, smaller,
	// equivalent, reversed, inconclusive, not-applicable). Status stays
	// the threshold verdict. Both are absent in runs judged before they
	// existed: `threadlab report --reevaluate` adds them.
	Direction     int     `json:"direction,omitempty"`
	DirectionP    float64 `json:"direction_p,omitempty"`
	DirectionText string  `json:"direction_text,omitempty"`
	Outcome       string  `json:"outcome,omitempty"`
	// Previous is set by a re-evaluation whose status or reason differs
	// from the verdict the run had before.
	Previous *Previous `json:"previous,omitempty"`
	// DesignFact is the manifest's reason the claim cannot fail by
	// construction: the verdict is shown, not counted as evidence.
	DesignFact string `json:"design_fact,omitempty"`
	// Differs is the manifest's sentence on why the result may differ
	// from the seed's (Cause: finding, scale or design).
	Differs *Differs `json:"differs,omitempty"`
}

// Differs is why a result differs from its seed's, as the manifest says.
type Differs struct {
	Cause string `json:"cause"`
	Why   string `json:"why"`
}

// Point is one unit of a verdict: a sweep point, a pair of levels
// (flat_over) or a slice (trend). Undefined numbers are null.
type Point struct {
	Point  string   `json:"point"`
	Ratio  *float64 `json:"ratio"`
	Low    *float64 `json:"low"`
	High   *float64 `json:"high"`
	P      *float64 `json:"p"`
	PAdj   *float64 `json:"p_adj"`
	Status string   `json:"status"`
	Reason string   `json:"reason,omitempty"`
}

// Previous is what a re-evaluated claim said before, and why it changed.
type Previous struct {
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Version string `json:"version,omitempty"` // "" for runs recorded before versions were kept
	Why     string `json:"why"`               // what changed, in one sentence
}

// Num maps a non-finite value to nil (JSON null), a finite one to itself.
func Num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// Finite maps NaN and infinities to 0, which omitempty leaves out of the
// file: the top-level numbers are absent when undefined.
func Finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// ReadVerdictsFile decodes a verdicts file of a run directory (nil when
// absent).
func ReadVerdictsFile(dir, name string) ([]Verdict, error) {
	data, err := readOptional(dir, name)
	if err != nil || len(data) == 0 {
		return nil, err
	}
	var v []Verdict
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// Decision is a row of the decision framework a claim backs.
type Decision struct {
	When string `json:"when"` // the situation, e.g. "I/O-bound, blocking JDBC"
	Pick string `json:"pick"` // the variant to choose
	Then string `json:"then,omitempty"`
	// TestedBy are the claims whose verdicts test Then (the manifest's
	// decision.tested_by); empty: the seed's advice, not tested here.
	TestedBy []string `json:"tested_by,omitempty"`
}
