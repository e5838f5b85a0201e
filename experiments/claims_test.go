package experiments

import (
	"strings"
	"testing"
)

// claimBase has three variants, a property sweep (pool) and a load sweep
// (users); claimYAML puts one claim on line 15.
const claimBase = `name: demo
title: A demo
question: Does it work?
variants:
  platform: {target: spring-mvc}
  virtual: {target: spring-mvc, properties: {spring.threads.virtual.enabled: true}}
  webflux: {target: spring-webflux}
sweep:
  pool: {property: spring.datasource.hikari.maximum-pool-size, values: [200, 400, 800]}
  users: {load: users, values: [10, 20]}
load: {model: closed, duration: 2s, requests: [{path: /io}]}
trials: 3
claims:
  - id: c1
    says: something
`

func claimYAML(check string, extra ...string) string {
	return claimBase + "    check: " + check + "\n" + strings.Join(extra, "")
}

// TestClaimValidation is the claim grammar's table: every form, with the
// position and the fix of each problem. The rows marked "was accepted"
// passed before claim validation moved here.
func TestClaimValidation(t *testing.T) {
	tests := []struct {
		name, why, check string
		extra            []string
		want             []string // substrings of the error; none means valid
	}{
		{name: "compare ok", why: "virtual-rides-the-pool", check: `{metric: rps, compare: [virtual, platform], where: {pool: ["400", "800"]}, at_least: 1.5}`},
		{name: "band ok", why: "within 10% both ways", check: `{metric: p99_ms, compare: [webflux, virtual], at_least: 0.9, at_most: 1.1}`},
		{name: "flat ok", why: "platform-plateaus", check: `{metric: rps, variant: platform, flat_over: {pool: ["200", "400", "800"]}, tolerance: 0.2}`},
		{name: "absolute ok", why: "errors on Netty at most 0: a bound of 0 is a bound", check: `{metric: errors, variant: webflux, at_most: 0}`},
		{name: "trend ok", why: "rps rises with the pool", check: `{metric: rps, variant: virtual, increases_over: {pool: ["200", "400", "800"]}}`},
		{name: "decreasing ok", why: "and the opposite", check: `{metric: p99_ms, variant: virtual, decreases_over: {users: ["10", "20"]}}`},
		{name: "seed and decision ok", why: "the seed figure and a decision picking a variant",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    seed: {value: 2.1, from: \"001: 4,400 vs 2,100 rps\"}\n    decision: {when: blocking I/O, pick: virtual}\n"}},

		{name: "no metric", why: "every check is about one column", check: `{compare: [virtual, platform], at_least: 1.5}`,
			want: []string{"demo.yaml:16:12: claims[0].check.metric: missing (name a trials.csv column"}},
		{name: "typo metric", why: "the message lists the columns", check: `{metric: rsp, compare: [virtual, platform], at_least: 1.5}`,
			want: []string{`demo.yaml:16:21: claims[0].check.metric: unknown metric "rsp" (use one of rps,`}},
		{name: "neither kind", why: "a check must say what it checks", check: `{metric: rps}`,
			want: []string{"claims[0].check: needs compare: [A, B] with at_least/at_most, variant: with flat_over"}},
		{name: "two kinds", why: "one claim, one sentence", check: `{metric: rps, compare: [virtual, platform], at_least: 1.5, variant: platform, flat_over: {pool: ["200", "400"]}}`,
			want: []string{"claims[0].check: mixes compare and flat_over"}},
		{name: "three variants", why: "a ratio has two sides", check: `{metric: rps, compare: [virtual, platform, webflux], at_least: 1}`,
			want: []string{"claims[0].check.compare: needs exactly 2 variants, got 3"}},
		{name: "unknown variant", why: "names must match the variants", check: `{metric: rps, compare: [virtual, loom], at_least: 1}`,
			want: []string{`demo.yaml:16:45: claims[0].check.compare[1]: no variant named "loom" (variants: platform, virtual, webflux)`}},
		{name: "a name that prints like another", why: "virtu\u0430l with a Cyrillic a reads as virtual: spell the code points",
			check: "{metric: rps, compare: [virtu\u0430l, platform], at_least: 1}",
			want:  []string{`no variant named "virtuаl" (variants: platform, virtual, webflux); written as "virtu\u0430l"`}},
		{name: "self (was accepted)", why: "a variant against itself is always a tie", check: `{metric: rps, compare: [virtual, virtual], at_least: 1}`,
			want: []string{`claims[0].check.compare: compares "virtual" with itself`}},
		{name: "no bound", why: "compare alone does not say what is claimed", check: `{metric: rps, compare: [virtual, platform]}`,
			want: []string{"claims[0].check: a comparison needs at_least: or at_most:"}},
		{name: "inverted band (was accepted)", why: "at_least above at_most cannot hold", check: `{metric: rps, compare: [virtual, platform], at_least: 1.2, at_most: 1.1}`,
			want: []string{"claims[0].check.at_most: 1.1 is below at_least 1.2, so nothing can satisfy both (swap them)"}},
		{name: "inverted absolute band", why: "the same for an absolute check", check: `{metric: errors, variant: webflux, at_least: 5, at_most: 1}`,
			want: []string{"claims[0].check.at_most: 1 is below at_least 5"}},
		{name: "negative ratio", why: "ratios of positive metrics are positive", check: `{metric: rps, compare: [virtual, platform], at_least: -1}`,
			want: []string{"claims[0].check.at_least: must be a positive ratio"}},
		{name: "NaN bound (was accepted)", why: "NaN compares false with everything, so it decides nothing", check: `{metric: rps, compare: [virtual, platform], at_least: .nan}`,
			want: []string{"claims[0].check.at_least: NaN is not a finite number"}},
		{name: "infinite bound", why: "neither does infinity", check: `{metric: errors, variant: webflux, at_most: .inf}`,
			want: []string{"claims[0].check.at_most: +Inf is not a finite number"}},
		{name: "tolerance on compare", why: "tolerance belongs to flat_over", check: `{metric: rps, compare: [virtual, platform], at_least: 1, tolerance: 0.1}`,
			want: []string{"claims[0].check.tolerance: only applies to flat_over"}},
		{name: "absolute without bound", why: "a variant alone states nothing", check: `{metric: errors, variant: webflux}`,
			want: []string{`claims[0].check: an absolute check on variant "webflux" needs at_least: or at_most:`}},
		{name: "absolute unknown variant", why: "names must match", check: `{metric: errors, variant: netty, at_most: 0}`,
			want: []string{`claims[0].check.variant: no variant named "netty"`}},
		{name: "flat without variant", why: "flat for whom?", check: `{metric: rps, flat_over: {pool: ["200", "400"]}}`,
			want: []string{"claims[0].check.variant: flat_over needs the variant"}},
		{name: "flat over two keys", why: "one claim per key", check: `{metric: rps, variant: platform, flat_over: {pool: ["200", "400"], users: ["10", "20"]}}`,
			want: []string{"claims[0].check.flat_over: needs exactly one sweep key, got 2"}},
		{name: "flat over unknown key with one value", why: "both problems at once", check: `{metric: rps, variant: platform, flat_over: {threads: ["200"]}}`,
			want: []string{"claims[0].check.flat_over.threads: needs at least 2 values", `claims[0].check.flat_over.threads: "threads" is not a sweep key (sweep keys: pool, users)`}},
		{name: "flat value not swept (was accepted)", why: "a value that is not swept selects no trials", check: `{metric: rps, variant: platform, flat_over: {pool: ["200", "300"]}}`,
			want: []string{`demo.yaml:16:71: claims[0].check.flat_over.pool[1]: "300" is not a value of sweep pool (its values: 200, 400, 800)`}},
		{name: "flat with bound", why: "flat uses tolerance", check: `{metric: rps, variant: platform, flat_over: {pool: ["200", "400"]}, at_least: 1}`,
			want: []string{"claims[0].check.at_least: at_least/at_most do not apply to flat_over"}},
		{name: "negative tolerance", why: "a tolerance is a fraction", check: `{metric: rps, variant: platform, flat_over: {pool: ["200", "400"]}, tolerance: -0.1}`,
			want: []string{"claims[0].check.tolerance: must be a fraction between 0 and 1"}},
		{name: "trend with one value", why: "a trend needs two points at least", check: `{metric: rps, variant: virtual, increases_over: {pool: ["200"]}}`,
			want: []string{"claims[0].check.increases_over.pool: needs at least 2 values, got 1 (list the sweep values; a trend is only convincing over 3 or more)"}},
		{name: "trend repeats a value", why: "a repeated level is not a trend", check: `{metric: rps, variant: virtual, decreases_over: {pool: ["200", "200"]}}`,
			want: []string{`claims[0].check.decreases_over.pool[1]: "200" is listed twice`}},
		{name: "where value not swept (was accepted)", why: "issue 9: an unknown where value passed validation", check: `{metric: rps, compare: [virtual, platform], where: {pool: ["4000"]}, at_least: 1.5}`,
			want: []string{`demo.yaml:16:71: claims[0].check.where.pool[0]: "4000" is not a value of sweep pool`}},
		{name: "where on unknown key and the flat key", why: "where selects points by sweep keys; the flat key is restricted in flat_over",
			check: `{metric: rps, variant: platform, flat_over: {pool: ["200", "400"]}, where: {pool: ["200"], zone: [a], users: []}}`,
			want:  []string{`claims[0].check.where.pool: "pool" is already the flat_over key`, "claims[0].check.where.users: lists no values", `claims[0].check.where.zone: "zone" is not a sweep key`}},
		{name: "unknown group", why: "a group that does not exist measures nothing", check: `{metric: rps, group: background, compare: [virtual, platform], at_least: 1}`,
			want: []string{`claims[0].check.group: no load group named "background" (groups: main)`}},
		{name: "decision picks no variant (was accepted)", why: "the decision table names a variant the reader can run",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    decision: {when: blocking I/O, pick: loom}\n"},
			want: []string{`demo.yaml:17:42: claims[0].decision.pick: no variant named "loom" (pick one of platform, virtual, webflux)`}},
		{name: "preconditions ok", why: "the three forms: a CPU share per core where virtual is measured, a core count, a generator that kept up",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`,
			extra: []string{`    requires: [{metric: target_cpu_pct, variant: virtual, where: {pool: ["800"]}, at_least: 90, per_core: true}, {cores: {at_least: 2}}, {generator: not_saturated}]` + "\n"}},
		{name: "precondition on a non-claimable metric ok", why: "a precondition may read any trials.csv column, such as the host's steal",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{metric: host_steal_pct, at_most: 5}]\n"}},
		{name: "precondition states nothing", why: "a variant alone is no condition",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{variant: virtual}]\n"},
			want: []string{"claims[0].requires[0]: states no condition (write one of {metric: target_cpu_pct"}},
		{name: "precondition mixes forms", why: "one condition per list item, so each failure has one reason",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{metric: rps, at_least: 1, cores: {at_least: 2}}]\n"},
			want: []string{"claims[0].requires[0]: mixes metric and cores; a precondition is one of them"}},
		{name: "precondition unknown variant", why: "names must match the variants, with the position of the name",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{metric: target_cpu_pct, variant: loom, at_least: 90}]\n"},
			want: []string{`demo.yaml:17:50: claims[0].requires[0].variant: no variant named "loom" (variants: platform, virtual, webflux)`}},
		{name: "precondition metric without bound", why: "a metric alone states nothing",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{metric: target_cpu_pct}]\n"},
			want: []string{"claims[0].requires[0]: a metric precondition needs at_least: or at_most:"}},
		{name: "precondition unknown metric", why: "the message lists the columns",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{metric: cpu, at_least: 1}]\n"},
			want: []string{`claims[0].requires[0].metric: unknown metric "cpu" (use one of rps,`}},
		{name: "per_core on a rate", why: "only a share of one core can be read per core",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{metric: rps, at_least: 1, per_core: true}]\n"},
			want: []string{"claims[0].requires[0].per_core: rps is not a share of one core", "target_cpu_pct, target_peak_cpu_pct, gen_cpu_pct"}},
		{name: "precondition inverted band", why: "nothing satisfies at_least 50 and at_most 10",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{metric: gen_cpu_pct, at_least: 50, at_most: 10}]\n"},
			want: []string{"claims[0].requires[0].at_most: 10 is below at_least 50"}},
		{name: "precondition NaN bound", why: "NaN compares false with everything",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{metric: gen_cpu_pct, at_most: .nan}]\n"},
			want: []string{"claims[0].requires[0].at_most: NaN is not a finite number"}},
		{name: "cores without bound", why: "cores alone states nothing",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{cores: {}}]\n"},
			want: []string{"claims[0].requires[0].cores: needs at_least: or at_most: (e.g. {cores: {at_least: 4}})"}},
		{name: "cores at least 0", why: "every host has a CPU",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{cores: {at_least: 0}}]\n"},
			want: []string{"claims[0].requires[0].cores.at_least: must be 1 or more, got 0"}},
		{name: "cores inverted", why: "no host has at least 4 and at most 2 CPUs",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{cores: {at_least: 4, at_most: 2}}]\n"},
			want: []string{"claims[0].requires[0].cores.at_most: 2 is below at_least 4"}},
		{name: "cores fraction", why: "a CPU count is whole",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{cores: {at_least: 2.5}}]\n"},
			want: []string{"claims[0].requires[0].cores.at_least: 2.5 is not a whole number"}},
		{name: "cores with a variant", why: "the host's CPUs are the same for every variant",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{cores: {at_least: 2}, variant: virtual}]\n"},
			want: []string{"claims[0].requires[0].variant: does not apply to a cores precondition (remove it)"}},
		{name: "generator typo", why: "the one generator condition is named in the fix",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{generator: saturated}]\n"},
			want: []string{`claims[0].requires[0].generator: "saturated" is not a generator precondition (write generator: not_saturated)`}},
		{name: "generator with a bound", why: "the generator rule has no threshold to set",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{generator: not_saturated, at_most: 1}]\n"},
			want: []string{"claims[0].requires[0].at_most: does not apply to a generator precondition (remove it)"}},
		{name: "generator unknown group", why: "a group that does not exist has no windows",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{generator: not_saturated, group: bg}]\n"},
			want: []string{`claims[0].requires[0].group: no load group named "bg" (groups: main)`}},
		{name: "precondition where not swept", why: "a value that is not swept selects no cell, so the precondition would rest on nothing",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{`    requires: [{metric: target_cpu_pct, at_least: 90, where: {pool: ["900"], zone: [a]}}]` + "\n"},
			want: []string{`claims[0].requires[0].where.pool[0]: "900" is not a value of sweep pool (its values: 200, 400, 800)`, `claims[0].requires[0].where.zone: "zone" is not a sweep key`}},
		{name: "precondition unknown key", why: "strict keys at every depth, with a suggestion",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    requires: [{metrc: target_cpu_pct, at_least: 90}]\n"},
			want: []string{`claims[0].requires[0].metrc: unknown key "metrc", did you mean "metric"?`}},
		{name: "seed NaN", why: "the seed's figure is shown beside ours",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.5}`, extra: []string{"    seed: {value: .nan, from: x}\n"},
			want: []string{"claims[0].seed.value: NaN is not a finite number"}},
		{name: "rule, design fact and differs ok", why: "the fields a seed claim carries",
			check: `{metric: rps, compare: [virtual, platform], at_least: 1.1}`, extra: []string{"    rule: direction\n    differs: {cause: scale, why: the host has 2 cores}\n    seed: {row: \"001.10\", from: \"001: no figure\"}\n"}},
		{name: "unknown rule", why: "rules are a closed set, named in the message", check: `{metric: rps, compare: [virtual, platform], at_least: 1.1}`,
			extra: []string{"    rule: hunch\n"}, want: []string{`claims[0].rule: "hunch" is not a threshold rule (use one of below-mme, design, direction,`}},
		{name: "unknown differs cause", why: "a difference is a finding, the host's scale or the design", check: `{metric: rps, compare: [virtual, platform], at_least: 1.1}`,
			extra: []string{"    differs: {cause: luck, why: it happened}\n"}, want: []string{`claims[0].differs.cause: "luck" is not a cause (use one of finding, scale, design)`}},
		{name: "differs without why", why: "the sentence is the point", check: `{metric: rps, compare: [virtual, platform], at_least: 1.1}`,
			extra: []string{"    differs: {cause: scale}\n"}, want: []string{"claims[0].differs.why: missing"}},
		{name: "scaled without value", why: "a scaled figure scales the seed's own", check: `{metric: rps, compare: [virtual, platform], at_least: 1.1}`,
			extra: []string{"    seed: {scaled: 2, from: \"001: x\"}\n"}, want: []string{"claims[0].seed.scaled: needs a finite number and the seed's own value beside it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("demo.yaml", []byte(claimYAML(tt.check, tt.extra...)), "")
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("%s: valid claim refused: %v", tt.why, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("%s: no error", tt.why)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s:\n got: %v\nwant: %s", tt.why, err, w)
				}
			}
		})
	}
}

// TestClaimsAgainstTheirOwnSweep: a profile that narrows the sweep and
// keeps the base claims is valid (those claims are undecided there), but
// claims a profile writes itself must name its own sweep's values.
func TestClaimsAgainstTheirOwnSweep(t *testing.T) {
	base := claimYAML(`{metric: rps, compare: [virtual, platform], where: {pool: ["800"]}, at_least: 1.5}`)
	narrow := base + "profiles:\n  smoke: {sweep: {pool: {values: [200]}}}\n"
	if _, err := Parse("demo.yaml", []byte(narrow), "smoke"); err != nil {
		t.Errorf("base claims under a narrowing profile refused: %v", err)
	}
	own := base + "profiles:\n  smoke:\n    sweep: {pool: {values: [200]}}\n    claims: [{id: c, says: s, check: {metric: rps, compare: [virtual, platform], where: {pool: [\"800\"]}, at_least: 1}}]\n"
	_, err := Parse("demo.yaml", []byte(own), "smoke")
	if err == nil || !strings.Contains(err.Error(), `claims[0].check.where.pool[0]: "800" is not a value of sweep pool (its values: 200)`) {
		t.Errorf("a profile's own claim outside its sweep: %v", err)
	}
}
