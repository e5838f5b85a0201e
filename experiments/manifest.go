// Package experiments owns threadlab's experiment manifests: the YAML schema,
// strict decoding with positions, profiles, defaults, validation and the
// methodology lint. The *.yaml files next to this package are the catalog.
//
// Data flow: Load reads a file (at most MaxFileBytes), parses one YAML
// document and expands aliases and merge keys against a node budget before
// anything else walks the tree (limits.go), overlays the chosen profile at
// the YAML node level (so every value keeps the line it came from), rejects
// unknown keys, decodes into Manifest, fills defaults in one place
// (Normalize) and validates everything at once: the manifest itself
// (validate.go), its load as the generator will see it, per variant and
// sweep point (validate_load.go, loadplan.go, measure/load's own checks),
// its sweeps (validate_sweep.go) and its claims (claims.go, the one home of
// claim validation). Every problem is a Problem with file, line, column,
// field and fix; the loader never panics. The pipeline receives the
// normalized Manifest, turns it into load plans with LoadGroups and saves
// its YAML form with the run (marshal.go). Lint reviews the design
// (lint.go) and shows what the manifest will run (trust.go: a manifest is
// code, like a Makefile).
package experiments

import (
	"time"

	"github.com/threadlab/threadlab/stats"
	"gopkg.in/yaml.v3"
)

// Manifest describes one experiment: what runs (variants), at which sweep
// points, under which load, how often, and what the seed write-up claimed.
type Manifest struct {
	Name     string `yaml:"name"`
	Title    string `yaml:"title"`
	Question string `yaml:"question"`
	Source   string `yaml:"source,omitempty"` // the seed write-up, e.g. 000_e13457918b96bd9b.txt
	Notes    string `yaml:"notes,omitempty"`
	// Headline names the run (a run ID under data/<name>/) that the
	// experiment's page and the decision framework headline; without it
	// they take the newest complete single-host run.
	Headline string   `yaml:"headline,omitempty"`
	Services Services `yaml:"services,omitempty"`
	Variants Variants `yaml:"variants"`
	Sweep    Sweep    `yaml:"sweep,omitempty"`
	Load     LoadSpec `yaml:"load"`
	// Replication (replication.go): forks x iterations per cell.
	Forks      Rounds  `yaml:"forks,omitempty"`
	Iterations int     `yaml:"iterations,omitempty"`
	Trials     *Rounds `yaml:"trials,omitempty"` // the older name of forks; Normalize moves it there
	Retries    *int    `yaml:"retries,omitempty"`
	Noise      Noise   `yaml:"noise,omitempty"`
	// Order is "interleaved" (trial k of every cell before trial k+1, cells
	// shuffled per round with Seed) or "sequential" (all trials of a cell in a row).
	Order string `yaml:"order"`
	// Seed drives the shuffle and the load's random paths; 0 means pick one and record it.
	Seed int64 `yaml:"seed,omitempty"`
	// FreshJVM was removed (forks x iterations replace it); it is decoded
	// only so that validation can say what to write instead.
	FreshJVM *bool    `yaml:"fresh_jvm,omitempty"`
	Startup  Startup  `yaml:"startup,omitempty"`
	CoolDown CoolDown `yaml:"cooldown,omitempty"`
	Pinning  Pinning  `yaml:"pinning,omitempty"`
	// AOTCache starts built-in targets from a JDK 25 AOT cache (aot.go);
	// nil means on, and Normalize makes it explicit.
	AOTCache *bool `yaml:"aot_cache,omitempty"`
	// SpringBoot is the Spring Boot line the built-in targets are built on
	// ("4.1", or the version built for it, "4.1.2"; env/targets.BootLines);
	// a variant's own spring_boot overrides it. Normalize writes the
	// version (default env/targets.DefaultBoot) here and on every built-in
	// variant, so the manifest saved with a run says which Boot ran.
	SpringBoot string  `yaml:"spring_boot,omitempty"`
	Claims     []Claim `yaml:"claims,omitempty"`

	Profiles map[string]yaml.Node `yaml:"profiles,omitempty"`

	// Set by Load, not by the author.
	Profile string `yaml:"profile,omitempty"`
	File    string `yaml:"-"`

	forksKey string // "trials" when the author used the older name
}

// ProfileName is the profile the manifest was loaded with, "default" when
// none was asked for: the name run.json and the run's estimate give it.
func (m *Manifest) ProfileName() string {
	if m.Profile == "" {
		return "default"
	}
	return m.Profile
}

// Services are the dependencies threadlab starts for the targets.
type Services struct {
	// Downstream is the slow HTTP dependency (seed 001); nil means none.
	Downstream *Downstream `yaml:"downstream,omitempty"`
	// Database is "h2" (embedded, in-memory; the default) or "postgres"
	// (a throw-away cluster threadlab creates and removes).
	Database string `yaml:"database,omitempty"`
	// Orders is the number of seeded orders (customers = orders/10).
	Orders int `yaml:"orders,omitempty"`
}

