package experiments

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/stats"
)

// This file is the one home of claim validation (the grammar itself is
// stats.Check, which decides claims; what a manifest may say is checked
// here, against the manifest's own variants, sweep and groups, with the
// position of every field).

// claimScope is what claims are checked against: the sweep they were
// written with (a profile's own claims, its sweep; base claims, the base
// sweep), and whether their values are checked at all (not in a
// normalized manifest saved with a run, checked when the run started).
type claimScope struct {
	sweep  Sweep
	values bool
}

// badFunc reports one problem at a dotted field path.
type badFunc func(field, format string, a ...any)

// claimIDRE: words of letters and digits joined by single ., _ or -.
var claimIDRE = regexp.MustCompile(`^[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*$`)

func (m *Manifest) validateClaims(bad badFunc, cs claimScope) {
	ids := map[string]bool{}
	for i, c := range m.Claims {
		f := fmt.Sprintf("claims[%d]", i)
		switch {
		case c.ID == "":
			bad(f+".id", "missing (a short slug like platform-plateaus)")
		case ids[c.ID]:
			bad(f+".id", "claim %q appears twice (give each claim its own id)", c.ID)
		case !claimIDRE.MatchString(c.ID):
			bad(f+".id", "%q is not a slug (words of letters and digits joined by single '.', '_' or '-', like platform-plateaus)", c.ID)
		}
		ids[c.ID] = true
		if strings.TrimSpace(c.Says) == "" {
			bad(f+".says", "missing (the claim in one sentence)")
		}
		m.validateCheck(f+".check", c.Check, cs, bad)
		m.validateRequires(f, c.Requires, cs, bad)
		if s := c.Seed; s != nil {
			if s.Value != nil && !finite(*s.Value) {
				bad(f+".seed.value", "%g is not a finite number (write the seed's figure, like 2.1, or leave value out when the write-up gives none)", *s.Value)
			}
			if s.Scaled != nil && (!finite(*s.Scaled) || s.Value == nil) {
				bad(f+".seed.scaled", "needs a finite number and the seed's own value beside it (scaled is value at this profile's scale)")
			}
			if strings.TrimSpace(s.From) == "" {
				bad(f+".seed.from", "missing (the sentence of the write-up the figure comes from)")
			}
		}
		if c.Rule != "" {
			if _, ok := Rules[c.Rule]; !ok {
				bad(f+".rule", "%q is not a threshold rule (use one of %s)", c.Rule, strings.Join(RuleNames(), ", "))
			}
		}
		if d := c.Differs; d != nil {
			if !slices.Contains(DiffersCauses, d.Cause) {
				bad(f+".differs.cause", "%q is not a cause (use one of %s)", d.Cause, strings.Join(DiffersCauses, ", "))
			}
			if strings.TrimSpace(d.Why) == "" {
				bad(f+".differs.why", "missing (one sentence on why our result differs from the seed's)")
			}
		}
		if d := c.Decision; d != nil {
			if strings.TrimSpace(d.When) == "" {
				bad(f+".decision.when", "missing (the situation in which the claim decides)")
			}
			if d.Pick == "" {
				bad(f+".decision.pick", "missing (the variant to choose; variants: %s)", strings.Join(m.variantNames(), ", "))
			} else if v, ok := m.Variant(d.Pick); !ok {
				bad(f+".decision.pick", "no variant named %q (pick one of %s)%s", d.Pick, strings.Join(m.variantNames(), ", "), byteForm(d.Pick, m.variantNames()))
			} else if v.Role == RoleControl {
				bad(f+".decision.pick", "%q is a control (role: control), a reference and not a choice (pick an approach the reader can run, or remove its role)", d.Pick)
			}
		}
	}
	for i, c := range m.Claims {
		if c.Decision == nil {
			continue
		}
		for j, id := range c.Decision.TestedBy {
			if !ids[id] {
				bad(fmt.Sprintf("claims[%d].decision.tested_by[%d]", i, j), "no claim %q in this manifest (name the claims whose verdicts test the then advice)", id)
			}
		}
	}
}

// claimKind names which of the check forms c is, or "" when none.
func claimKind(c stats.Check) []string {
	var kinds []string
	if len(c.Compare) > 0 {
		kinds = append(kinds, "compare")
	}
	if len(c.FlatOver) > 0 {
		kinds = append(kinds, "flat_over")
	}
	if len(c.IncreasesOver) > 0 {
		kinds = append(kinds, "increases_over")
	}
	if len(c.DecreasesOver) > 0 {
		kinds = append(kinds, "decreases_over")
	}
	return kinds
}

