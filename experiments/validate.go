package experiments

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// BuiltinTargets are the Spring Boot targets under env/targets.
var BuiltinTargets = []string{"spring-mvc", "spring-webflux"}

// Models the load generator offers.
var Models = []string{"closed", "open", "burst", "ramp"}

// Metrics a claim may name: the numeric columns of trials.csv.
var Metrics = []string{"rps", "requests", "errors", "error_pct", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms", "wall_ms", "distinct_threads", "target_cpu_pct", "target_peak_threads", "target_peak_rss_mb", "gen_cpu_pct"}

// Normalize fills every default in one place, so the manifest saved with a
// run states exactly what ran. It is idempotent.
func (m *Manifest) Normalize() {
	m.normalizeReplication()
	if m.Order == "" {
		m.Order = "interleaved"
	}
	if m.Startup.Timeout == 0 {
		m.Startup.Timeout = 90 * time.Second
	}
	if m.Startup.OnFailure == "" {
		m.Startup.OnFailure = "stop"
	}
	if m.CoolDown.MaxBusyPct == 0 {
		m.CoolDown.MaxBusyPct = 25
	}
	if m.CoolDown.MaxWait == 0 {
		m.CoolDown.MaxWait = 10 * time.Second
	}
	if m.CoolDown.Pause == 0 {
		m.CoolDown.Pause = time.Second
	}
	builtin := false
	for i := range m.Variants {
		v := &m.Variants[i]
		if v.Target != "" {
			builtin = true
			if v.Ready == "" {
				v.Ready = "/actuator/health"
			}
			if v.Metrics == "" {
				v.Metrics = "/actuator/prometheus"
			}
		} else if v.Ready == "" {
			v.Ready = "/"
		}
	}
	if builtin && m.Services.Database == "" {
		m.Services.Database = "h2"
	}
	if builtin && m.Services.Orders == 0 {
		m.Services.Orders = 100000
	}
	l := &m.Load
	if len(l.Groups) == 0 {
		g := l.Group
		if g.Name == "" {
			g.Name = "main"
		}
		l.Groups = []Group{g}
		l.Group = Group{}
	}
	for i := range l.Groups {
		g := &l.Groups[i]
		if g.Name == "" {
			g.Name = fmt.Sprintf("group%d", i+1)
		}
		if g.Model == "" {
			switch {
			case g.Burst > 0:
				g.Model = "burst"
			case g.Rate > 0:
				g.Model = "open"
			case len(g.Stages) > 0:
				g.Model = "ramp"
			default:
				g.Model = "closed"
			}
		}
		for j := range g.Requests {
			if g.Requests[j].Method == "" {
				g.Requests[j].Method = "GET"
			}
			if g.Requests[j].Weight == 0 {
				g.Requests[j].Weight = 1
			}
		}
		if g.KeepAlive == nil {
			t := true
			g.KeepAlive = &t
		}
		if g.Timeout == 0 {
			g.Timeout = 60 * time.Second
		}
		if g.ConnectTimeout == 0 {
			g.ConnectTimeout = 5 * time.Second
		}
		if g.CountHeader == "" {
			g.CountHeader = "X-Thread"
		}
	}
	if l.Measure == "" && len(l.Groups) > 0 {
		l.Measure = l.Groups[0].Name
	}
}

// Measured returns the group whose numbers answer the question.
func (m *Manifest) Measured() *Group {
	for i := range m.Load.Groups {
		if m.Load.Groups[i].Name == m.Load.Measure {
			return &m.Load.Groups[i]
		}
	}
	return nil
}

// Primary is the metric that answers the question: wall time for a burst
// (seeds 000 and 003 measure time until all answered), throughput otherwise.
func (m *Manifest) Primary() string {
	if g := m.Measured(); g != nil && g.Model == "burst" {
		return "wall_ms"
	}
	return "rps"
}

// Variant returns the named variant.
func (m *Manifest) Variant(name string) (Variant, bool) {
	for _, v := range m.Variants {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// validate checks the normalized manifest and reports every problem with
// its position and a fix.
func (m *Manifest) validate(pos positions) Problems {
	var ps Problems
	bad := func(field, format string, a ...any) {
		line, col := pos.at(field)
		ps = append(ps, Problem{File: m.File, Line: line, Col: col, Field: field, Msg: fmt.Sprintf(format, a...)})
	}
	if m.Name == "" {
		bad("name", "missing (give the experiment a short name like io-bound; it names data/<name>/ and reports/<name>/)")
	} else if !nameRE.MatchString(m.Name) {
		bad("name", "%q is not a valid name (use lowercase letters, digits and dashes, like pool-sweep)", m.Name)
	}
	if m.Title == "" {
		bad("title", "missing (one line saying what the experiment shows)")
	}
	if m.Question == "" {
		bad("question", "missing (the question the experiment answers; the report opens with it)")
	}
	if len(m.Variants) == 0 {
		bad("variants", "no variants (add at least one, e.g. platform: {target: spring-mvc})")
	}
	seen := map[string]bool{}
	for _, v := range m.Variants {
		f := "variants." + v.Name
		if seen[v.Name] {
			bad(f, "variant %q appears twice (give each variant its own name)", v.Name)
		}
		seen[v.Name] = true
		if !nameRE.MatchString(v.Name) {
			bad(f, "variant name %q is not valid (use lowercase letters, digits and dashes)", v.Name)
		}
		switch {
		case v.Target == "" && len(v.Command) == 0:
			bad(f, "needs target: (%s) or command: [prog, --port, \"{port}\"]", strings.Join(BuiltinTargets, " or "))
		case v.Target != "" && len(v.Command) > 0:
			bad(f, "has both target and command (keep one)")
		case v.Target != "" && !slices.Contains(BuiltinTargets, v.Target):
			bad(f+".target", "unknown target %q (use %s, or command: [...] for your own service)", v.Target, strings.Join(BuiltinTargets, " or "))
		case len(v.Command) > 0 && !slices.ContainsFunc(v.Command, func(a string) bool { return strings.Contains(a, "{port}") }):
			bad(f+".command", "no argument contains {port} (threadlab picks a free port and puts it there, e.g. [./server, --port, \"{port}\"])")
		}
		if v.Ready != "" && !strings.HasPrefix(v.Ready, "/") {
			bad(f+".ready", "%q must be a path starting with / (e.g. /health)", v.Ready)
		}
		if len(v.Command) > 0 && len(v.JVM) > 0 {
			bad(f+".jvm", "jvm options apply to built-in targets only (put them in command: instead)")
		}
	}
	m.validateReplication(bad)
	if m.Order != "interleaved" && m.Order != "sequential" {
		bad("order", "%q is not an order (use interleaved or sequential)", m.Order)
	}
	if m.Startup.OnFailure != "stop" && m.Startup.OnFailure != "continue" {
		bad("startup.on_failure", "%q is not allowed (use stop or continue)", m.Startup.OnFailure)
	}
	if m.Startup.Timeout < 0 {
		bad("startup.timeout", "must be positive")
	}
	if m.CoolDown.MaxBusyPct < 0 || m.CoolDown.MaxBusyPct > 100 {
		bad("cooldown.max_busy_pct", "must be between 0 and 100 (got %g)", m.CoolDown.MaxBusyPct)
	}
	switch m.Services.Database {
	case "", "h2", "postgres":
	default:
		bad("services.database", "%q is not supported (use h2 or postgres)", m.Services.Database)
	}
	if m.Services.Database != "" && !slices.ContainsFunc(m.Variants, func(v Variant) bool { return v.Target != "" }) {
		bad("services.database", "only built-in targets use the database (remove it, or use a target: variant)")
	}
	if d := m.Services.Downstream; d != nil && d.Delay < 0 {
		bad("services.downstream.delay", "must not be negative (got %s)", d.Delay)
	}
	if m.Services.Orders < 0 {
		bad("services.orders", "must not be negative")
	}
	for name, cpus := range map[string]string{"target": m.Pinning.Target, "services": m.Pinning.Services, "generator": m.Pinning.Generator} {
		if cpus != "" && !cpuListRE.MatchString(cpus) {
			bad("pinning."+name, "%q is not a CPU list (write it like 0, 1-3 or 0,2)", cpus)
		}
	}
	m.validateLoad(bad)
	m.validateSweep(bad)
	m.validateClaims(bad)
	return ps
}

var placeholderRE = regexp.MustCompile(`\{([a-z_][a-z0-9_]*)\}`)

// Placeholders lists the {name} variables in s; {random A..B} and the
// load generator's other templates are not variables.
func Placeholders(s string) []string {
	var out []string
	for _, m := range placeholderRE.FindAllStringSubmatch(s, -1) {
		if m[1] != "random" && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

var cpuListRE = regexp.MustCompile(`^\d+(-\d+)?(,\d+(-\d+)?)*$`)

func (m *Manifest) validateLoad(bad func(string, string, ...any)) {
	l := m.Load
	if l.Warmup < 0 {
		bad("load.warmup", "must not be negative (use 0s for none; lint will warn)")
	}
	names := map[string]bool{}
	inline := len(l.Groups) == 1 && l.Groups[0].Name == "main"
	for i, g := range l.Groups {
		f := fmt.Sprintf("load.groups[%d]", i)
		if inline {
			f = "load"
		}
		if names[g.Name] {
			bad(f+".name", "group %q appears twice (names must be unique)", g.Name)
		}
		names[g.Name] = true
		if !slices.Contains(Models, g.Model) {
			bad(f+".model", "%q is not a load model (use %s)", g.Model, strings.Join(Models, ", "))
			continue
		}
		swept := m.sweptLoad()
		switch g.Model {
		case "closed":
			if g.Users <= 0 && !swept["users"] {
				bad(f+".users", "a closed model needs users > 0 (got %d)", g.Users)
			}
			if g.Duration <= 0 {
				bad(f+".duration", "a closed model needs a duration > 0, like 30s")
			}
		case "open":
			if g.Rate <= 0 && !swept["rate"] {
				bad(f+".rate", "an open model needs rate > 0 requests per second (got %g)", g.Rate)
			}
			if g.Duration <= 0 {
				bad(f+".duration", "an open model needs a duration > 0, like 30s")
			}
		case "burst":
			if g.Burst <= 0 && !swept["burst"] {
				bad(f+".burst", "a burst model needs burst > 0 requests released at once (got %d)", g.Burst)
			}
		case "ramp":
			if len(g.Stages) == 0 {
				bad(f+".stages", "a ramp needs stages: [{duration: 10s, users: 100}, ...]")
			}
			for j, s := range g.Stages {
				if s.Duration <= 0 || (s.Users <= 0 && s.Rate <= 0) {
					bad(fmt.Sprintf("%s.stages[%d]", f, j), "each stage needs a duration > 0 and users or rate > 0")
				}
			}
		}
		if g.Users < 0 || g.Burst < 0 || g.Rate < 0 || g.MaxInFlight < 0 {
			bad(f, "users, burst, rate and max_in_flight must not be negative")
		}
		if g.Duration < 0 || g.Start < 0 || g.Timeout < 0 || g.ConnectTimeout < 0 {
			bad(f, "durations must not be negative")
		}
		if len(g.Think) != 0 && (len(g.Think) != 2 || g.Think[0] > g.Think[1] || g.Think[0] < 0) {
			bad(f+".think", "write think time as [min, max], like [0ms, 100ms]")
		}
		if len(g.Requests) == 0 {
			bad(f+".requests", "no requests (add one: requests: [{path: /io?ms=300}])")
		}
		for j, r := range g.Requests {
			for _, name := range Placeholders(r.Path + r.Body) {
				for _, v := range m.Variants {
					if _, ok := v.Vars[name]; !ok {
						bad(fmt.Sprintf("%s.requests[%d].path", f, j), "{%s} is not set by variant %s (add vars: {%s: ...} to every variant)", name, v.Name, name)
					}
				}
			}
			if !strings.HasPrefix(r.Path, "/") && !strings.HasPrefix(r.Path, "{") {
				bad(fmt.Sprintf("%s.requests[%d].path", f, j), "%q must start with / (the target's base URL is added)", r.Path)
			}
			if r.Weight < 0 {
				bad(fmt.Sprintf("%s.requests[%d].weight", f, j), "must not be negative")
			}
		}
	}
	if !names[l.Measure] {
		bad("load.measure", "no group named %q (use one of the group names)", l.Measure)
	}
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

func (m *Manifest) validateSweep(bad func(string, string, ...any)) {
	for _, d := range m.Sweep {
		f := "sweep." + d.Name
		switch {
		case d.Property == "" && d.Load == "":
			bad(f, "needs property: (a Spring property of the target) or load: (users, rate or burst)")
		case d.Property != "" && d.Load != "":
			bad(f, "has both property and load (keep one)")
		case d.Load != "" && !slices.Contains([]string{"users", "rate", "burst"}, d.Load):
			bad(f+".load", "%q cannot be swept (use users, rate or burst)", d.Load)
		}
		if len(d.Values) == 0 {
			bad(f+".values", "no values (list the points, like [50, 100, 200])")
		}
		if d.Load != "" {
			for _, v := range d.Values {
				if x, err := strconv.ParseFloat(v, 64); err != nil || x <= 0 {
					bad(f+".values", "%q is not a positive number", v)
				}
			}
		}
	}
}

func (m *Manifest) validateClaims(bad func(string, string, ...any)) {
	ids := map[string]bool{}
	keys := map[string]bool{}
	for _, d := range m.Sweep {
		keys[d.Name] = true
	}
	groups := map[string]bool{}
	for _, g := range m.Load.Groups {
		groups[g.Name] = true
	}
	for i, c := range m.Claims {
		f := fmt.Sprintf("claims[%d]", i)
		if c.ID == "" {
			bad(f+".id", "missing (a short slug like platform-plateaus)")
		} else if ids[c.ID] {
			bad(f+".id", "claim %q appears twice", c.ID)
		}
		ids[c.ID] = true
		if c.Says == "" {
			bad(f+".says", "missing (the claim in one sentence)")
		}
		k := c.Check
		if !slices.Contains(Metrics, k.Metric) {
			bad(f+".check.metric", "unknown metric %q (use one of %s)", k.Metric, strings.Join(Metrics, ", "))
		}
		if k.Group != "" && !groups[k.Group] {
			bad(f+".check.group", "no load group named %q", k.Group)
		}
		for _, v := range append(slices.Clone(k.Compare), k.Variant) {
			if _, ok := m.Variant(v); v != "" && !ok {
				bad(f+".check", "no variant named %q (variants: %s)", v, strings.Join(m.variantNames(), ", "))
			}
		}
		switch {
		case len(k.Compare) > 0:
			if len(k.Compare) != 2 {
				bad(f+".check.compare", "compare takes two variants [A, B]; the claim is about median(A)/median(B)")
			}
			if k.AtLeast == nil && k.AtMost == nil {
				bad(f+".check", "a comparison needs at_least: or at_most: (the ratio A/B, e.g. at_least: 1.5)")
			}
		case len(k.FlatOver) > 0:
			if k.Variant == "" {
				bad(f+".check.variant", "flat_over needs the variant whose metric stays flat")
			}
		default:
			bad(f+".check", "needs compare: [A, B] with at_least/at_most, or variant: with flat_over:")
		}
		for _, sel := range []map[string][]string{k.Where, k.FlatOver} {
			for key := range sel {
				if !keys[key] {
					bad(f+".check", "%q is not a sweep key of this manifest", key)
				}
			}
		}
		if d := c.Decision; d != nil {
			if d.When == "" || d.Pick == "" {
				bad(f+".decision", "needs when: (the situation) and pick: (the variant to choose)")
			}
		}
	}
}

func (m *Manifest) variantNames() []string {
	out := make([]string, len(m.Variants))
	for i, v := range m.Variants {
		out[i] = v.Name
	}
	return out
}
