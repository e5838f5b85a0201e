package trial

import (
	"maps"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/replicate"
)

// TestLoadPlanVars: each variant's vars fill its own requests.
func TestLoadPlanVars(t *testing.T) {
	m, err := experiments.Parse("v.yaml", []byte(`name: v
title: t
question: q
variants:
  naive: {command: [x, "{port}"], vars: {cpu: /cpu}}
  offloaded: {command: [x, "{port}"], vars: {cpu: /cpu-offloaded}}
load: {burst: 5, requests: [{path: "{cpu}?iterations=10"}]}
`), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range replicate.Cells(m) {
		p, err := LoadPlan(m, c, "http://127.0.0.1:1", 1)
		if err != nil {
			t.Fatal(err)
		}
		want := c.Variant.Vars["cpu"] + "?iterations=10"
		if got := p.Groups[0].Requests[0].Path; got != want {
			t.Errorf("variant %s requests %q, want %q", c.Variant.Name, got, want)
		}
	}
}

// TestProperties: the variant's properties, then the swept one at the
// cell's point, then the services threadlab started, each later one
// winning over an earlier one of the same name.
func TestProperties(t *testing.T) {
	m, err := experiments.Parse("p.yaml", []byte(`name: p
title: t
question: q
variants:
  mvc: {target: spring-mvc, properties: {a: variant, pool: variant, db: variant}}
sweep:
  pool: {property: pool, values: [5, 20]}
load: {burst: 5, requests: [{path: /}]}
`), "")
	if err != nil && (m == nil || !experiments.HostOnly(err)) {
		t.Fatal(err)
	}
	cells := replicate.Cells(m)
	got := Properties(m, cells[1], map[string]string{"db": "jdbc:postgresql://127.0.0.1/x"})
	want := map[string]string{"a": "variant", "pool": "20", "db": "jdbc:postgresql://127.0.0.1/x"}
	if !maps.Equal(got, want) {
		t.Errorf("properties %v, want %v", got, want)
	}
	if cells[1].Variant.Properties["pool"] != "variant" {
		t.Error("Properties changed the variant's own map")
	}
}
