package experiments

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// lintBase is a manifest without any methodology weakness: six trials, a
// warm-up, a burst of 600 against Tomcat's 200 threads, pinning, a smoke
// profile and a throughput claim. Each row of TestLint replaces or removes
// one of its blocks.
var lintBase = []struct{ key, block string }{
	{"variants", `
  platform: {target: spring-mvc, properties: {spring.threads.virtual.enabled: "false"}}
  virtual: {target: spring-mvc, properties: {spring.threads.virtual.enabled: "true"}}`},
	{"load", `
  model: burst
  burst: 600
  requests: [{path: "/io?ms=300"}]
  warmup: {until: steady}`},
	{"trials", "6"},
	{"iterations", "10"},
	{"pinning", `{target: "1", generator: "0"}`},
	{"claims", `
  - {id: virtual-wins, says: virtual threads finish sooner, check: {metric: wall_ms, compare: [platform, virtual], at_least: 1.5}, seed: {value: 2, from: \"seed 000\"}}`},
	{"profiles", `{smoke: {trials: 2, load: {burst: 300, warmup: 1s}}}`},
	{"fresh_jvm", ""},
	{"sweep", ""},
	{"source", ""},
	{"spring_boot", ""},
}

// lintManifest builds lintBase with some blocks replaced; "" removes one.
func lintManifest(t *testing.T, with map[string]string, profile string) *Manifest {
	t.Helper()
	var b strings.Builder
	b.WriteString("name: lint-demo\ntitle: lint demo\nquestion: what does lint say?\n")
	for _, kv := range lintBase {
		block := kv.block
		if x, ok := with[kv.key]; ok {
			block = x
		}
		if block != "" {
			fmt.Fprintf(&b, "%s: %s\n", kv.key, block)
		}
	}
	for k := range with {
		if !slices.ContainsFunc(lintBase, func(kv struct{ key, block string }) bool { return kv.key == k }) {
			t.Fatalf("row replaces %q, which lintBase lacks", k)
		}
	}
	m, err := Parse("lint-demo.yaml", []byte(b.String()), profile)
	if err != nil {
		t.Fatalf("invalid test manifest:\n%s\n%v", b.String(), err)
	}
	return m
}