// validateCheck checks one claim's check: its form, names against the
// manifest, bounds, and the sweep values it selects.
func (m *Manifest) validateCheck(f string, c stats.Check, cs claimScope, bad badFunc) {
	switch {
	case c.Metric == "":
		bad(f+".metric", "missing (name a trials.csv column: %s)", strings.Join(Metrics, ", "))
	case !slices.Contains(Metrics, c.Metric):
		bad(f+".metric", "unknown metric %q (use one of %s)", c.Metric, strings.Join(Metrics, ", "))
	}
	if c.Group != "" && !slices.ContainsFunc(m.Load.Groups, func(g Group) bool { return g.Name == c.Group }) {
		bad(f+".group", "no load group named %q (groups: %s)", c.Group, strings.Join(m.groupNames(), ", "))
	}
	lo, hasLo := stats.Bound(c.AtLeast)
	hi, hasHi := stats.Bound(c.AtMost)
	for _, b := range []struct {
		name string
		v    float64
		set  bool
	}{{"at_least", lo, hasLo}, {"at_most", hi, hasHi}, {"tolerance", c.Tolerance, true}} {
		if b.set && !finite(b.v) {
			bad(f+"."+b.name, "%g is not a finite number (write a plain number like 1.5)", b.v)
		}
	}
	if hasLo && hasHi && lo > hi {
		bad(f+".at_most", "%g is below at_least %g, so nothing can satisfy both (swap them)", hi, lo)
	}
	kinds := claimKind(c)
	if len(kinds) > 1 {
		bad(f, "mixes %s; a check is one of them (split it into one claim each)", strings.Join(kinds, " and "))
		return
	}
	if len(kinds) == 0 {
		m.validateAbsolute(f, c, hasLo || hasHi, bad)
	} else if kinds[0] == "compare" {
		m.validateCompare(f, c, lo, hi, hasLo, hasHi, bad)
	} else {
		m.validateOver(f, kinds[0], c, hasLo || hasHi, cs, bad)
	}
	m.validateWhere(f, c, cs, bad)
}

func (m *Manifest) validateCompare(f string, c stats.Check, lo, hi float64, hasLo, hasHi bool, bad badFunc) {
	if len(c.Compare) != 2 {
		bad(f+".compare", "needs exactly 2 variants, got %d (write compare: [A, B]; the claim is about median(A)/median(B))", len(c.Compare))
	}
	for i, v := range c.Compare {
		m.needVariant(fmt.Sprintf("%s.compare[%d]", f, i), v, bad)
	}
	if len(c.Compare) == 2 && c.Compare[0] == c.Compare[1] {
		bad(f+".compare", "compares %q with itself (name two different variants)", c.Compare[0])
	}
	if c.Variant != "" {
		bad(f+".variant", "a compare check names its variants in compare (remove variant)")
	}
	if !hasLo && !hasHi {
		bad(f, "a comparison needs at_least: or at_most: (the ratio A/B, e.g. at_least: 1.5)")
	}
	if hasLo && lo <= 0 {
		bad(f+".at_least", "must be a positive ratio A/B, got %g", lo)
	}
	if hasHi && hi <= 0 {
		bad(f+".at_most", "must be a positive ratio A/B, got %g", hi)
	}
	if c.Tolerance != 0 {
		bad(f+".tolerance", "only applies to flat_over, increases_over and decreases_over (remove it, or give at_least and at_most for a band)")
	}
}

// validateAbsolute checks {metric, variant, at_least/at_most}: the metric
// of one variant against a fixed value.
func (m *Manifest) validateAbsolute(f string, c stats.Check, hasBound bool, bad badFunc) {
	if c.Variant == "" {
		bad(f, "needs compare: [A, B] with at_least/at_most, variant: with flat_over/increases_over/decreases_over, or variant: with at_least/at_most for an absolute check")
		return
	}
	m.needVariant(f+".variant", c.Variant, bad)
	if !hasBound {
		bad(f, "an absolute check on variant %q needs at_least: or at_most: (e.g. {metric: errors, variant: %s, at_most: 0})", c.Variant, c.Variant)
	}
	if c.Tolerance != 0 {
		bad(f+".tolerance", "only applies to flat_over, increases_over and decreases_over (remove it)")
	}
}

