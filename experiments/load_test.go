package experiments

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

const valid = `name: demo
title: A demo
question: Does it work?
variants:
  platform: {target: spring-mvc}
  own: {command: [./server, --port, "{port}"], ready: /health}
load:
  model: burst
  burst: 300
  requests: [{path: "/io?ms=10"}]
  warmup: 1s
trials: 3
profiles:
  smoke: {trials: 2, load: {burst: 50}}
`

func TestParseValid(t *testing.T) {
	m, err := Parse("demo.yaml", []byte(valid), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{m.Variants[0].Name, m.Variants[1].Name}; got[0] != "platform" || got[1] != "own" {
		t.Errorf("variants out of manifest order: %v", got)
	}
	g := m.Measured()
	if g == nil || g.Name != "main" || g.Burst != 300 || g.Requests[0].Method != "GET" || !*g.KeepAlive || g.CountHeader != "X-Thread" {
		t.Errorf("inline load not normalized into group main: %+v", g)
	}
	if m.Variants[0].Ready != "/actuator/health" || m.Variants[1].Ready != "/health" {
		t.Errorf("ready defaults wrong: %q %q", m.Variants[0].Ready, m.Variants[1].Ready)
	}
	if m.Primary() != "wall_ms" || m.Services.Database != "h2" || m.Forks != (Rounds{3, 3}) || m.Iterations != 1 || m.Order != "interleaved" {
		t.Errorf("defaults: primary %s db %s forks %v iterations %d order %s", m.Primary(), m.Services.Database, m.Forks, m.Iterations, m.Order)
	}
}

func TestProfileOverlay(t *testing.T) {
	m, err := Parse("demo.yaml", []byte(valid), "smoke")
	if err != nil {
		t.Fatal(err)
	}
	// trials replaced; burst replaced; requests and warmup kept from the base.
	if m.Forks.Min != 2 || m.Measured().Burst != 50 || m.Measured().Requests[0].Path != "/io?ms=10" || m.Load.Warmup.String() != "1s" {
		t.Errorf("smoke overlay: forks %v burst %d path %q warmup %s", m.Forks, m.Measured().Burst, m.Measured().Requests[0].Path, m.Load.Warmup)
	}
	if m.Profile != "smoke" {
		t.Errorf("profile not recorded: %q", m.Profile)
	}
}

func TestNormalizeIdempotent(t *testing.T) {
	m, err := Parse("demo.yaml", []byte(valid), "")
	if err != nil {
		t.Fatal(err)
	}
	b1, err := Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Parse("again.yaml", b1, "")
	if err != nil {
		t.Fatalf("normalized manifest does not load back: %v\n%s", err, b1)
	}
	b2, _ := Marshal(m2)
	if string(b1) != string(b2) {
		t.Errorf("normalizing twice changed the manifest:\n%s\n---\n%s", b1, b2)
	}
}

// TestProblems checks the exact message for each kind of bad input: the
// file, line and column, the field, and how to fix it.
func TestProblems(t *testing.T) {
	tests := []struct {
		name    string
		reason  string
		edit    func(string) string
		profile string
		want    []string
	}{
		{"unknown key", "typos must not be silently ignored",
			func(s string) string { return strings.Replace(s, "trials: 3", "trails: 3", 1) }, "",
			[]string{`demo.yaml:12:1: trails: unknown key "trails", did you mean "trials"? (known keys here: aot_cache, claims, cooldown, forks, fresh_jvm, headline, iterations, load, name, noise, notes, order, pinning, profile, profiles, question, retries, seed, services, source, spring_boot, startup, sweep, title, trials, variants)`}},
		{"unknown nested key", "strictness applies at every depth",
			func(s string) string {
				return strings.Replace(s, "{target: spring-mvc}", "{target: spring-mvc, propertys: {a: b}}", 1)
			}, "",
			[]string{`demo.yaml:5:34: variants.platform.propertys: unknown key "propertys", did you mean "properties"?`}},
		{"wrong type", "a number where a duration belongs",
			func(s string) string { return strings.Replace(s, "warmup: 1s", "warmup: 15", 1) }, "",
			[]string{"demo.yaml:11:11: load.warmup: warmup \"15\" is not a duration (write a duration with a unit, like 10s, or {min: 10s, max: 60s, until: steady})"}},
		{"a duration out of range", "9999999h has its unit: say it is too large, not that a unit is missing",
			func(s string) string { return strings.Replace(s, "warmup: 1s", "warmup: 1s\n  timeout: 9999999h", 1) }, "",
			[]string{"demo.yaml:12:12: load.timeout: cannot unmarshal !!str `9999999h` into time.Duration (a duration must be under 2562047h, about 292 years; a load or time-out needs seconds to hours)"}},
		{"warm-up until something unknown", "a typo in until must not silently mean a fixed warm-up",
			func(s string) string { return strings.Replace(s, "warmup: 1s", "warmup: {min: 1s, until: stable}", 1) }, "",
			[]string{"demo.yaml:11:28: load.warmup.until: \"stable\" is not known (the one value is steady"}},
		{"warm-up with an unknown key", "strict decoding reaches inside the warm-up mapping",
			func(s string) string {
				return strings.Replace(s, "warmup: 1s", "warmup: {min: 1s, maximum: 9s, until: steady}", 1)
			}, "",
			[]string{"demo.yaml:11:21: load.warmup.maximum: unknown key \"maximum\""}},
		{"warm-up max below min", "the bounds are checked",
			func(s string) string {
				return strings.Replace(s, "warmup: 1s", "warmup: {min: 10s, max: 5s, until: steady}", 1)
			}, "",
			[]string{"load.warmup.max: 5s is below min 10s"}},
		{"min and max without until", "two bounds only mean something until steady",
			func(s string) string { return strings.Replace(s, "warmup: 1s", "warmup: {min: 1s, max: 5s}", 1) }, "",
			[]string{"load.warmup: sets min and max without until: steady"}},
		{"wrong type int", "a word where a count belongs",
			func(s string) string { return strings.Replace(s, "trials: 3", "trials: many", 1) }, "",
			[]string{"demo.yaml:12:9: trials: \"many\" is not a number of forks (write a number like 5, or {min: 5, max: 20} for sequential rounds)"}},
		{"missing variants", "nothing to run",
			func(s string) string {
				return strings.Replace(strings.Replace(s, "  platform: {target: spring-mvc}\n", "", 1), "  own: {command: [./server, --port, \"{port}\"], ready: /health}\n", "", 1)
			}, "",
			[]string{"demo.yaml:4:10: variants: no variants (add at least one, e.g. platform: {target: spring-mvc})"}},
		{"negative trials", "a count below one",
			func(s string) string { return strings.Replace(s, "trials: 3", "trials: -3", 1) }, "",
			[]string{"demo.yaml:12:9: trials: must be at least 1 (got -3); 6 or more give a confidence interval"}},
		{"port missing", "threadlab cannot tell the command where to listen",
			func(s string) string { return strings.Replace(s, `"{port}"`, "8080", 1) }, "",
			[]string{`demo.yaml:6:18: variants.own.command: no argument contains {port} (threadlab picks a free port and puts it there, e.g. [./server, --port, "{port}"])`}},
		{"unknown target", "a typo in a built-in target",
			func(s string) string { return strings.Replace(s, "target: spring-mvc", "target: spring-mcv", 1) }, "",
			[]string{`demo.yaml:5:22: variants.platform.target: unknown target "spring-mcv" (use spring-mvc or spring-webflux, or command: [...] for your own service)`}},
		{"jdk not a release", "jdk names a Java feature release",
			func(s string) string {
				return strings.Replace(s, "{target: spring-mvc}", "{target: spring-mvc, jdk: 3}", 1)
			}, "",
			[]string{`variants.platform.jdk: 3 is not a Java feature release (write the major version, like 21 or 25)`}},
		{"jdk on a command", "threadlab starts a command as written, so it cannot choose its Java",
			func(s string) string { return strings.Replace(s, "ready: /health}", "ready: /health, jdk: 21}", 1) }, "",
			[]string{`variants.own.jdk: jdk applies to built-in targets only (a command picks its own Java: set JAVA_HOME in env:, and remove jdk)`}},
		{"spring_boot not a line", "the error names every supported line, at the line the author wrote",
			func(s string) string { return strings.Replace(s, "trials: 3", "trials: 3\nspring_boot: 4.2", 1) }, "",
			[]string{`demo.yaml:13:14: spring_boot: Spring Boot "4.2" is not a supported line (use 3.5 (3.5.7), 4.0 (4.0.7) or 4.1 (4.1.2))`}},
		{"spring_boot patch not built", "a seed's own patch (4.1.1) is not what would run: say which one is",
			func(s string) string {
				return strings.Replace(s, "{target: spring-mvc}", "{target: spring-mvc, spring_boot: 4.1.1}", 1)
			}, "",
			[]string{`demo.yaml:5:47: variants.platform.spring_boot: Spring Boot 4.1.1 is not built here: the 4.1 line builds 4.1.2 (write 4.1 or 4.1.2)`}},
		{"spring_boot on a command", "a command brings its own build",
			func(s string) string {
				return strings.Replace(s, "ready: /health}", "ready: /health, spring_boot: \"4.1\"}", 1)
			}, "",
			[]string{`variants.own.spring_boot: spring_boot applies to built-in targets only (a command brings its own build; remove spring_boot)`}},
		{"bad model", "models are a closed set",
			func(s string) string { return strings.Replace(s, "model: burst", "model: bursty", 1) }, "",
			[]string{`demo.yaml:8:10: load.model: "bursty" is not a load model (use closed, open, burst, ramp)`}},
		{"unknown profile", "the error lists the profiles there are",
			func(s string) string { return s }, "fast",
			[]string{`demo.yaml:14:3: profiles: unknown profile "fast" (this manifest has: default, smoke)`}},
		{"profile named default", "--profile default means no profile, so this one could never apply",
			func(s string) string { return strings.Replace(s, "  smoke: {", "  default: {", 1) }, "",
			[]string{`demo.yaml:14:12: profiles.default: "default" cannot be a profile name`}},
		{"several at once", "every problem is reported, not just the first",
			func(s string) string {
				return strings.Replace(strings.Replace(s, "trials: 3", "trials: 0", 1), "burst: 300", "burst: -1", 1)
			}, "",
			[]string{"demo.yaml:12:9: trials: 0 trials would run nothing", "load.burst: a burst model needs burst > 0", "load.burst: must be between 0 and 1000000 (got -1)"}},
		{"keys, types and values at once", "one lint run shows every kind of problem, without echoes of the first",
			func(s string) string {
				s = strings.Replace(s, "trials: 3", "trails: 3", 1)
				s = strings.Replace(s, "burst: 300", "burst: many", 1)
				return strings.Replace(s, "ready: /health", "ready: health", 1)
			}, "",
			[]string{`demo.yaml:12:1: trails: unknown key "trails"`, "demo.yaml:9:10: load.burst: cannot unmarshal !!str `many` into int (write a number)\n",
				`demo.yaml:6:55: variants.own.ready: path "health" must start with /`}},
		{"syntax", "broken YAML names the line",
			func(s string) string { return strings.Replace(s, "trials: 3", "trials: [3", 1) }, "",
			[]string{"demo.yaml:", "YAML syntax:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("demo.yaml", []byte(tt.edit(valid)), tt.profile)
			if err == nil {
				t.Fatalf("%s: no error", tt.reason)
			}
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("%s: error is %T, want Problems: %v", tt.reason, err, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s:\n got: %s\nwant: %s", tt.reason, err, w)
				}
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), "")
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing file: %v", err)
	}
}

// TestCatalog loads every manifest in the catalog under every profile.
func TestCatalog(t *testing.T) {
	files, _ := filepath.Glob("*.yaml")
	if len(files) == 0 {
		t.Fatal("no manifests in experiments/")
	}
	for _, f := range files {
		m, err := Load(f, "")
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if _, ok := m.Profiles["smoke"]; !ok {
			t.Errorf("%s has no smoke profile", f)
		}
		for _, p := range ProfileNames(m) {
			if _, err := Load(f, p); err != nil && !HostOnly(err) {
				t.Errorf("%s --profile %s: %v", f, p, err)
			}
		}
		if strings.TrimSuffix(filepath.Base(f), ".yaml") != m.Name {
			t.Errorf("%s: name %q must match the file name", f, m.Name)
		}
	}
}

func TestVars(t *testing.T) {
	base := strings.Replace(valid, `"/io?ms=10"`, `"{cpu_path}?iterations=100"`, 1)
	_, err := Parse("demo.yaml", []byte(base), "")
	if err == nil || !strings.Contains(err.Error(), "load.requests[0].path: {cpu_path} is not set by variant platform (add vars: {cpu_path: ...} to every variant)") {
		t.Errorf("an unset variable must be named with the variant: %v", err)
	}
	ok := strings.Replace(strings.Replace(base, "{target: spring-mvc}", "{target: spring-mvc, vars: {cpu_path: /cpu}}", 1),
		"ready: /health}", "ready: /health, vars: {cpu_path: /cpu-offloaded}}", 1)
	m, err := Parse("demo.yaml", []byte(ok), "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Variants[1].Vars["cpu_path"] != "/cpu-offloaded" {
		t.Errorf("vars not decoded: %+v", m.Variants[1])
	}
	if got := Placeholders("/order/{random 1..10}/{x}{x}{y_2}"); strings.Join(got, ",") != "x,y_2" {
		t.Errorf("Placeholders = %v", got)
	}
}
