package stats

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

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
//     (falls) monotonically across those values of sweep key k
//
// Where restricts the sweep points considered (all points when empty).
// Metric names are trials.csv columns (rps, wall_ms, p99_ms, ...). Group
// selects the request group (the measured group when empty).
//
// A check is a statement about the ratio of medians, not about one trial,
// because seed 000 showed a single trial can swing by more than the claimed
// difference; Evaluate decides it with an interval and a test (see there).
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

// FieldError is one problem with a check. Field is relative to the check
// ("compare[1]", "where.pool"), so that the manifest loader can prefix it
// with the claim's path.
type FieldError struct {
	Field   string
	Problem string // what is wrong and how to fix it
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// Validate checks c against the manifest's variant names and sweep keys. It
// returns nil or an errors.Join of *FieldError, one per problem, each saying
// how to fix it; it does not stop at the first.
func (c Check) Validate(variants []string, sweepKeys []string) error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{field, fmt.Sprintf(format, args...)})
	}
	oneOf := func(names []string) string {
		if len(names) == 0 {
			return "none are defined"
		}
		return "use one of " + strings.Join(names, ", ")
	}

	switch {
	case c.Metric == "":
		bad("metric", "required (name a trials.csv column such as rps, wall_ms or p99_ms)")
	case !KnownMetric(c.Metric):
		bad("metric", "unknown metric %q (use rps, requests, errors, error_pct, threads or a column with a unit suffix such as p99_ms)", c.Metric)
	}

	isCompare, isFlat := len(c.Compare) > 0, len(c.FlatOver) > 0
	switch {
	case isCompare && isFlat:
		bad("compare", "a check is either compare or flat_over, not both (split it into two claims)")
	case !isCompare && !isFlat:
		bad("compare", "a check needs compare: [A, B] with at_least/at_most, or variant with flat_over (add one)")
	}

	if isCompare {
		if len(c.Compare) != 2 {
			bad("compare", "needs exactly 2 variants, got %d (write compare: [A, B] to test A/B)", len(c.Compare))
		}
		for i, v := range c.Compare {
			if !slices.Contains(variants, v) {
				bad(fmt.Sprintf("compare[%d]", i), "%q is not a variant of this manifest (%s)", v, oneOf(variants))
			}
		}
		if len(c.Compare) == 2 && c.Compare[0] == c.Compare[1] {
			bad("compare", "compares %q with itself (name two different variants)", c.Compare[0])
		}
		if c.Variant != "" {
			bad("variant", "is for flat_over; a compare check names its variants in compare (remove variant)")
		}
		if c.AtLeast == nil && c.AtMost == nil {
			bad("at_least", "a compare check needs at_least or at_most, a ratio A/B such as 1.5 (add one)")
		}
		lo, hasLo := Bound(c.AtLeast)
		hi, hasHi := Bound(c.AtMost)
		if hasLo && lo <= 0 {
			bad("at_least", "must be a positive ratio A/B, got %g", lo)
		}
		if hasHi && hi <= 0 {
			bad("at_most", "must be a positive ratio A/B, got %g", hi)
		}
		if hasLo && hasHi && lo > hi {
			bad("at_most", "%g is below at_least %g, so no ratio can satisfy both (swap them)", hi, lo)
		}
		if c.Tolerance != 0 {
			bad("tolerance", "only applies to flat_over (remove it, or use at_least/at_most for a band)")
		}
	}

	if isFlat {
		if c.Variant == "" {
			bad("variant", "flat_over needs the variant whose metric stays flat (add variant: NAME)")
		} else if !slices.Contains(variants, c.Variant) {
			bad("variant", "%q is not a variant of this manifest (%s)", c.Variant, oneOf(variants))
		}
		if len(c.FlatOver) != 1 {
			bad("flat_over", "needs exactly one sweep key, got %d (write one claim per key)", len(c.FlatOver))
		}
		for _, k := range sortedKeys(c.FlatOver) {
			vs := c.FlatOver[k]
			if !slices.Contains(sweepKeys, k) {
				bad("flat_over."+k, "%q is not a sweep key of this manifest (%s)", k, oneOf(sweepKeys))
			}
			if len(vs) < 2 {
				bad("flat_over."+k, "needs at least 2 values to be flat over, got %d (list the sweep values)", len(vs))
			}
		}
		if c.AtLeast != nil || c.AtMost != nil {
			bad("at_least", "at_least/at_most only apply to compare; flat_over uses tolerance (remove them)")
		}
		if c.Tolerance < 0 {
			bad("tolerance", "must be a positive fraction such as 0.1 for 10%%, got %g", c.Tolerance)
		}
	}

	for _, k := range sortedKeys(c.Where) {
		_, isFlatKey := c.FlatOver[k]
		switch {
		case !slices.Contains(sweepKeys, k):
			bad("where."+k, "%q is not a sweep key of this manifest (%s)", k, oneOf(sweepKeys))
		case len(c.Where[k]) == 0:
			bad("where."+k, "lists no values (list the sweep values to keep, or remove the key)")
		case isFlatKey:
			bad("where."+k, "%q is already the flat_over key (restrict its values in flat_over instead)", k)
		}
	}
	return errors.Join(errs...)
}
