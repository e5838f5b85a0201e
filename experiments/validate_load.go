package experiments

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/measure/load"
)

// unused lists, per model, the group fields the model ignores: setting one
// is a mistake (users next to rate runs an open model and drops the users).
var unused = map[string][]string{
	"closed": {"rate", "burst", "stages", "max_in_flight", "smooth", "preallocate"},
	"open":   {"users", "think", "burst", "stages", "smooth"},
	"burst":  {"users", "rate", "think", "stages", "duration", "max_in_flight", "smooth", "preallocate"},
	"ramp":   {"users", "rate", "burst", "duration"},
}

// groupSet tells which of the model-specific fields a group sets.
func groupSet(g Group) map[string]bool {
	return map[string]bool{
		"users": g.Users != 0, "rate": g.Rate != 0, "burst": g.Burst != 0, "stages": len(g.Stages) > 0,
		"max_in_flight": g.MaxInFlight != 0, "smooth": g.Smooth, "think": len(g.Think) > 0, "duration": g.Duration != 0,
		"preallocate": g.Preallocate != 0,
	}
}

func (m *Manifest) validateLoad(report badFunc) {
	// The generator's own checks run last, as a backstop: only when ours
	// found nothing, so one mistake is not reported twice.
	n := 0
	bad := func(field, format string, a ...any) { n++; report(field, format, a...) }
	l := m.Load
	m.validateWarmup(bad)
	// Normalize moves an inline group into Groups and clears the inline
	// fields, so inline fields left over sit next to a groups: list.
	if !reflect.ValueOf(l.Group).IsZero() {
		bad("load", "sets groups: and also group fields (model, users, requests, ...) at the top of load:, which would be ignored (move them into a group)")
	}
	inline := m.inlineLoad()
	names := map[string]bool{}
	for i, g := range l.Groups {
		f := fmt.Sprintf("load.groups[%d]", i)
		if inline {
			f = "load"
		}
		if names[g.Name] {
			bad(f+".name", "group %q appears twice (names must be unique)", g.Name)
		}
		names[g.Name] = true
		if !nameRE.MatchString(g.Name) || len(g.Name) > 64 {
			bad(f+".name", "%q is not a valid group name (use lowercase letters, digits and dashes)", g.Name)
		}
		if !slices.Contains(load.Models(), g.Model) {
			bad(f+".model", "%q is not a load model (use %s)", g.Model, strings.Join(load.Models(), ", "))
			continue
		}
		m.validateGroup(f, g, bad)
	}
	if !names[l.Measure] {
		bad("load.measure", "no group named %q (use one of %s)", l.Measure, strings.Join(m.groupNames(), ", "))
	}
	if n == 0 {
		m.checkPlans(report)
	}
}

// groupField is the field path of group i in messages.
func (m *Manifest) groupField(i int) string {
	if m.inlineLoad() {
		return "load"
	}
	return fmt.Sprintf("load.groups[%d]", i)
}

// inlineLoad tells a load written inline (load: {model: ..., users: ...})
// from one written as groups:, for field paths in messages.
func (m *Manifest) inlineLoad() bool {
	return len(m.Load.Groups) == 1 && m.Load.Groups[0].Name == "main"
}