// Downstream configures the slow downstream service.
type Downstream struct {
	Delay time.Duration `yaml:"delay"`
}

// Variant is one system under test: a built-in target with Spring
// properties, or any command that serves HTTP on {port}.
type Variant struct {
	Name       string            `yaml:"-"`
	Target     string            `yaml:"target,omitempty"`  // spring-mvc | spring-webflux
	Command    []string          `yaml:"command,omitempty"` // argv; {port} and {downstream} are replaced
	Ready      string            `yaml:"ready,omitempty"`   // path polled until 2xx
	Metrics    string            `yaml:"metrics,omitempty"` // Prometheus path, optional for commands
	Properties map[string]string `yaml:"properties,omitempty"`
	JVM        []string          `yaml:"jvm,omitempty"`
	Env        map[string]string `yaml:"env,omitempty"`
	// Vars fill {name} placeholders in request paths, headers and bodies, so
	// variants can hit their own endpoint with one load definition (webflux
	// /cpu vs /cpu-offloaded).
	Vars     map[string]string `yaml:"vars,omitempty"`
	Describe string            `yaml:"describe,omitempty"`
	// JDK asks for a Java feature release (21, 25) for a built-in target;
	// 0 means the run's JDK. Where no such JDK is installed the variant is
	// skipped with its reason and the claims reading it are not applicable
	// here (pipeline/trial/jvms.go).
	JDK int `yaml:"jdk,omitempty"`
	// SpringBoot overrides the manifest's spring_boot for this built-in
	// variant (the version experiment runs one model on several lines).
	SpringBoot string `yaml:"spring_boot,omitempty"`
	// Measure is "" (steady state, the default) or "cold": the start itself
	// is measured, with no warm-up and no steady-state selection
	// (warmup.go; aot-cache's start-up arm).
	Measure string `yaml:"measure,omitempty"`
	// Role is "" (an approach a reader may choose, the default) or
	// "control": a reference the others are read against, such as the same
	// service without the load under test (event-loop-starvation's
	// baselines). A control is measured and judged like any variant, but
	// the report does not rank it among the choices and no decision may
	// pick it. It only describes the variant: changing it changes no plan
	// (SameMeasurement ignores it).
	Role string `yaml:"role,omitempty"`

	// Floor is what the variant's design makes impossible to beat; a trial
	// below it is invalid with the reason (measure/bounds).
	Floor *Floor `yaml:"floor,omitempty"`
}

// Floor states the least time the variant can take for the measured burst.
// Beyond it, threadlab derives a floor on its own: on a built-in target,
// every request of /io?ms=N waits N ms, so no answer comes sooner and no
// burst of them ends sooner.
//
//	floor: {parallel: 200}   at most 200 requests in service at once (Tomcat's
//	                         platform threads): a burst of B /io?ms=W requests
//	                         takes at least ceil(B/200) x W (600 x 300 ms: 900 ms)
//	floor: {wall: 900ms}     a stated floor of the burst's wall time
type Floor struct {
	Parallel int           `yaml:"parallel,omitempty"`
	Wall     time.Duration `yaml:"wall,omitempty"`
}

// RoleControl is the value of a variant's role: a reference, not a choice.
const RoleControl = "control"

// Variants keeps manifest order, which is the order of every table and chart.
type Variants []Variant

// SweepDim is one swept parameter: a Spring property of the target, or a
// load parameter (users, rate, burst).
type SweepDim struct {
	Name     string   `yaml:"-"`
	Property string   `yaml:"property,omitempty"`
	Load     string   `yaml:"load,omitempty"`
	Values   []string `yaml:"values"`
}

// Sweep keeps manifest order; points are the cartesian product.
type Sweep []SweepDim

// Request is one entry of the request mix.
type Request struct {
	Method  string            `yaml:"method,omitempty"`
	Path    string            `yaml:"path"`
	Headers map[string]string `yaml:"headers,omitempty"`
	Body    string            `yaml:"body,omitempty"`
	Weight  int               `yaml:"weight,omitempty"`
}

// Stage is a ramp step.
type Stage struct {
	Duration time.Duration `yaml:"duration"`
	Users    int           `yaml:"users,omitempty"`
	Rate     float64       `yaml:"rate,omitempty"`
}

