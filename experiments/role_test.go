package experiments

import (
	"strings"
	"testing"
)

// TestVariantRole: role: control marks a reference the others are read
// against. It is the one value, a decision may not pick a control, at
// least one variant must be a choice, and a role changes no plan.
func TestVariantRole(t *testing.T) {
	const base = `name: demo
title: A demo
question: Does it work?
variants:
  platform: {target: spring-mvc}
  baseline: {target: spring-mvc, role: control}
load: {model: burst, burst: 300, requests: [{path: "/io?ms=10"}], warmup: 1s}
trials: 3
claims:
  - id: c1
    says: something
    check: {metric: wall_ms, compare: [platform, baseline], at_least: 1.1}
`
	for _, tc := range []struct {
		name, why, from, to string
		want                string // a substring of the error; "" means valid
	}{
		{"a control beside a choice", "the event-loop-starvation shape", "", "", ""},
		{"unknown role", "only control is known, and the message names it and the field's line",
			"role: control", "role: reference", `demo.yaml:6:40: variants.baseline.role: "reference" is not known (the one value is control`},
		{"every variant a control", "then there is nothing to choose between",
			"platform: {target: spring-mvc}", "platform: {target: spring-mvc, role: control}", "variants: every variant is a control (role: control)"},
		{"a decision picks a control", "the decision table names something a reader can run",
			"at_least: 1.1}\n", "at_least: 1.1}\n    decision: {when: always, pick: baseline}\n", `claims[0].decision.pick: "baseline" is a control (role: control)`},
		{"a decision picks a choice", "and picking the approach is fine",
			"at_least: 1.1}\n", "at_least: 1.1}\n    decision: {when: always, pick: platform}\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(base, tc.from, tc.to, 1)
			m, err := Parse("demo.yaml", []byte(src), "")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("%s: %v", tc.why, err)
				}
				if v, _ := m.Variant("baseline"); v.Role != RoleControl {
					t.Errorf("%s: baseline role %q, want control", tc.why, v.Role)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: error %v\nwant it to contain %q", tc.why, err, tc.want)
			}
		})
	}

	// A role only describes: the plan with and without it is the same
	// measurement, so marking a published run's baseline a control needs
	// no new run (report --reevaluate --claims carries it).
	with, err := Parse("demo.yaml", []byte(base), "")
	if err != nil {
		t.Fatal(err)
	}
	without, err := Parse("demo.yaml", []byte(strings.Replace(base, ", role: control", "", 1)), "")
	if err != nil {
		t.Fatal(err)
	}
	if diff, same, err := SameMeasurement(without, with); err != nil || !same {
		t.Errorf("a role changed the measurement: %s %v", diff, err)
	}
	if f, err := ChangedFields(without, with); err != nil || len(f) != 0 {
		t.Errorf("ChangedFields = %v, %v; want none for a role", f, err)
	}
}
