package experiments

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/env/targets"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/measure/metric"
)

// Metrics a claim may name: the measured numeric columns of trials.csv, as
// measure/metric (their one home) marks them claimable.
var Metrics = metric.Claimable()

// Normalize fills every default in one place, so the manifest saved with a
// run states exactly what ran. It is idempotent.
func (m *Manifest) Normalize() {
	m.normalizeReplication()
	m.normalizeAOT()
	m.Load.Warmup.normalize()
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
	m.normalizeBoot()
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

// Primary is the metric that answers the question, by metric.Primary's rule
// for the measured group's load model.
func (m *Manifest) Primary() string {
	if g := m.Measured(); g != nil {
		return metric.Primary(g.Model)
	}
	return metric.Primary("")
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

// checkWritten reports zero values the author wrote where zero is not a
// default but a mistake; it runs before Normalize fills the defaults.
func (m *Manifest) checkWritten(pos positions) Problems {
	var ps Problems
	for key, r := range map[string]*Rounds{"trials": m.Trials, "forks": &m.Forks} {
		if n, ok := pos[key]; ok && r != nil && r.Min == 0 && r.Max == 0 {
			ps = append(ps, Problem{File: m.File, Line: n.Line, Col: n.Column, Field: key,
				Msg: "0 " + key + " would run nothing (write 1 or more; 6 or more give a confidence interval, or leave it out for the default 5)"})
		}
	}
	return ps
}

// validate checks the normalized manifest and reports every problem with
// its position and a fix.
// cs is the sweep the claims were written against (see parse).
func (m *Manifest) validate(pos positions, cs claimScope) Problems {
	var ps Problems
	bad := func(field, format string, a ...any) {
		line, col := pos.at(field)
		ps = append(ps, Problem{File: m.File, Line: line, Col: col, Field: field, Msg: fmt.Sprintf(format, a...)})
	}
	if m.Name == "" {
		bad("name", "missing (give the experiment a short name like io-bound; it names data/<name>/ and reports/<name>/)")
	} else if !nameRE.MatchString(m.Name) || len(m.Name) > 64 {
		bad("name", "%q is not a valid name (use up to 64 lowercase letters, digits and dashes, like pool-sweep)", m.Name)
	}
	if m.Title == "" {
		bad("title", "missing (one line saying what the experiment shows)")
	}
	if m.Question == "" {
		bad("question", "missing (the question the experiment answers; the report opens with it)")
	}
	m.validateVariants(bad)
	m.validateBoot(bad)
	if len(m.Variants) > MaxVariants {
		// Later checks go over every variant; stop here rather than spend
		// time on a manifest that cannot run anyway.
		bad("variants", "%d variants, more than the %d allowed (each is a target start per sweep point; split the experiment)", len(m.Variants), MaxVariants)
		return ps
	}
	m.validateReplication(bad)
	if m.Forks.Max > MaxTrials {
		bad(m.ForksKey(), "%d is more than the %d allowed per cell (past ~20 a verdict stops changing; lower it)", m.Forks.Max, MaxTrials)
	}
	if m.Iterations > MaxTrials {
		bad("iterations", "%d is more than the %d allowed per fork (lower it)", m.Iterations, MaxTrials)
	}
	if m.Order != "interleaved" && m.Order != "sequential" {
		bad("order", "%q is not an order (use interleaved or sequential)", m.Order)
	}
	if m.Startup.OnFailure != "stop" && m.Startup.OnFailure != "continue" {
		bad("startup.on_failure", "%q is not allowed (use stop or continue)", m.Startup.OnFailure)
	}
	capDuration(bad, "startup.timeout", m.Startup.Timeout, MaxStartup)
	if !finite(m.CoolDown.MaxBusyPct) || m.CoolDown.MaxBusyPct < 0 || m.CoolDown.MaxBusyPct > 100 {
		bad("cooldown.max_busy_pct", "must be between 0 and 100 (got %g)", m.CoolDown.MaxBusyPct)
	}
	capDuration(bad, "cooldown.max_wait", m.CoolDown.MaxWait, MaxCoolDown)
	capDuration(bad, "cooldown.pause", m.CoolDown.Pause, MaxCoolDown)
	for _, name := range slices.Sorted(maps.Keys(m.Profiles)) {
		if name == "default" || !nameRE.MatchString(name) || len(name) > 64 {
			bad("profiles."+name, "%q cannot be a profile name (lowercase letters, digits and dashes, like smoke or full; \"default\" means no profile)", name)
		}
	}
	m.validateServices(bad)
	m.validatePinning(bad)
	m.validateLoad(bad)
	m.validateSweep(bad)
	m.validateCells(bad)
	m.validateClaims(bad, cs)
	m.validateFloors(bad)
	if len(ps) == 0 {
		ps = append(m.hostProblems(pos), m.hostPinning(pos)...)
	}
	return ps
}

// capDuration reports a negative duration or one above limit.
func capDuration(bad badFunc, field string, d, limit time.Duration) {
	switch {
	case d < 0:
		bad(field, "must not be negative (got %s)", d)
	case d > limit:
		bad(field, "%s is longer than the %s allowed (a typo such as 48h for 48s would make the run hang; lower it)", d, limit)
	}
}

func (m *Manifest) validateServices(bad badFunc) {
	switch m.Services.Database {
	case "", "h2", "postgres":
	default:
		bad("services.database", "%q is not supported (use h2 or postgres)", m.Services.Database)
	}
	if m.Services.Database != "" && !m.hasBuiltin() {
		bad("services.database", "only built-in targets use the database (remove it, or use a target: variant)")
	}
	if d := m.Services.Downstream; d != nil {
		capDuration(bad, "services.downstream.delay", d.Delay, MaxDelay)
	}
	if m.Services.Orders < 0 || m.Services.Orders > MaxOrders {
		bad("services.orders", "must be between 0 and %d (got %d)", MaxOrders, m.Services.Orders)
	}
}

func (m *Manifest) hasBuiltin() bool {
	return slices.ContainsFunc(m.Variants, func(v Variant) bool { return v.Target != "" })
}

// cpuListRE is the CPU list syntax taskset -c takes, without spaces.
var cpuListRE = regexp.MustCompile(`^\d{1,4}(-\d{1,4})?(,\d{1,4}(-\d{1,4})?)*$`)

func (m *Manifest) validatePinning(bad badFunc) {
	for _, p := range m.pinnings() {
		if !cpuListRE.MatchString(p.cpus) {
			bad("pinning."+p.name, "%q is not a CPU list (write it like 0, 1-3 or 0,2)", p.cpus)
		} else if _, err := env.ParseCPUList(p.cpus); err != nil {
			bad("pinning."+p.name, "%v", err)
		}
	}
}

type pinning struct{ name, cpus string }

func (m *Manifest) pinnings() []pinning {
	var out []pinning
	for _, p := range []pinning{{"target", m.Pinning.Target}, {"services", m.Pinning.Services}, {"generator", m.Pinning.Generator}} {
		if p.cpus != "" {
			out = append(out, p)
		}
	}
	return out
}

// hostPinning reports pinning to CPUs this process may not run on: taskset
// would fail at the first target start.
func (m *Manifest) hostPinning(pos positions) Problems {
	allowed := env.Allowed()
	var ps Problems
	for _, p := range m.pinnings() {
		cpus, err := env.ParseCPUList(p.cpus)
		if err != nil {
			continue
		}
		for _, c := range cpus {
			if !slices.Contains(allowed, c) {
				line, col := pos.at("pinning." + p.name)
				ps = append(ps, Problem{File: m.File, Line: line, Col: col, Field: "pinning." + p.name, Host: true,
					Msg: fmt.Sprintf("CPU %d is not available on this host (threadlab may use %s); pin to those, or remove pinning", c, env.FormatCPUList(allowed))})
				break
			}
		}
	}
	return ps
}

// validateCells bounds the schedule: variants x sweep points x trials.
func (m *Manifest) validateCells(bad badFunc) {
	cells := len(m.Variants)
	for _, d := range m.Sweep {
		cells *= max(len(d.Values), 1)
		if cells > MaxCells {
			bad("sweep", "variants x sweep points is more than %d cells (each cell starts a target; sweep fewer values or split the experiment)", MaxCells)
			return
		}
	}
	if n := m.Forks.Max * max(m.Iterations, 1); n > 0 && m.Forks.Max <= MaxTrials && m.Iterations <= MaxTrials && cells*n > MaxJobs {
		bad(m.ForksKey(), "%d cells x %d forks x %d iterations is %d windows, more than the %d allowed (lower forks or iterations, or sweep fewer values)", cells, m.Forks.Max, max(m.Iterations, 1), cells*n, MaxJobs)
	}
}

var (
	propertyRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._\-\[\]]*$`)
	envRE      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	varRE      = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
)

func (m *Manifest) validateVariants(bad badFunc) {
	if len(m.Variants) == 0 {
		bad("variants", "no variants (add at least one, e.g. platform: {target: spring-mvc})")
	}
	seen := map[string]bool{}
	choices := 0
	for _, v := range m.Variants {
		f := "variants." + v.Name
		switch v.Role {
		case "":
			choices++
		case RoleControl:
		default:
			bad(f+".role", "%q is not known (the one value is control: a reference the others are read against, not a choice; leave it out for an approach a reader may pick)", v.Role)
		}
		if seen[v.Name] {
			bad(f, "variant %q appears twice (give each variant its own name)", v.Name)
		}
		seen[v.Name] = true
		if !nameRE.MatchString(v.Name) || len(v.Name) > 64 {
			bad(f, "variant name %q is not valid (use up to 64 lowercase letters, digits and dashes)", v.Name)
		}
		switch {
		case v.Target == "" && len(v.Command) == 0:
			bad(f, "needs target: (%s) or command: [prog, --port, \"{port}\"]", strings.Join(targets.Names(), " or "))
		case v.Target != "" && len(v.Command) > 0:
			bad(f, "has both target and command (keep one)")
		case v.Target != "" && !slices.Contains(targets.Names(), v.Target):
			bad(f+".target", "unknown target %q (use %s, or command: [...] for your own service)", v.Target, strings.Join(targets.Names(), " or "))
		case len(v.Command) > 0:
			validateCommand(f+".command", v.Command, bad)
		}
		for _, p := range []struct{ name, path string }{{"ready", v.Ready}, {"metrics", v.Metrics}} {
			if p.path == "" {
				continue
			}
			if err := load.CheckURLPath(p.path); err != nil {
				bad(f+"."+p.name, "%v", err)
			}
		}
		if len(v.Command) > 0 && len(v.JVM) > 0 {
			bad(f+".jvm", "jvm options apply to built-in targets only (put them in command: instead)")
		}
		if len(v.Command) > 0 && len(v.Properties) > 0 {
			bad(f+".properties", "Spring properties apply to built-in targets only (pass settings in command: or env: instead)")
		}
		switch {
		case v.JDK == 0:
		case len(v.Command) > 0:
			bad(f+".jdk", "jdk applies to built-in targets only (a command picks its own Java: set JAVA_HOME in env:, and remove jdk)")
		case v.JDK < 8 || v.JDK > 99:
			bad(f+".jdk", "%d is not a Java feature release (write the major version, like 21 or 25)", v.JDK)
		}
		if v.SpringBoot != "" && len(v.Command) > 0 {
			bad(f+".spring_boot", "spring_boot applies to built-in targets only (a command brings its own build; remove spring_boot)")
		} else if _, err := targets.ResolveBoot(v.SpringBoot); v.SpringBoot != "" && err != nil {
			bad(f+".spring_boot", "%v", err)
		}
		for i, o := range v.JVM {
			if o == "" || strings.ContainsRune(o, 0) {
				bad(fmt.Sprintf("%s.jvm[%d]", f, i), "empty or holds a NUL byte (remove it)")
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v.Properties)) {
			if !propertyRE.MatchString(k) {
				bad(f+".properties."+k, "%q is not a Spring property name (letters, digits, '.', '-', '_' and [n], like server.tomcat.threads.max)", k)
			}
			if hasControl(v.Properties[k]) {
				bad(f+".properties."+k, "value holds a control character or line break (remove it)")
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v.Env)) {
			if !envRE.MatchString(k) {
				bad(f+".env."+k, "%q is not an environment variable name (letters, digits and _, not starting with a digit)", k)
			}
			if strings.ContainsRune(v.Env[k], 0) {
				bad(f+".env."+k, "value holds a NUL byte (remove it)")
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v.Vars)) {
			if !varRE.MatchString(k) || k == "random" || k == "port" || k == "downstream" {
				bad(f+".vars."+k, "%q cannot be a variable name (lowercase letters, digits and _; not random, port or downstream)", k)
			}
			if hasControl(v.Vars[k]) {
				bad(f+".vars."+k, "value holds a control character or line break, which would reach the wire (remove it)")
			}
		}
	}
	if len(m.Variants) > 0 && choices == 0 {
		bad("variants", "every variant is a control (role: control), so the experiment offers nothing to choose between (remove role: from the approaches being compared)")
	}
}

// validateCommand checks a command variant's argv: a program, {port}
// somewhere, and no NUL bytes (exec cannot pass them).
func validateCommand(f string, argv []string, bad badFunc) {
	if strings.TrimSpace(argv[0]) == "" {
		bad(f+"[0]", "the program is empty (name the program to run first, like [./server, --port, \"{port}\"])")
	}
	for i, a := range argv {
		if strings.ContainsRune(a, 0) {
			bad(fmt.Sprintf("%s[%d]", f, i), "holds a NUL byte, which no program can receive (remove it)")
		}
	}
	if !slices.ContainsFunc(argv, func(a string) bool { return strings.Contains(a, "{port}") }) {
		bad(f, "no argument contains {port} (threadlab picks a free port and puts it there, e.g. [./server, --port, \"{port}\"])")
	}
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f })
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

func (m *Manifest) variantNames() []string {
	out := make([]string, len(m.Variants))
	for i, v := range m.Variants {
		out[i] = v.Name
	}
	return out
}