// Group is one stream of requests in a trial (see load.Group).
type Group struct {
	Name           string          `yaml:"name,omitempty"`
	Model          string          `yaml:"model,omitempty"` // closed | open | burst | ramp
	Users          int             `yaml:"users,omitempty"`
	Think          []time.Duration `yaml:"think,omitempty"` // [min, max]
	Rate           float64         `yaml:"rate,omitempty"`
	MaxInFlight    int             `yaml:"max_in_flight,omitempty"`
	Preallocate    int             `yaml:"preallocate,omitempty"` // open/rate ramp: connections opened at once before the first send (k6's preAllocatedVUs; load.Group.Preallocate)
	Burst          int             `yaml:"burst,omitempty"`
	Stages         []Stage         `yaml:"stages,omitempty"`
	Smooth         bool            `yaml:"smooth,omitempty"`
	Start          time.Duration   `yaml:"start,omitempty"`
	Duration       time.Duration   `yaml:"duration,omitempty"`
	Requests       []Request       `yaml:"requests,omitempty"`
	KeepAlive      *bool           `yaml:"keepalive,omitempty"`
	Timeout        time.Duration   `yaml:"timeout,omitempty"`
	ConnectTimeout time.Duration   `yaml:"connect_timeout,omitempty"`
	CountHeader    string          `yaml:"count_header,omitempty"`
}

// LoadSpec is the traffic of one trial: one group inline, or several groups.
type LoadSpec struct {
	Group  `yaml:",inline"`
	Groups []Group `yaml:"groups,omitempty"`
	// Measure names the group whose numbers answer the question (default: the only or first group).
	Measure string `yaml:"measure,omitempty"`
	// Warmup is untimed load through the identical code path before each
	// fork's measurement (seed 000's JIT bug): a duration (bursts repeat
	// until it has passed), or {min, max, until: steady} (warmup.go).
	Warmup Warmup `yaml:"warmup,omitempty"`
}

// Startup bounds how long a target may take to become ready.
type Startup struct {
	Timeout time.Duration `yaml:"timeout,omitempty"`
	// OnFailure is "stop" (default: end the run, keep finished trials) or
	// "continue" (record the trial as failed and go on).
	OnFailure string `yaml:"on_failure,omitempty"`
}

// CoolDown is the gate before each trial: wait until the host is quiet.
type CoolDown struct {
	MaxBusyPct float64       `yaml:"max_busy_pct,omitempty"`
	MaxWait    time.Duration `yaml:"max_wait,omitempty"`
	Pause      time.Duration `yaml:"pause,omitempty"` // fixed pause after a target stops
	// Iteration is the pause between two iterations of one fork.
	Iteration time.Duration `yaml:"iteration,omitempty"`
}

// Pinning puts target, services and generator on CPU lists like "1" or "0-1".
type Pinning struct {
	Target    string `yaml:"target,omitempty"`
	Services  string `yaml:"services,omitempty"`
	Generator string `yaml:"generator,omitempty"`
}

// Claim is a statement from the seed with a check the data can settle.
type Claim struct {
	ID       string      `yaml:"id"`
	Says     string      `yaml:"says"`
	Check    stats.Check `yaml:"check"`
	Decision *Decision   `yaml:"decision,omitempty"`
	// Seed is the write-up's own figure for this claim and where it comes
	// from, shown beside ours in the reproduction table.
	Seed *SeedFigure `yaml:"seed,omitempty"`
	// Requires lists what must hold on this host, in this run, for the
	// claim to apply; when one does not, the verdict is not applicable
	// here, with the reason (pipeline/preconditions.go).
	Requires []Precondition `yaml:"requires,omitempty"`
	// Rule names the threshold rule (rules.go, METHODOLOGY.md "From a
	// seed's sentence to a claim's threshold") that set the check's bound
	// from the seed's statement; the catalog test recomputes it.
	Rule string `yaml:"rule,omitempty"`
	// DesignFact, when set, says why the check cannot fail by construction
	// (a pool size, an arithmetic floor): the verdict is shown as a sanity
	// check of the setup and not counted as evidence for the seed.
	DesignFact string `yaml:"design_fact,omitempty"`
	// Differs is one sentence on why our result may differ from the seed's
	// (a contradiction, or "smaller here"): shown beside the verdict.
	Differs *Differs `yaml:"differs,omitempty"`
}

// Differs explains a difference from the seed: Cause is one of
// DiffersCauses, Why the sentence.
type Differs struct {
	Cause string `yaml:"cause"`
	Why   string `yaml:"why"`
}

// DiffersCauses are the reasons a result can differ from a seed's: a
// genuine finding of this host, the host's smaller scale, or a choice of
// the manifest's design.
var DiffersCauses = []string{"finding", "scale", "design"}

