package verdicts

import (
	"slices"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// preManifest has two variants over a users sweep and one claim that
// compares them at users=2500, like concurrency-sweep's virtual-six-times.
const preManifest = `name: pre
title: preconditions
question: does the claim apply here?
variants:
  platform: {command: [./server, "{port}"]}
  virtual: {command: [./server, "{port}"]}
sweep:
  users: {load: users, values: ["100", "2500"]}
load: {model: closed, users: 10, duration: 2s, requests: [{path: /io}]}
forks: 3
claims:
  - id: c
    says: virtual threads reach the CPU limit
    check: {metric: rps, compare: [virtual, platform], where: {users: ["2500"]}, at_least: 1.5}
`

// preTrials: three forks per cell with the given target and generator
// CPU; extra rows are invalid windows whose generator saturated.
func preTrials() []record.Trial {
	var out []record.Trial
	seq := 0
	add := func(variant, point string, rps, cpu, gen float64, forks, saturated int) {
		for f := 1; f <= forks; f++ {
			seq++
			out = append(out, record.Trial{Variant: variant, Point: point, Group: "main", Fork: f, Trial: f, Iteration: 1, Seq: seq,
				Valid: true, Requests: 100, RPS: rps, TargetCPUPct: cpu, GenCPUPct: gen})
		}
		for i := 0; i < saturated; i++ {
			seq++
			out = append(out, record.Trial{Variant: variant, Point: point, Group: "main", Fork: forks + i + 1, Iteration: 1, Seq: seq,
				Valid: false, Reason: "load generator saturated", GenSaturated: true, RPS: rps})
		}
	}
	add("platform", "users=100", 1000, 20, 30, 3, 0)
	add("platform", "users=2500", 2000, 100, 60, 3, 3) // 3 of 6 windows saturated
	add("virtual", "users=2500", 6000, 180, 60, 3, 1)  // 1 of 4
	return out                                         // virtual at users=100 never ran
}

// req decodes one precondition as a manifest would; a row's precondition
// must be valid (the grammar is tested in experiments).
func req(t *testing.T, r string) experiments.Precondition {
	t.Helper()
	m, err := experiments.Parse("pre.yaml", []byte(strings.Replace(preManifest, "at_least: 1.5}\n", "at_least: 1.5}\n    requires: ["+r+"]\n", 1)), "")
	if err != nil {
		t.Fatalf("precondition %s: %v", r, err)
	}
	return m.Claims[0].Requires[0]
}

// TestPreconditions: each form on this run's data and host, which cells
// each reads by default, and what a failure or an unknown says.
func TestPreconditions(t *testing.T) {
	m, err := experiments.Parse("pre.yaml", []byte(preManifest), "")
	if err != nil {
		t.Fatal(err)
	}
	two := Host{Cores: 2}
	tests := []struct {
		name     string
		why      string
		requires []string
		host     Host
		failed   string // fragment; "" when the claim applies
		unknown  string // fragment; "" when everything could be checked
		lines    []string
	}{
		{name: "no preconditions", why: "a claim without requires: applies everywhere, with no extra evidence", host: two},
		{name: "CPU per core holds", why: "180% of one core on 2 CPUs is 90 per CPU, above 80",
			requires: []string{`{metric: target_cpu_pct, variant: virtual, at_least: 80, per_core: true}`}, host: two,
			lines: []string{"precondition: target_cpu_pct at least 80 per CPU (median over forks): virtual users=2500: 180 (90 per CPU on 2), holds"}},
		{name: "CPU per core fails on this host", why: "seed 004's 366% of 400%: a host that reaches 90% per CPU only is not the seed's situation",
			requires: []string{`{metric: target_cpu_pct, variant: virtual, at_least: 95, per_core: true}`}, host: two,
			failed: "target_cpu_pct of virtual users=2500 is 180 (90 per CPU on 2), below the at least 95 per CPU the claim needs"},
		{name: "variant defaults to the check's", why: "without variant: every variant the check compares must meet the bound; platform's 100 does not",
			requires: []string{`{metric: target_cpu_pct, at_least: 150}`}, host: two,
			failed: "target_cpu_pct of platform users=2500 is 100, below the at least 150"},
		{name: "points default to the check's where", why: "platform's 20% at users=100 is outside the claim, so it does not count",
			requires: []string{`{metric: target_cpu_pct, variant: platform, at_least: 50}`}, host: two,
			lines: []string{"platform users=2500: 100, holds"}},
		{name: "its own where replaces the check's", why: "a precondition may look at another point, here the low-load one",
			requires: []string{`{metric: target_cpu_pct, variant: platform, where: {users: ["100"]}, at_least: 50}`}, host: two,
			failed: "target_cpu_pct of platform users=100 is 20, below the at least 50"},
		{name: "at_most holds", why: "a generator using 60% of one core left room",
			requires: []string{`{metric: gen_cpu_pct, at_most: 150}`}, host: two,
			lines: []string{"gen_cpu_pct at most 150 (median over forks): platform users=2500: 60, virtual users=2500: 60, holds"}},
		{name: "at_most fails", why: "the bound is on the median, and 60 is above 50",
			requires: []string{`{metric: gen_cpu_pct, variant: virtual, at_most: 50}`}, host: two,
			failed: "gen_cpu_pct of virtual users=2500 is 60, above the at most 50 the claim needs"},
		{name: "per core on an unknown host", why: "without a core count a share per CPU cannot be read: unknown, not failed",
			requires: []string{`{metric: target_cpu_pct, variant: virtual, at_least: 80, per_core: true}`},
			unknown:  "the target's CPU count is unknown"},
		{name: "no data is unknown", why: "virtual never ran at users=100: the precondition cannot be checked there",
			requires: []string{`{metric: target_cpu_pct, variant: virtual, where: {users: ["100"]}, at_least: 1}`}, host: two,
			unknown: "virtual users=100 has no valid target_cpu_pct"},
		{name: "cores hold", why: "2 CPUs meet at least 2",
			requires: []string{`{cores: {at_least: 2}}`}, host: two, lines: []string{"precondition: the target has at least 2 CPUs: it had 2, holds"}},
		{name: "cores fail", why: "seed 000's event-loop count needs more CPUs than this host",
			requires: []string{`{cores: {at_least: 4, at_most: 64}}`}, host: two, failed: "it needs 4 to 64 CPUs for the target, and this host gave it 2"},
		{name: "cores unknown", why: "a run without a fingerprint has no core count",
			requires: []string{`{cores: {at_most: 8}}`}, unknown: "CPU count is unknown"},
		{name: "generator kept up", why: "1 saturated window of 4 was re-run; the host could drive the load",
			requires: []string{`{generator: not_saturated, variant: virtual}`}, host: two,
			lines: []string{"virtual users=2500: 1 of 4, holds"}},
		{name: "generator saturated in half the windows", why: "platform's valid windows are the lucky half",
			requires: []string{`{generator: not_saturated}`}, host: two,
			failed: "the load generator saturated in 3 of 6 windows of platform users=2500"},
		{name: "generator on a cell that never ran", why: "no window, no knowledge",
			requires: []string{`{generator: not_saturated, variant: virtual, where: {users: ["100"]}}`}, host: two,
			unknown: "no window of virtual users=100 ran"},
		{name: "a skipped variant", why: "a variant whose JDK is missing makes the claim not applicable, before any precondition",
			requires: []string{`{cores: {at_least: 1}}`}, host: Host{Cores: 2, Skipped: map[string]string{"virtual": "jdk: 21: no JDK 21 is installed."}},
			failed: "variant virtual did not run on this host (jdk: 21: no JDK 21 is installed)",
			lines:  []string{"precondition: variant virtual runs here: fails, it was skipped"}},
		{name: "first failure wins, every line kept", why: "the reason names one failure; the evidence lists them all",
			requires: []string{`{cores: {at_least: 1}}`, `{cores: {at_least: 4}}`, `{metric: gen_cpu_pct, at_most: 10}`}, host: two,
			failed: "it needs at least 4 CPUs", lines: []string{"it had 2, holds", "at least 4 CPUs: it had 2, fails", "gen_cpu_pct at most 10 (median over forks)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := m.Claims[0]
			c.Requires = nil
			for _, r := range tt.requires {
				c.Requires = append(c.Requires, req(t, r))
			}
			trials := preTrials()
			valid := GroupTrials(slices.Clone(trials))
			a := checkPreconditions(m, c, NewReading(m, valid, valid, nil, nil), trials, tt.host)
			for _, x := range []struct{ what, got, want string }{{"failed", a.failed, tt.failed}, {"unknown", a.unknown, tt.unknown}} {
				if (x.want == "") != (x.got == "") || !strings.Contains(x.got, x.want) {
					t.Errorf("%s: %s = %q, want %q", tt.why, x.what, x.got, x.want)
				}
			}
			if len(a.evidence) < len(tt.requires) {
				t.Errorf("%s: %d evidence lines for %d preconditions: %q", tt.why, len(a.evidence), len(tt.requires), a.evidence)
			}
			all := strings.Join(a.evidence, "\n")
			for _, l := range tt.lines {
				if !strings.Contains(all, l) {
					t.Errorf("%s: evidence lacks %q:\n%s", tt.why, l, all)
				}
			}
		})
	}
}

// TestApplyPreconditions: what a failed, an unknown and a holding
// precondition do to a verdict.
func TestApplyPreconditions(t *testing.T) {
	supported := func() stats.Verdict {
		return stats.Verdict{ID: "c", Status: stats.Supported, Reason: "supported: ratio 2.", Evidence: []string{"A/B 2"}}
	}
	tests := []struct {
		name, why string
		v         stats.Verdict
		a         applicability
		status    string
		reason    string
		leans     string
		evidence  []string // in order
		open      bool
	}{
		{name: "failed", why: "not applicable, not contradicted; what the data alone said stays in the evidence",
			v: supported(), a: applicability{failed: "it needs at least 4 CPUs", evidence: []string{"precondition: cores"}},
			status: stats.NotApplicable, reason: "not applicable here: it needs at least 4 CPUs",
			evidence: []string{"precondition: cores", "set aside: the data alone say supported (supported: ratio 2)", "A/B 2"}},
		{name: "failed on an open verdict", why: "more trials on this host cannot make the precondition hold, so the claim is decided",
			v: stats.Verdict{Status: stats.Inconclusive, Leans: stats.Supported, Open: true}, a: applicability{failed: "x"},
			status: stats.NotApplicable, reason: "not applicable here: x", evidence: []string{"set aside: the data alone say inconclusive"}},
		{name: "unknown on a decided verdict", why: "a claim whose precondition could not be checked must not count as supported",
			v: supported(), a: applicability{unknown: "no core count", evidence: []string{"precondition: unknown"}},
			status: stats.Inconclusive, leans: stats.Supported, reason: "a precondition could not be checked: no core count",
			evidence: []string{"precondition: unknown", "a precondition could not be checked: no core count", "A/B 2"}},
		{name: "unknown on an inconclusive verdict", why: "nothing to hold back: the verdict keeps its own reason",
			v: stats.Verdict{Status: stats.Inconclusive, Reason: "too few forks", Open: true}, a: applicability{unknown: "no data"},
			status: stats.Inconclusive, reason: "too few forks", open: true},
		{name: "holds", why: "a supported claim whose preconditions hold stays supported, their lines after its own",
			v: supported(), a: applicability{evidence: []string{"precondition: cores hold"}},
			status: stats.Supported, reason: "supported: ratio 2.", evidence: []string{"A/B 2", "precondition: cores hold"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.v
			applyPreconditions(&v, tt.a)
			if v.Status != tt.status || v.Reason != tt.reason || v.Leans != tt.leans || v.Open != tt.open {
				t.Errorf("%s: got %s %q leans %q open %v; want %s %q leans %q open %v", tt.why, v.Status, v.Reason, v.Leans, v.Open, tt.status, tt.reason, tt.leans, tt.open)
			}
			for i, e := range tt.evidence {
				if i >= len(v.Evidence) || !strings.HasPrefix(v.Evidence[i], e) {
					t.Errorf("%s: evidence[%d] should start %q; evidence %q", tt.why, i, e, v.Evidence)
				}
			}
		})
	}
}

// TestHostFacts: where the core count comes from.
func TestHostFacts(t *testing.T) {
	m, err := experiments.Parse("pre.yaml", []byte(preManifest), "")
	if err != nil {
		t.Fatal(err)
	}
	pinned := *m
	pinned.Pinning.Target = "1"
	meta := record.Meta{Skipped: []record.SkippedVariant{{Variant: "virtual", JDK: 21, Reason: "no JDK 21"}}}
	tests := []struct {
		name, why   string
		m           *experiments.Manifest
		fingerprint string
		cores       int
	}{
		{"affinity", "the CPUs threadlab may use, not the machine's", m, `{"cpu": {"threads": 4, "allowed": "0-1"}}`, 2},
		{"threads", "a fingerprint without an affinity falls back to the logical CPUs", m, `{"cpu": {"threads": 4}}`, 4},
		{"pinned", "a pinned target may use its CPU list only", &pinned, `{"cpu": {"threads": 4, "allowed": "0-3"}}`, 1},
		{"none", "no fingerprint: unknown", m, ``, 0},
		{"broken", "a fingerprint that does not parse: unknown, not a crash", m, `{"cpu": [`, 0},
	}
	for _, tt := range tests {
		h := HostFacts(tt.m, []byte(tt.fingerprint), meta)
		if h.Cores != tt.cores || h.Skipped["virtual"] != "no JDK 21" {
			t.Errorf("%s: %s: got %d cores, skipped %v; want %d", tt.name, tt.why, h.Cores, h.Skipped, tt.cores)
		}
	}
}

// TestNotApplicableVerdict: Evaluate writes not-applicable to
// verdicts.json for a claim reading a skipped variant, with the reason.
func TestNotApplicableVerdict(t *testing.T) {
	m, err := experiments.Parse("pre.yaml", []byte(preManifest), "")
	if err != nil {
		t.Fatal(err)
	}
	var platformOnly []record.Trial
	for _, x := range preTrials() {
		if x.Variant == "platform" {
			platformOnly = append(platformOnly, x)
		}
	}
	vs := Evaluate(m, platformOnly, stats.Options{Seed: 1}, Host{Cores: 2, Skipped: map[string]string{"virtual": "jdk: 21: no JDK 21 is installed"}})
	if len(vs) != 1 || vs[0].Status != "not-applicable" || vs[0].Open ||
		vs[0].Reason != "not applicable here: variant virtual did not run on this host (jdk: 21: no JDK 21 is installed)" {
		t.Fatalf("verdicts = %+v", vs)
	}
}