// validateGroup checks one group's numbers against its model and the caps,
// and its requests against HTTP's grammar.
func (m *Manifest) validateGroup(f string, g Group, bad badFunc) {
	swept := map[string]bool{}
	if g.Name == m.Load.Measure {
		swept = m.sweptLoad()
	}
	set := groupSet(g)
	for _, k := range unused[g.Model] {
		if set[k] {
			bad(f+"."+k, "the %s model does not use %s, so it would be ignored (remove it, or set model: to the model that uses it)", g.Model, k)
		}
	}
	switch g.Model {
	case "closed":
		if g.Users <= 0 && !swept["users"] {
			bad(f+".users", "a closed model needs users > 0 (got %d)", g.Users)
		}
		if g.Duration <= 0 {
			bad(f+".duration", "a closed model needs a duration > 0, like 30s")
		}
	case "open":
		if g.Rate <= 0 && !swept["rate"] && !swept["connections"] { // NaN is reported by checkRate
			bad(f+".rate", "an open model needs rate > 0 requests per second (got %g)", g.Rate)
		}
		if g.Duration <= 0 {
			bad(f+".duration", "an open model needs a duration > 0, like 30s")
		} else if g.Rate > 0 && g.Rate*g.Duration.Seconds() < 1 {
			// It would end "complete" with no request sent.
			bad(f+".rate", "%g requests per second for %s sends less than one request (raise the rate or the duration)", g.Rate, g.Duration)
		}
	case "burst":
		if g.Burst <= 0 && !swept["burst"] {
			bad(f+".burst", "a burst model needs burst > 0 requests released at once (got %d)", g.Burst)
		}
	case "ramp":
		m.validateStages(f, g, bad)
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"users", g.Users}, {"burst", g.Burst}, {"max_in_flight", g.MaxInFlight}} {
		if n.v < 0 || n.v > MaxUsers {
			bad(f+"."+n.name, "must be between 0 and %d (got %d)", MaxUsers, n.v)
		}
	}
	checkRate(bad, f+".rate", g.Rate)
	validatePreallocate(f, g, bad)
	capDuration(bad, f+".duration", g.Duration, MaxLoadDuration)
	if g.Duration > 0 && g.Duration < MinLoadDuration {
		bad(f+".duration", "%s is shorter than %s: a trial that short measures connection set-up, not a rate (lengthen it)", g.Duration, MinLoadDuration)
	}
	capDuration(bad, f+".start", g.Start, MaxStart)
	capDuration(bad, f+".timeout", g.Timeout, MaxTimeout)
	capDuration(bad, f+".connect_timeout", g.ConnectTimeout, MaxTimeout)
	if len(g.Think) != 0 {
		if len(g.Think) != 2 || g.Think[0] > g.Think[1] || g.Think[0] < 0 {
			bad(f+".think", "write think time as [min, max] with 0 <= min <= max, like [0ms, 100ms]")
		} else {
			capDuration(bad, f+".think", g.Think[1], MaxThink)
		}
	}
	if g.CountHeader != "" {
		if err := load.CheckHeaderName(g.CountHeader); err != nil {
			bad(f+".count_header", "%v", err)
		}
	}
	m.validateRequests(f, g, bad)
}

// validatePreallocate checks preallocate: connections an open model (or
// a ramp of rates) opens at once before its first send, k6's
// preAllocatedVUs. The closed and burst models are reported by unused.
func validatePreallocate(f string, g Group, bad badFunc) {
	n := g.Preallocate
	switch {
	case n == 0 || g.Model != "open" && g.Model != "ramp":
		return // unused reports it on the closed and burst models
	case n < 0:
		bad(f+".preallocate", "must be a positive number of connections opened before the first send (got %d); leave it out to dial connections as sends need them", n)
		return
	case n > MaxUsers:
		bad(f+".preallocate", "%d connections is more than the %d allowed (each is a socket and a worker in the generator; lower it)", n, MaxUsers)
		return
	}
	if g.Model == "ramp" && rampOfUsers(g) {
		bad(f+".preallocate", "a ramp of users holds one connection per user already, so preallocate would be ignored (remove it, or write the stages with rate: to ramp an arrival rate)")
	}
	if g.MaxInFlight > 0 && g.MaxInFlight < n {
		bad(f+".max_in_flight", "%d is below preallocate %d: connections past it would sit idle while sends are missed (raise max_in_flight to %d or more, or leave it out: it then defaults to preallocate)", g.MaxInFlight, n, n)
	}
}

// rampOfUsers tells a ramp whose stages set users (closed) from one whose
// stages set a rate (open); a ramp that mixes them is reported by
// validateStages.
func rampOfUsers(g Group) bool {
	for _, s := range g.Stages {
		if s.Rate > 0 {
			return false
		}
	}
	return len(g.Stages) > 0
}

// checkRate reports a rate that is not a finite number in [0, load.MaxRate].
func checkRate(bad badFunc, field string, r float64) {
	if math.IsNaN(r) || math.IsInf(r, 0) || r < 0 || r > load.MaxRate {
		bad(field, "must be a number between 0 and %g requests per second, the most the generator can pace (got %g)", float64(load.MaxRate), r)
	}
}

func (m *Manifest) validateStages(f string, g Group, bad badFunc) {
	if len(g.Stages) == 0 {
		bad(f+".stages", "a ramp needs stages: [{duration: 10s, users: 100}, ...]")
		return
	}
	var users, rate bool
	var total int64
	for j, s := range g.Stages {
		sf := fmt.Sprintf("%s.stages[%d]", f, j)
		if s.Duration <= 0 || (s.Users <= 0 && !(s.Rate > 0)) {
			bad(sf, "each stage needs a duration > 0 and users or rate > 0")
		}
		capDuration(bad, sf+".duration", s.Duration, MaxLoadDuration)
		total += int64(min(max(s.Duration, 0), MaxLoadDuration+1))
		if s.Users < 0 || s.Users > MaxUsers {
			bad(sf+".users", "must be between 0 and %d (got %d)", MaxUsers, s.Users)
		}
		checkRate(bad, sf+".rate", s.Rate)
		users = users || s.Users > 0
		rate = rate || s.Rate > 0
	}
	if users && rate {
		bad(f+".stages", "mixes users and rate; a ramp is either closed (every stage sets users) or open (every stage sets rate)")
	}
	if total > int64(MaxLoadDuration) {
		bad(f+".stages", "the stages add up to more than %s (shorten them)", MaxLoadDuration)
	}
}