// Precondition is one condition a claim needs, in one of three forms:
//
//   - {metric: M, variant: V, where: {k: [..]}, at_least: x, at_most: y, per_core: true}:
//     the median over forks of M (each fork the median of its steady
//     iterations) of every selected cell lies within the bounds. variant
//     defaults to every variant the claim's check names, where to the
//     points the check reads, group to the check's. per_core divides a
//     "% of one core" metric by the CPUs the target may use, so
//     {metric: target_cpu_pct, per_core: true, at_least: 90} reads "the
//     target kept 90% of its cores busy".
//   - {cores: {at_least: n, at_most: n}}: the CPUs the target may use (its
//     pinning, else threadlab's CPU affinity in the fingerprint).
//   - {generator: not_saturated}: in no selected cell did the load
//     generator saturate in half or more of the measured windows (valid or
//     re-run); variant, group and where select cells as above.
type Precondition struct {
	Metric    string              `yaml:"metric,omitempty"`
	Variant   string              `yaml:"variant,omitempty"`
	Group     string              `yaml:"group,omitempty"`
	Where     map[string][]string `yaml:"where,omitempty"`
	AtLeast   *float64            `yaml:"at_least,omitempty"`
	AtMost    *float64            `yaml:"at_most,omitempty"`
	PerCore   bool                `yaml:"per_core,omitempty"`
	Cores     *CoreBounds         `yaml:"cores,omitempty"`
	Generator string              `yaml:"generator,omitempty"`
}

// CoreBounds bound a host's CPU count.
type CoreBounds struct {
	AtLeast *int `yaml:"at_least,omitempty"`
	AtMost  *int `yaml:"at_most,omitempty"`
}

// GeneratorNotSaturated is the one generator precondition.
const GeneratorNotSaturated = "not_saturated"

// Forms lists which of the three forms p is written in ("metric",
// "cores", "generator"): none or several is a mistake.
func (p Precondition) Forms() []string {
	var out []string
	if p.Metric != "" {
		out = append(out, "metric")
	}
	if p.Cores != nil {
		out = append(out, "cores")
	}
	if p.Generator != "" {
		out = append(out, "generator")
	}
	return out
}

// SeedFigure is a seed write-up's number for a claim: the ratio (or the
// absolute value, for an absolute check) it reported, and the sentence it
// comes from ("000: platform 1325 ms vs virtual 1042 ms wall, single trials").
// Row is the statement's id in experiments/seeds/claims.csv; Value is
// absent when the write-up gave no figure; Scaled is the figure at this
// profile's scale, where the manifest divides the seed's load
// (METHODOLOGY.md "Scaling a default profile").
type SeedFigure struct {
	Row    string   `yaml:"row,omitempty"`
	Value  *float64 `yaml:"value,omitempty"`
	Scaled *float64 `yaml:"scaled,omitempty"`
	From   string   `yaml:"from"`
	// Point names the unit of our verdict whose figure is comparable to
	// the seed's (the sweep point at the seed's own ratio of pool to
	// threads, say "pool=40"); without it the size reads the deciding,
	// weakest unit, which may answer a different question.
	Point string `yaml:"point,omitempty"`
}

// Decision is the row of the decision framework a supported claim backs.
type Decision struct {
	When string `yaml:"when"`
	Pick string `yaml:"pick"`
	Then string `yaml:"then,omitempty"`
	// TestedBy lists the claims of this manifest whose verdicts test the
	// "then" advice; without them the report shows the advice as the
	// seed's, not tested here.
	TestedBy []string `yaml:"tested_by,omitempty"`
}

// UnmarshalYAML reads variants from a mapping, keeping order.
func (v *Variants) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return &yaml.TypeError{Errors: []string{lineMsg(n, "variants must be a mapping of name: {target: ...} or name: {command: [...]}")}}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		var x Variant
		if err := n.Content[i+1].Decode(&x); err != nil {
			return err
		}
		x.Name = n.Content[i].Value
		*v = append(*v, x)
	}
	return nil
}

// MarshalYAML writes variants back as an ordered mapping.
func (v Variants) MarshalYAML() (any, error) {
	return orderedMap(len(v), func(i int) (string, any) { return v[i].Name, v[i] })
}

// UnmarshalYAML reads sweep dimensions from a mapping, keeping order.
func (s *Sweep) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return &yaml.TypeError{Errors: []string{lineMsg(n, "sweep must be a mapping of name: {property: ..., values: [...]}")}}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		var d SweepDim
		if err := n.Content[i+1].Decode(&d); err != nil {
			return err
		}
		d.Name = n.Content[i].Value
		*s = append(*s, d)
	}
	return nil
}

// MarshalYAML writes the sweep back as an ordered mapping.
func (s Sweep) MarshalYAML() (any, error) {
	return orderedMap(len(s), func(i int) (string, any) { return s[i].Name, s[i] })
}

func orderedMap(n int, at func(int) (string, any)) (any, error) {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i < n; i++ {
		k, v := at(i)
		var val yaml.Node
		if err := val.Encode(v); err != nil {
			return nil, err
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &val)
	}
	return m, nil
}