// TestLint has a row per methodology warning, each with the manifest that
// earns it, plus boundary rows that must stay quiet. want lists the
// warnings expected as "field: fragment of the message", and nothing else
// may be reported.
func TestLint(t *testing.T) {
	const twoGroups = `
  groups:
    - {name: probe, model: closed, users: 400, duration: 30s, requests: [{path: "/io?ms=300"}]}
    - {name: background, model: closed, users: 150, duration: %s, requests: [{path: "/cpu?iterations=20000"}]}
  measure: probe
  warmup: {until: steady}`
	cases := []struct {
		name    string
		with    map[string]string
		profile string
		want    []string
		why     string
	}{
		{name: "clean", want: nil,
			why: "a design with six trials, a warm-up, an overloaded pool, pinning and a smoke profile has nothing to fix"},

		{name: "five trials", with: map[string]string{"trials": "5"},
			want: []string{"trials: 5 trials give no 95% confidence interval of the median"},
			why:  "[min, max] of 5 trials covers the median with 1 - 2/2^5 = 93.8% only; 6 give 96.9%"},
		{name: "three trials, two variants", with: map[string]string{"trials": "3"},
			want: []string{"trials: 3 trials give no 95% confidence interval", "trials: fewer than 4 trials per cell cannot show a significant difference"},
			why:  "3 against 3 trials: the smallest two-sided Mann-Whitney p is 2/C(6,3) = 0.1, so no comparison can be significant"},
		{name: "three trials, one variant", with: map[string]string{"trials": "3", "claims": "",
			"variants": "\n  platform: {target: spring-mvc}"},
			want: []string{"trials: 3 trials give no 95% confidence interval"},
			why:  "with one variant there is nothing to compare, so only the interval is missing"},

		{name: "no warm-up", with: map[string]string{"load": "\n  model: burst\n  burst: 600\n  requests: [{path: \"/io?ms=300\"}]"},
			want: []string{"load.warmup: no warm-up: the first requests run in the interpreter and C1"},
			why:  "seed 000 measured the JIT warming up instead of the server"},
		{name: "fixed warm-up", with: map[string]string{"load": "\n  model: burst\n  burst: 600\n  requests: [{path: \"/io?ms=300\"}]\n  warmup: 5s"},
			want: []string{"load.warmup: a fixed warm-up of 5s"},
			why:  "a variant whose JIT needs longer than a fixed warm-up is measured warming up, biasing the ratio (issue 20)"},
		{name: "warm-up max close to min", with: map[string]string{"load": "\n  model: burst\n  burst: 600\n  requests: [{path: \"/io?ms=300\"}]\n  warmup: {min: 10s, max: 15s, until: steady}"},
			want: []string{"load.warmup.max: 15s leaves little room above min 10s"},
			why:  "a fork that needs a little longer than min would reach max and be measured unsteady"},
		{name: "a timed window of 6 s is 4 points", with: map[string]string{"iterations": "2", "load": "\n  model: closed\n  users: 400\n  duration: 6s\n  requests: [{path: \"/io?ms=300\"}]\n  warmup: {until: steady}", "claims": ""},
			want: []string{"iterations: each fork gives 8 point(s)"},
			why:  "two windows of 6 s give 2 x (6 - 2) per-second points: the partial first and last second are left out"},
		{name: "three bursts per fork", with: map[string]string{"iterations": "3"},
			want: []string{"iterations: each fork gives 3 point(s)"},
			why:  "PELT cannot tell a warm-up from noise on 3 points (statistics review §3.5)"},
		{name: "a timed window of 30 s is 28 points", with: map[string]string{"iterations": "1", "load": "\n  model: closed\n  users: 400\n  duration: 30s\n  requests: [{path: \"/io?ms=300\"}]\n  warmup: {until: steady}", "claims": ""},
			why: "a steady load is classified on its per-second series: 30 seconds, less the partial first and last, are 28 points"},
		{name: "every variant measures its start", with: map[string]string{"iterations": "1", "load": "\n  model: burst\n  burst: 600\n  requests: [{path: \"/io?ms=300\"}]",
			"variants": "\n  platform: {target: spring-mvc, measure: cold, properties: {spring.threads.virtual.enabled: \"false\"}}\n  virtual: {target: spring-mvc, measure: cold, properties: {spring.threads.virtual.enabled: \"true\"}}"},
			why: "measure: cold means the start is the measurement: no warm-up and no steady state to ask for"},
		{name: "zero warm-up", with: map[string]string{"load": "\n  model: burst\n  burst: 600\n  requests: [{path: \"/io?ms=300\"}]\n  warmup: 0s"},
			want: []string{"load.warmup: no warm-up"},
			why:  "warmup: 0s is the same as none"},

		{name: "one fork, many iterations", with: map[string]string{"trials": "1", "iterations": "6"},
			want: []string{"trials: 1 trial give no 95% confidence interval", "trials: fewer than 4 trials per cell", "trials: 1 fresh JVM(s) with 6 iteration(s) each", "iterations: each fork gives 6 point(s)"},
			why:  "iterations in one JVM inherit its JIT profile and heap, so they are not independent samples"},

		{name: "fresh JVMs but two trials", with: map[string]string{"trials": "2", "profiles": `{smoke: {trials: 2}}`},
			want: []string{"trials: 2 trials give no 95%", "trials: fewer than 4 trials", "trials: 2 fresh JVM(s) with 10 iteration(s) each"},
			why:  "issue 15: a claim on fewer than 3 JVMs may be a difference between JVMs"},
		{name: "trend over two values", with: map[string]string{
			"sweep":  "\n  burst: {load: burst, values: [\"600\", \"1000\"]}",
			"claims": "\n  - {id: t, says: s, check: {metric: wall_ms, variant: platform, increases_over: {burst: [\"600\", \"1000\"]}}, seed: {value: 2, from: x}}"},
			want: []string{"claims[0].check.increases_over.burst: a trend over 2 values is a single comparison"},
			why:  "two points cannot tell a monotone trend from noise; the grammar allows 2, lint asks for 3"},
		{name: "absolute claim over two points on five forks", with: map[string]string{"trials": "5",
			"sweep":  "\n  burst: {load: burst, values: [\"600\", \"1000\"]}",
			"claims": "\n  - {id: zero, says: s, check: {metric: errors, variant: virtual, at_most: 0}, seed: {value: 0, from: x}}"},
			want: []string{"trials: 5 trials give no 95% confidence interval"},
			why:  "five zero-error forks at each of two loads: 1/32 at each, and a claim on every point is an intersection-union test, uncorrected, so it can be decided"},
		{name: "absolute claim on one point on five forks", with: map[string]string{"trials": "5",
			"sweep":  "\n  burst: {load: burst, values: [\"600\", \"1000\"]}",
			"claims": "\n  - {id: zero, says: s, check: {metric: errors, variant: virtual, where: {burst: [\"1000\"]}, at_most: 0}, seed: {value: 0, from: x}}"},
			want: []string{"trials: 5 trials give no 95% confidence interval"},
			why:  "one point: 1/32 is below 0.05, so the claim can be decided"},
		{name: "absolute claim on four forks", with: map[string]string{"trials": "4",
			"claims": "\n  - {id: zero, says: s, check: {metric: errors, variant: virtual, at_most: 0}, seed: {value: 0, from: x}}"},
			want: []string{"trials: 4 trials give no 95% confidence interval", `claims[0]: claim "zero" can never be supported on 4 forks: its sign or signed-rank test reaches p = 0.0625 at best, above 0.05 (raise forks to 5)`},
			why:  "the sign test on 4 forks: 1/16"},
		{name: "flat over four levels on three forks", with: map[string]string{"trials": "3",
			"sweep":  "\n  burst: {load: burst, values: [\"600\", \"800\", \"1000\", \"1200\"]}",
			"claims": "\n  - {id: flat, says: s, check: {metric: rps, variant: virtual, flat_over: {burst: [\"600\", \"800\", \"1000\", \"1200\"]}, tolerance: 0.1}, seed: {value: 1, from: x}}"},
			want: []string{"trials: 3 trials give no 95% confidence interval", "trials: fewer than 4 trials"},
			why:  "six pairs of four levels, each at best 1/C(6,3) = 0.05: every pair can reach the level, so no decidability warning"},
		{name: "absolute claim on three forks", with: map[string]string{"trials": "3",
			"claims": "\n  - {id: sign, says: s, check: {metric: errors, variant: virtual, at_most: 0}, seed: {value: 0, from: x}}"},
			want: []string{"trials: 3 trials give no 95% confidence interval", "trials: fewer than 4 trials", `claims[0]: claim "sign" can never be supported on 3 forks: its sign or signed-rank test reaches p = 0.125 at best, above 0.05 (raise forks to 5)`},
			why:  "the sign test on 3 forks: 1/8, however few points"},
		{name: "claim without seed figure", with: map[string]string{"claims": "\n  - {id: v, says: s, check: {metric: rps, compare: [virtual, platform], at_least: 1.2}}"},
			want: []string{`claims[0]: claim "v" has no seed: figure`},
			why:  "the report shows the write-up's number beside ours"},
		{name: "JVM options that run programs", with: map[string]string{"variants": "\n  platform: {target: spring-mvc, jvm: [-Xmx1g, \"-XX:OnOutOfMemoryError=kill -9 %p\", -javaagent:/tmp/a.jar], properties: {spring.threads.virtual.enabled: \"false\"}}\n  virtual: {target: spring-mvc, jvm: [-jar, /tmp/other.jar], env: {JAVA_TOOL_OPTIONS: -agentlib:x}, properties: {spring.threads.virtual.enabled: \"true\"}}"},
			want: []string{`variants.platform.jvm[1]: JVM option "-XX:OnOutOfMemoryError=kill -9 %p" runs a shell command`, `variants.platform.jvm[2]: JVM option "-javaagent:/tmp/a.jar" loads an agent`,
				`variants.virtual.jvm[0]: JVM option "-jar" replaces the target's jar`, "variants.virtual.env.JAVA_TOOL_OPTIONS: JAVA_TOOL_OPTIONS adds JVM options"},
			why: "issue 15's trust model: a manifest is code, and what runs programs must be visible in review"},
		{name: "JDK the targets cannot run on", with: map[string]string{"variants": "\n  platform: {target: spring-mvc, jdk: 17, properties: {spring.threads.virtual.enabled: \"false\"}}\n  virtual: {target: spring-mvc, jdk: 21, properties: {spring.threads.virtual.enabled: \"true\"}}"},
			want: []string{"variants.platform.jdk: the built-in targets are compiled for Java 21 (virtual threads), so a variant on JDK 17 is skipped at every run"},
			why:  "a variant that can never run makes every claim reading it not applicable; JDK 21 (the virtual variant) is fine"},
		{name: "seed's Spring Boot line not run", with: map[string]string{"source": `"002: the loom-webflux-benchmarks README"`},
			want: []string{"spring_boot: seed 002 ran Spring Boot 4.1.0, but no variant here runs the 4.1 line (they run 4.0.7)"},
			why:  "the default 4.0.7 is not the line seed 002 ran: a difference from the seed could be the Boot's"},
		{name: "seed's Spring Boot line", with: map[string]string{"source": `"002: the loom-webflux-benchmarks README"`, "spring_boot": "4.1"},
			why: "the manifest runs the seed's line (4.1.2 for 4.1.0): quiet"},
		{name: "seed's line on one variant", with: map[string]string{"source": `"004: devdojo"`,
			"variants": "\n  platform: {target: spring-mvc, spring_boot: \"3.5\", properties: {spring.threads.virtual.enabled: \"false\"}}\n  virtual: {target: spring-mvc, properties: {spring.threads.virtual.enabled: \"true\"}}"},
			why: "a version experiment runs the seed's line beside others: one variant on it is enough"},
		{name: "burst below the pool", with: map[string]string{"load": "\n  model: burst\n  burst: 150\n  requests: [{path: \"/io?ms=300\"}]\n  warmup: {until: steady}"},
			want: []string{"load.burst: 150 concurrent requests never exceed variant platform's 200 Tomcat threads"},
			why:  "every request gets a platform thread at once, so nothing queues (seed 000's 8-request flake)"},
		{name: "burst equal to the pool", with: map[string]string{"load": "\n  model: burst\n  burst: 200\n  requests: [{path: \"/io?ms=300\"}]\n  warmup: {until: steady}"},
			want: []string{"load.burst: 200 concurrent requests never exceed variant platform's 200 Tomcat threads"},
			why:  "200 requests on 200 threads still never wait for one"},
		{name: "burst one above the pool", with: map[string]string{"load": "\n  model: burst\n  burst: 201\n  requests: [{path: \"/io?ms=300\"}]\n  warmup: {until: steady}"},
			want: nil,
			why:  "the 201st request has to queue: the boundary is exclusive"},
		{name: "raised Tomcat pool", with: map[string]string{"variants": "\n  platform: {target: spring-mvc, properties: {server.tomcat.threads.max: \"800\"}}\n  virtual: {target: spring-mvc, properties: {spring.threads.virtual.enabled: \"true\"}}"},
			want: []string{"load.burst: 600 concurrent requests never exceed variant platform's 800 Tomcat threads"},
			why:  "the pool is whatever server.tomcat.threads.max says, not always 200"},
		{name: "no platform pool", with: map[string]string{
			"variants": "\n  virtual: {target: spring-mvc, properties: {spring.threads.virtual.enabled: \"true\"}}\n  webflux: {target: spring-webflux}",
			"load":     "\n  model: burst\n  burst: 8\n  requests: [{path: \"/io?ms=300\"}]\n  warmup: {until: steady}", "claims": ""},
			want: nil,
			why:  "virtual threads and Netty's event loop have no thread pool to under-load"},
		{name: "closed users below the pool", with: map[string]string{"load": "\n  model: closed\n  users: 100\n  duration: 30s\n  requests: [{path: \"/io?ms=300\"}]\n  warmup: {until: steady}",
			"claims": "\n  - {id: c, says: s, check: {metric: rps, compare: [virtual, platform], at_least: 1}, seed: {value: 2, from: x}}"},
			want: []string{"load.users: 100 concurrent requests never exceed variant platform's 200 Tomcat threads"},
			why:  "a closed model holds at most users requests in flight"},
		{name: "swept burst starts below the pool", with: map[string]string{"sweep": "\n  burst: {load: burst, values: [\"600\", \"100\", \"1000\"]}"},
			want: []string{"sweep.burst: 100 concurrent requests never exceed variant platform's 200 Tomcat threads"},
			why:  "the smallest swept burst decides, wherever it stands in the list"},

		{name: "background ends early", with: map[string]string{"load": fmt.Sprintf(twoGroups, "20s"), "claims": ""},
			want: []string{`load.groups[1]: background group "background" runs from 0s to 20s, but the measured group "probe" runs from 0s to 30s`},
			why:  "the last 10 s of the measurement would run without the load it is about"},
		{name: "background as long", with: map[string]string{"load": fmt.Sprintf(twoGroups, "30s"), "claims": ""},
			want: nil,
			why:  "a background group covering the whole window is the correct design"},

		{name: "latency claim, closed model", with: map[string]string{
			"load":   "\n  model: closed\n  users: 400\n  duration: 30s\n  requests: [{path: \"/io?ms=300\"}]\n  warmup: {until: steady}",
			"claims": "\n  - {id: tail, says: virtual has the lower tail, check: {metric: p99_ms, compare: [platform, virtual], at_least: 1.2}, seed: {value: 2, from: \"seed 000\"}}"},
			want: []string{`claims[0].check.metric: latency claim "tail" is measured with a closed model only`},
			why:  "a closed loop stops sending while the server stalls, so its p99 hides the stall (coordinated omission)"},
		{name: "latency claim, open model", with: map[string]string{
			"load":   "\n  model: open\n  rate: 500\n  duration: 30s\n  requests: [{path: \"/io?ms=300\"}]\n  warmup: {until: steady}",
			"claims": "\n  - {id: tail, says: virtual has the lower tail, check: {metric: p99_ms, compare: [platform, virtual], at_least: 1.2}, seed: {value: 2, from: \"seed 000\"}}"},
			want: nil,
			why:  "an open model measures latency from the intended send time"},
		{name: "throughput claim, closed model", with: map[string]string{
			"load":   "\n  model: closed\n  users: 400\n  duration: 30s\n  requests: [{path: \"/io?ms=300\"}]\n  warmup: {until: steady}",
			"claims": "\n  - {id: rate, says: virtual serves more, check: {metric: rps, compare: [virtual, platform], at_least: 1.2}, seed: {value: 2, from: \"seed 000\"}}"},
			want: nil,
			why:  "throughput is what a closed model measures well"},

		{name: "no pinning", with: map[string]string{"pinning": ""},
			want: []string{"pinning: the load generator and the target share CPUs without pinning"},
			why:  "a busy generator steals CPU from the server it measures"},
		{name: "target pinned, generator not", with: map[string]string{"pinning": `{target: "1"}`},
			want: []string{"pinning: the load generator and the target share CPUs"},
			why:  "the generator can still land on the target's CPU"},

		{name: "no smoke profile", with: map[string]string{"profiles": `{full: {trials: 10}}`},
			want: []string{"profiles: no smoke profile"},
			why:  "tests need a version of the experiment that runs in seconds"},
		{name: "linted under a profile", with: map[string]string{"profiles": `{full: {trials: 10}}`}, profile: "full",
			want: nil,
			why:  "the smoke check is about the manifest's default form; a profile run does not repeat it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := Lint(lintManifest(t, c.with, c.profile))
			used := make([]bool, len(ws))
			for _, want := range c.want {
				field, fragment, _ := strings.Cut(want, ": ")
				i := -1 // the first warning not yet matched (two may share a field)
				for k, w := range ws {
					if !used[k] && w.Field == field && strings.Contains(w.Msg, fragment) {
						i = k
						break
					}
				}
				if i < 0 {
					t.Errorf("%s: no warning %q in %v", c.why, want, ws)
					continue
				}
				used[i] = true
			}
			for i, w := range ws {
				if !used[i] {
					t.Errorf("%s: unexpected warning %s: %s", c.why, w.Field, w.Msg)
				}
			}
		})
	}
}

// TestLintWarningString: a warning reads like a compiler diagnostic, file
// first, so editors and CI annotate the manifest.
func TestLintWarningString(t *testing.T) {
	ws := Lint(lintManifest(t, map[string]string{"trials": "5"}, ""))
	if len(ws) != 1 {
		t.Fatalf("want the one trials warning, got %v", ws)
	}
	if got, prefix := ws[0].String(), "lint-demo.yaml: trials: warning: 5 trials"; !strings.HasPrefix(got, prefix) {
		t.Errorf("String() = %q, want it to start with %q", got, prefix)
	}
}
