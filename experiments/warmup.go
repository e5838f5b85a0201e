package experiments

// Warm-up (issue 20): untimed load through the identical code path before a
// fork's measured iterations, either for a fixed time or until the fork is
// steady.
//
// warmup: 10s                               fixed: load for 10 s (bursts repeat until 10 s have passed)
// warmup: {min: 10s, max: 60s, until: steady}
//                                           rounds of the trial's own load, at least 10 s, then until
//                                           steady.Settled holds on the last rounds, at most 60 s
// warmup: {until: steady, also: [target_cpu_s]}
//                                           the same, and the rounds' target CPU must settle too
//
// An until-steady warm-up waits for every metric in WarmupMetrics: the
// primary, and each metric with its own steady state (metric.OwnSteady:
// the target's CPU) that a claim or a precondition reads or also: names.
// The CPU of a burst keeps falling for 30-50 bursts after its wall time
// has settled (METHODOLOGY "Per metric"), so a warm-up that watched the
// wall time alone handed the measured iterations a CPU still warming up.
//
// A variant with measure: cold has no warm-up at all: its start is what is
// measured (aot-cache's start-up arm), and no iteration of it is dropped as
// pre-steady.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/threadlab/threadlab/measure/metric"

	"gopkg.in/yaml.v3"
)

// UntilSteady is the one value of warmup.until.
const UntilSteady = "steady"

// MeasureCold is the value of a variant's measure: that measures the start.
const MeasureCold = "cold"

// Defaults of warmup: {until: steady}, filled by Normalize.
const (
	// DefaultWarmupMin: what a JIT needs at the least before C2 has
	// compiled the hot path of a Spring request (the catalog's fixed
	// warm-ups were 6-15 s).
	DefaultWarmupMin = 5 * time.Second
	// DefaultWarmupMax bounds a fork that never settles: it is measured
	// anyway, and the steady selection then excludes it.
	DefaultWarmupMax = 60 * time.Second
	// DefaultWarmupRound is one warm-up round of a timed load (closed,
	// open, ramp): long enough for a per-second rate to mean something,
	// short enough that the rule can stop within a few seconds of steady.
	DefaultWarmupRound = time.Second
)

// Warmup is the warm-up before a fork's measured iterations: fixed
// (Until == "", Min == Max) or until steady (Until == "steady", from Min to
// Max).
type Warmup struct {
	Min   time.Duration `yaml:"min,omitempty"`
	Max   time.Duration `yaml:"max,omitempty"`
	Until string        `yaml:"until,omitempty"`
	// Also names metrics with their own steady state (the target's CPU)
	// that the warm-up waits for besides the ones the claims read.
	Also []string `yaml:"also,omitempty"`
}

// UnmarshalYAML accepts a duration (10s) or a mapping ({min: 10s, max:
// 60s, until: steady}); unknown keys of the mapping are reported by the
// loader's key check with their position.
func (w *Warmup) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		var d time.Duration
		if err := n.Decode(&d); err != nil {
			return &yaml.TypeError{Errors: []string{lineMsg(n, fmt.Sprintf("warmup %q is not a duration (write a duration with a unit, like 10s, or {min: 10s, max: 60s, until: steady})", n.Value))}}
		}
		w.Min, w.Max, w.Until = d, d, ""
		return nil
	case yaml.MappingNode:
		type plain Warmup
		var p plain
		if err := n.Decode(&p); err != nil {
			return err
		}
		*w = Warmup(p)
		return nil
	}
	return &yaml.TypeError{Errors: []string{lineMsg(n, "warmup must be a duration (10s) or {min: 10s, max: 60s, until: steady}")}}
}

// MarshalYAML writes a fixed warm-up as a duration, so a normalized
// manifest reads the way its author wrote it.
func (w Warmup) MarshalYAML() (any, error) {
	if w.Until == "" {
		return w.Min.String(), nil
	}
	type plain Warmup
	return plain(w), nil
}

// IsZero lets omitempty drop an unset warm-up.
func (w Warmup) IsZero() bool {
	return w.Min == 0 && w.Max == 0 && w.Until == "" && len(w.Also) == 0
}

// Steady tells whether the warm-up runs until the fork is steady.
func (w Warmup) Steady() bool { return w.Until == UntilSteady }

// Fixed is the warm-up of a fixed design (its only duration), 0 for none.
func (w Warmup) Fixed() time.Duration { return w.Min }

func (w Warmup) String() string {
	if !w.Steady() {
		return w.Min.String()
	}
	return fmt.Sprintf("until steady (%s to %s)", w.Min, w.Max)
}

// normalizeWarmup fills the defaults of an until-steady warm-up; a fixed
// one keeps Max == Min.
func (w *Warmup) normalize() {
	if !w.Steady() {
		if w.Until == "" && w.Max == 0 {
			w.Max = w.Min
		}
		return
	}
	if w.Min == 0 {
		w.Min = DefaultWarmupMin
	}
	if w.Max == 0 {
		w.Max = max(DefaultWarmupMax, w.Min)
	}
}