// validateOver checks flat_over, increases_over and decreases_over: one
// variant over the listed values of exactly one sweep key.
func (m *Manifest) validateOver(f, kind string, c stats.Check, hasBound bool, cs claimScope, bad badFunc) {
	over := map[string]map[string][]string{"flat_over": c.FlatOver, "increases_over": c.IncreasesOver, "decreases_over": c.DecreasesOver}[kind]
	if c.Variant == "" {
		bad(f+".variant", "%s needs the variant whose metric it follows (add variant: NAME)", kind)
	} else {
		m.needVariant(f+".variant", c.Variant, bad)
	}
	if hasBound {
		bad(f+".at_least", "at_least/at_most do not apply to %s (remove them%s)", kind, map[bool]string{true: "; flat_over uses tolerance", false: ""}[kind == "flat_over"])
	}
	// flat_over's tolerance is the band it stays in; a trend's the least
	// change last/first must show.
	if c.Tolerance < 0 || c.Tolerance > 1 || kind != "flat_over" && c.Tolerance >= 1 {
		bad(f+".tolerance", "must be a fraction between 0 and 1 (below 1 for a trend, whose last/first must move by it), like 0.1 for 10%%, got %g", c.Tolerance)
	}
	if len(over) != 1 {
		bad(f+"."+kind, "needs exactly one sweep key, got %d (write one claim per key)", len(over))
	}
	for _, k := range slices.Sorted(maps.Keys(over)) {
		vs := over[k]
		if len(vs) < 2 {
			bad(f+"."+kind+"."+k, "needs at least 2 values, got %d (list the sweep values%s)", len(vs),
				map[bool]string{true: "; a trend is only convincing over 3 or more", false: ""}[kind != "flat_over"])
		}
		needSweepValues(f+"."+kind+"."+k, k, vs, cs, bad)
		if _, ok := c.Where[k]; ok {
			bad(f+".where."+k, "%q is already the %s key (restrict its values in %s instead)", k, kind, kind)
		}
	}
}

func (m *Manifest) validateWhere(f string, c stats.Check, cs claimScope, bad badFunc) {
	for _, k := range slices.Sorted(maps.Keys(c.Where)) {
		if len(c.Where[k]) == 0 {
			bad(f+".where."+k, "lists no values (list the sweep values to keep, or remove the key)")
			continue
		}
		needSweepValues(f+".where."+k, k, c.Where[k], cs, bad)
	}
}

func (m *Manifest) needVariant(field, name string, bad badFunc) {
	if _, ok := m.Variant(name); !ok {
		bad(field, "no variant named %q (variants: %s)%s", name, strings.Join(m.variantNames(), ", "), byteForm(name, m.variantNames()))
	}
}

// byteForm spells out names that are not plain ASCII, so that two that
// print alike but differ ("café" as one code point or as e and a
// combining accent) can be told apart in a message; "" when the name is
// ASCII.
func byteForm(name string, names []string) string {
	ascii := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return false
			}
		}
		return true
	}
	if ascii(name) {
		return ""
	}
	var alike []string
	for _, n := range names {
		if !ascii(n) {
			alike = append(alike, fmt.Sprintf("%+q", n))
		}
	}
	s := fmt.Sprintf("; written as %+q", name)
	if len(alike) > 0 {
		s += ", the variants as " + strings.Join(alike, ", ") + " (names that print alike may differ in their code points: type the name again)"
	}
	return s
}

// needSweepValues checks that key is a sweep key and every value is one of
// its values: a value that is not swept selects no point, so the claim
// would silently rest on nothing.
func needSweepValues(field, key string, values []string, cs claimScope, bad badFunc) {
	sweep := cs.sweep
	i := slices.IndexFunc(sweep, func(d SweepDim) bool { return d.Name == key })
	if i < 0 {
		keys := make([]string, len(sweep))
		for j, d := range sweep {
			keys[j] = d.Name
		}
		have := "this manifest has no sweep"
		if len(keys) > 0 {
			have = "sweep keys: " + strings.Join(keys, ", ")
		}
		bad(field, "%q is not a sweep key (%s)", key, have)
		return
	}
	d := sweep[i]
	seen := map[string]bool{}
	for j, v := range values {
		vf := fmt.Sprintf("%s[%d]", field, j)
		if seen[v] {
			bad(vf, "%q is listed twice (list each value once)", v)
		}
		seen[v] = true
		if cs.values && !slices.Contains(d.Values, v) {
			bad(vf, "%q is not a value of sweep %s (its values: %s); a value that is not swept selects no trials", v, key, strings.Join(d.Values, ", "))
		}
	}
}