func (m *Manifest) validateRequests(f string, g Group, bad badFunc) {
	if len(g.Requests) == 0 {
		bad(f+".requests", "no requests (add one: requests: [{path: /io?ms=300}])")
	}
	total := 0
	for j, r := range g.Requests {
		rf := fmt.Sprintf("%s.requests[%d]", f, j)
		if err := load.CheckMethod(r.Method); err != nil {
			bad(rf+".method", "%v", err)
		}
		if r.Weight < 0 || r.Weight > MaxWeight {
			bad(rf+".weight", "must be between 0 and %d (got %d); weights are relative, so small numbers do", MaxWeight, r.Weight)
		} else {
			total += r.Weight
		}
		for _, name := range Placeholders(r.Path + r.Body + strings.Join(mapValues(r.Headers), "")) {
			for _, v := range m.Variants {
				if _, ok := v.Vars[name]; !ok {
					bad(rf+".path", "{%s} is not set by variant %s (add vars: {%s: ...} to every variant)", name, v.Name, name)
				}
			}
		}
		// Paths and headers are checked as the generator will send them,
		// once per distinct text the variants' vars make of them.
		seen := map[string]bool{}
		for _, v := range m.Variants {
			if p := Expand(r.Path, v.Vars); !seen["path "+p] {
				seen["path "+p] = true
				if err := load.CheckPath(p); err != nil {
					bad(rf+".path", "%v%s", err, viaVars(r.Path, v))
				}
			}
			for _, k := range slices.Sorted(maps.Keys(r.Headers)) {
				if h := Expand(r.Headers[k], v.Vars); !seen[k+": "+h] {
					seen[k+": "+h] = true
					if err := load.CheckHeader(k, h); err != nil {
						bad(rf+".headers."+k, "%v%s", err, viaVars(r.Headers[k], v))
					}
				}
			}
		}
	}
	if total > MaxWeight {
		bad(f+".requests", "weights add up to %d, more than %d (weights are relative: divide them)", total, MaxWeight)
	}
}

// viaVars says which variant's vars produced a value, when they did.
func viaVars(s string, v Variant) string {
	if Expand(s, v.Vars) == s {
		return ""
	}
	return fmt.Sprintf(" (with variant %s's vars)", v.Name)
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// checkPlans runs the generator's own validation on the groups the
// variants would send at the load points, so that anything the generator
// would refuse at run time is refused now, with the group's position.
// Vars change only requests and points only the measured group's numbers,
// so the first variant at every point and every variant at the first
// point cover all of it in variants + points plans, not their product.
// Messages repeated across plans are reported once.
func (m *Manifest) checkPlans(bad badFunc) {
	points := m.loadPoints()
	if len(points) == 0 || len(m.Variants) == 0 {
		return // too many points: validateCells reports it
	}
	type pair struct {
		v Variant
		p map[string]string
	}
	var plans []pair
	for _, p := range points {
		plans = append(plans, pair{m.Variants[0], p})
	}
	for _, v := range m.Variants[1:] {
		plans = append(plans, pair{v, points[0]})
	}
	seen := map[string]bool{}
	for _, pl := range plans {
		groups, err := m.LoadGroups(pl.v, pl.p)
		if err != nil {
			continue // the sweep checks report non-numeric values
		}
		for i, g := range groups {
			err := load.CheckGroup(g)
			if err == nil {
				continue
			}
			f := fmt.Sprintf("load.groups[%d]", i)
			if m.inlineLoad() {
				f = "load"
			}
			if key := f + err.Error(); !seen[key] {
				seen[key] = true
				bad(f, "the load generator refuses this group%s: %v", pointNote(pl.p), err)
			}
		}
	}
}

func pointNote(p map[string]string) string {
	if len(p) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		parts = append(parts, k+"="+p[k])
	}
	return " at " + strings.Join(parts, ", ")
}

// sweptLoad tells which load parameters the sweep sets.
func (m *Manifest) sweptLoad() map[string]bool {
	out := map[string]bool{}
	for _, d := range m.Sweep {
		if d.Load != "" {
			out[d.Load] = true
		}
	}
	return out
}