// validateWarmup checks load.warmup and the variants' measure.
func (m *Manifest) validateWarmup(bad badFunc) {
	w := m.Load.Warmup
	if w.Until == "" && w.Max == w.Min {
		capDuration(bad, "load.warmup", w.Min, MaxWarmup)
	} else {
		capDuration(bad, "load.warmup.min", w.Min, MaxWarmup)
		capDuration(bad, "load.warmup.max", w.Max, MaxWarmup)
	}
	switch {
	case w.Until != "" && w.Until != UntilSteady:
		bad("load.warmup.until", "%q is not known (the one value is steady: warm up each fork until its recent rounds are steady; or write a duration like warmup: 10s)", w.Until)
	case w.Until == "" && w.Max != w.Min:
		bad("load.warmup", "sets min and max without until: steady (write warmup: {min: %s, max: %s, until: steady}, or one duration like warmup: 10s)", w.Min, w.Max)
	case w.Max < w.Min:
		bad("load.warmup.max", "%s is below min %s (write {min: 10s, max: 60s, until: steady})", w.Max, w.Min)
	}
	for i, name := range w.Also {
		f := fmt.Sprintf("load.warmup.also[%d]", i)
		d, ok := metric.Lookup(name)
		switch {
		case !w.Steady():
			bad("load.warmup.also", "needs until: steady (a fixed warm-up waits for nothing; write warmup: {until: steady, also: [%s]})", name)
		case !ok:
			bad(f, "unknown metric %q (name one with its own steady state: %s)", name, strings.Join(ownSteadyMetrics(), ", "))
		case !metric.OwnSteady(d.Name):
			bad(f, "%s has no steady state of its own: the warm-up already waits for the primary metric, whose steady iterations every metric that warms up reads (name one of %s, or remove it)", name, strings.Join(ownSteadyMetrics(), ", "))
		}
	}
	for _, v := range m.Variants {
		if v.Measure != "" && v.Measure != MeasureCold {
			bad("variants."+v.Name+".measure", "%q is not known (the one value is cold: the start itself is measured, with no warm-up and no steady-state selection; leave it out to measure steady state)", v.Measure)
		}
	}
}

// lintWarmup warns where the warm-up cannot show steady state.
func (m *Manifest) lintWarmup(warn func(string, string, ...any)) {
	w := m.Load.Warmup
	steadyVariants := 0
	for _, v := range m.Variants {
		if v.Measure != MeasureCold {
			steadyVariants++
		}
	}
	if steadyVariants == 0 {
		return
	}
	switch {
	case w.Max <= 0:
		warn("load.warmup", "no warm-up: the first requests run in the interpreter and C1 (seed 000's JIT warm-up bug); add warmup: {until: steady}")
	case !w.Steady():
		warn("load.warmup", "a fixed warm-up of %s: a variant whose JIT needs longer is measured while still warming up, which biases the ratio between variants (issue 20: false support 28-62%% in simulation); write warmup: {min: %s, max: %s, until: steady}", w.Min, w.Min, max(DefaultWarmupMax, 4*w.Min))
	case w.Max < 2*w.Min:
		warn("load.warmup.max", "%s leaves little room above min %s: a fork that needs longer is measured unsteady and excluded (raise max)", w.Max, w.Min)
	}
	if g := m.Measured(); g != nil && g.Model == "ramp" {
		return // a ramp changes its load by design: there is no steady state to classify
	}
	if n := m.pointsPerFork(); n < MinSteadyPoints && m.Profile != "smoke" {
		warn("iterations", "each fork gives %d point(s) to classify its steady state on; %d or more are needed (Barrett et al.'s classes carry no information below that): raise iterations for bursts, or the measured window for timed loads", n, MinSteadyPoints)
	}
}

// WarmupMetrics are the metrics an until-steady warm-up waits for, in
// order: the primary, then every metric with its own steady state
// (metric.OwnSteady) that a claim or a precondition reads or
// load.warmup.also names, in metric.Defs order.
func (m *Manifest) WarmupMetrics() []string {
	out := []string{m.Primary()}
	read := m.ReadMetrics()
	for _, name := range m.Load.Warmup.Also {
		read[name] = true
	}
	for _, d := range metric.Defs {
		if read[d.Name] && metric.OwnSteady(d.Name) && !slices.Contains(out, d.Name) {
			out = append(out, d.Name)
		}
	}
	return out
}

// ReadMetrics is the set of metrics m's claims and their preconditions
// read.
func (m *Manifest) ReadMetrics() map[string]bool {
	read := map[string]bool{}
	for _, c := range m.Claims {
		read[c.Check.Metric] = true
		for _, q := range c.Requires {
			if q.Metric != "" {
				read[q.Metric] = true
			}
		}
	}
	return read
}

// ownSteadyMetrics names the metrics with their own steady state.
func ownSteadyMetrics() []string {
	var out []string
	for _, d := range metric.Defs {
		if metric.OwnSteady(d.Name) {
			out = append(out, d.Name)
		}
	}
	return out
}

// MinSteadyPoints is the fewest points (iterations, or seconds of a timed
// window) a fork's steady state is classified on.
const MinSteadyPoints = 10

// pointsPerFork is how many points the steady selection classifies a fork
// on: its iterations for bursts, else the larger of that and its
// measured seconds, each window's first and last second left out (the
// pipeline's selection does the same: they are partial).
func (m *Manifest) pointsPerFork() int {
	g := m.Measured()
	if g == nil || g.Model == "burst" {
		return m.Iterations
	}
	secs := int(g.Duration/time.Second) - 2
	return max(m.Iterations, m.Iterations*secs)
}
