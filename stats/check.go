package stats

// Check is the machine-readable part of a claim in a manifest. It reads as
// a sentence about medians across trials:
//
//   - compare: [A, B], at_least: r   -> metric(A) / metric(B) >= r at every selected point
//   - compare: [A, B], at_most: r    -> metric(A) / metric(B) <= r at every selected point
//   - compare: [A, B], at_least: r1, at_most: r2 -> r1 <= A/B <= r2 ("within 10%")
//   - variant: V, flat_over: {k: [..]} -> metric(V) varies by at most Tolerance (default 10%)
//     across those values of sweep key k
//   - variant: V, at_most: x (or at_least: x) with no compare -> an absolute check on
//     metric(V) itself, e.g. {metric: errors, variant: webflux, at_most: 0}
//   - variant: V, increases_over: {k: [..]} (or decreases_over) -> metric(V) rises
//     (falls) monotonically across those values of sweep key k, last/first by at
//     least Tolerance (default 10%)
//
// Where restricts the sweep points considered (all points when empty).
// Metric names are trials.csv columns (rps, wall_ms, p99_ms, ...). Group
// selects the request group (the measured group when empty).
//
// A check is a statement about the ratio of medians, not about one trial,
// because seed 000 showed a single trial can swing by more than the claimed
// difference; Evaluate decides it with an interval and a test (see there).
// What a manifest may write here is validated by the experiments package,
// the one home of claim validation, against the manifest's own variants,
// sweep and groups.
type Check struct {
	Metric  string              `yaml:"metric" json:"metric"`
	Group   string              `yaml:"group,omitempty" json:"group,omitempty"`
	Variant string              `yaml:"variant,omitempty" json:"variant,omitempty"`
	Compare []string            `yaml:"compare,omitempty" json:"compare,omitempty"`
	Where   map[string][]string `yaml:"where,omitempty" json:"where,omitempty"`
	// AtLeast and AtMost are pointers so that a bound of 0 (an absolute
	// "errors at_most: 0") is told apart from no bound.
	AtLeast       *float64            `yaml:"at_least,omitempty" json:"at_least,omitempty"`
	AtMost        *float64            `yaml:"at_most,omitempty" json:"at_most,omitempty"`
	FlatOver      map[string][]string `yaml:"flat_over,omitempty" json:"flat_over,omitempty"`
	IncreasesOver map[string][]string `yaml:"increases_over,omitempty" json:"increases_over,omitempty"`
	DecreasesOver map[string][]string `yaml:"decreases_over,omitempty" json:"decreases_over,omitempty"`
	Tolerance     float64             `yaml:"tolerance,omitempty" json:"tolerance,omitempty"`
}

// Bound returns the value of an optional bound and whether it is set.
func Bound(b *float64) (float64, bool) {
	if b == nil {
		return 0, false
	}
	return *b, true
}

// F returns a pointer to x, for building checks in code and tests.
func F(x float64) *float64 { return &x }

// DefaultTolerance is the flat_over tolerance when a check sets none: the
// same 10% at which a cell's own trials count as noisy.
const DefaultTolerance = 0.10

// tolerance returns c.Tolerance or its default.
func (c Check) tolerance() float64 {
	if c.Tolerance > 0 {
		return c.Tolerance
	}
	return DefaultTolerance
}

// Band is the two-sided band a claim of equality is judged against, in
// the units of its interval: [at_least, at_most] when the check sets both
// (rule: tie), [1/(1+tolerance), 1+tolerance] for a flat_over check
// (evalFlat's band); ok is false for a one-sided check.
func (c Check) Band() (lo, hi float64, ok bool) {
	if c.AtLeast != nil && c.AtMost != nil {
		return *c.AtLeast, *c.AtMost, true
	}
	if len(c.FlatOver) > 0 {
		limit := 1 + c.tolerance()
		return 1 / limit, limit, true
	}
	return 0, 0, false
}