func (m *Manifest) groupNames() []string {
	out := make([]string, len(m.Load.Groups))
	for i, g := range m.Load.Groups {
		out[i] = g.Name
	}
	return out
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// preconditionForms is the fix for a precondition written in no form.
const preconditionForms = "write one of {metric: target_cpu_pct, variant: V, at_least: 90, per_core: true}, {cores: {at_least: 2}} or {generator: not_saturated}"

// validateRequires checks a claim's preconditions: one form each, names
// against the manifest, finite bounds in order, sweep values that exist.
func (m *Manifest) validateRequires(f string, reqs []Precondition, cs claimScope, bad badFunc) {
	for i, r := range reqs {
		rf := fmt.Sprintf("%s.requires[%d]", f, i)
		forms := r.Forms()
		if len(forms) == 0 {
			bad(rf, "states no condition (%s)", preconditionForms)
			continue
		}
		if len(forms) > 1 {
			bad(rf, "mixes %s; a precondition is one of them (write one list item each)", strings.Join(forms, " and "))
			continue
		}
		lo, hasLo := stats.Bound(r.AtLeast)
		hi, hasHi := stats.Bound(r.AtMost)
		notHere := func(field string, set bool) {
			if set {
				bad(rf+"."+field, "does not apply to a %s precondition (remove it)", forms[0])
			}
		}
		switch forms[0] {
		case "metric":
			d, ok := metric.Lookup(r.Metric)
			if !ok {
				bad(rf+".metric", "unknown metric %q (use one of %s)", r.Metric, strings.Join(metric.Names(), ", "))
			}
			if !hasLo && !hasHi {
				bad(rf, "a metric precondition needs at_least: or at_most: (e.g. {metric: %s, at_least: 90, per_core: true})", r.Metric)
			}
			for _, b := range []struct {
				name string
				v    float64
				set  bool
			}{{"at_least", lo, hasLo}, {"at_most", hi, hasHi}} {
				if b.set && !finite(b.v) {
					bad(rf+"."+b.name, "%g is not a finite number (write a plain number like 90)", b.v)
				}
			}
			if hasLo && hasHi && lo > hi {
				bad(rf+".at_most", "%g is below at_least %g, so nothing can satisfy both (swap them)", hi, lo)
			}
			if r.PerCore && ok && !d.PerCore {
				bad(rf+".per_core", "%s is not a share of one core, so it cannot be read per core (remove per_core; it applies to %s)", r.Metric, strings.Join(perCoreMetrics(), ", "))
			}
		case "cores":
			notHere("at_least", hasLo)
			notHere("at_most", hasHi)
			notHere("per_core", r.PerCore)
			notHere("variant", r.Variant != "")
			notHere("group", r.Group != "")
			notHere("where", len(r.Where) > 0)
			c := r.Cores
			switch {
			case c.AtLeast == nil && c.AtMost == nil:
				bad(rf+".cores", "needs at_least: or at_most: (e.g. {cores: {at_least: 4}})")
			case c.AtLeast != nil && *c.AtLeast < 1:
				bad(rf+".cores.at_least", "must be 1 or more, got %d (every host has a CPU; remove the precondition instead)", *c.AtLeast)
			case c.AtMost != nil && *c.AtMost < 1:
				bad(rf+".cores.at_most", "must be 1 or more, got %d (no host has fewer CPUs)", *c.AtMost)
			case c.AtLeast != nil && c.AtMost != nil && *c.AtLeast > *c.AtMost:
				bad(rf+".cores.at_most", "%d is below at_least %d, so no host can satisfy both (swap them)", *c.AtMost, *c.AtLeast)
			}
			continue // a host fact: no cells to select
		case "generator":
			if r.Generator != GeneratorNotSaturated {
				bad(rf+".generator", "%q is not a generator precondition (write generator: %s)", r.Generator, GeneratorNotSaturated)
			}
			notHere("at_least", hasLo)
			notHere("at_most", hasHi)
			notHere("per_core", r.PerCore)
		}
		if r.Variant != "" {
			m.needVariant(rf+".variant", r.Variant, bad)
		}
		if r.Group != "" && !slices.ContainsFunc(m.Load.Groups, func(g Group) bool { return g.Name == r.Group }) {
			bad(rf+".group", "no load group named %q (groups: %s)", r.Group, strings.Join(m.groupNames(), ", "))
		}
		for _, k := range slices.Sorted(maps.Keys(r.Where)) {
			if len(r.Where[k]) == 0 {
				bad(rf+".where."+k, "lists no values (list the sweep values to keep, or remove the key)")
				continue
			}
			needSweepValues(rf+".where."+k, k, r.Where[k], cs, bad)
		}
	}
}

// perCoreMetrics are the metrics per_core may divide: shares of one core.
func perCoreMetrics() []string {
	var out []string
	for _, d := range metric.Defs {
		if d.PerCore {
			out = append(out, d.Name)
		}
	}
	return out
}
