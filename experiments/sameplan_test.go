package experiments

import (
	"slices"
	"strings"
	"testing"
)

// catalogIOBound is the catalog's io-bound manifest, loaded afresh.
func catalogIOBound(t *testing.T) *Manifest {
	t.Helper()
	m, err := Load("../experiments/io-bound.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSameMeasurement(t *testing.T) {
	base := func() *Manifest { return catalogIOBound(t) }
	cases := []struct {
		name string
		edit func(m *Manifest)
		same bool
		want string // in the diff
	}{
		{"identical", func(*Manifest) {}, true, ""},
		{"claims rewritten: judged, not measured", func(m *Manifest) { m.Claims = m.Claims[:1] }, true, ""},
		{"title, question, descriptions and seed: description only", func(m *Manifest) {
			m.Title, m.Question, m.Seed = "x", "y", 42
			m.Variants[0].Describe = "z"
		}, true, ""},
		{"more forks: another plan", func(m *Manifest) { m.Forks.Min, m.Forks.Max = 9, 9 }, false, "forks"},
		{"a JVM option: another measurement", func(m *Manifest) { m.Variants[0].JVM = append(m.Variants[0].JVM, "-Xmx1g") }, false, "jvm"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run, edited := base(), base()
			c.edit(edited)
			diff, same, err := SameMeasurement(run, edited)
			if err != nil {
				t.Fatal(err)
			}
			if same != c.same {
				t.Fatalf("same = %v, want %v (diff %q)", same, c.same, diff)
			}
			if !c.same && !strings.Contains(diff, c.want) {
				t.Errorf("diff %q does not show %q", diff, c.want)
			}
		})
	}
}

func TestChangedFields(t *testing.T) {
	base := func() *Manifest { return catalogIOBound(t) }
	cases := []struct {
		name   string
		edit   func(m *Manifest)
		fields []string
		claims bool
	}{
		{"identical: nothing to say", func(*Manifest) {}, nil, false},
		{"descriptions and the drawn seed are no change of plan", func(m *Manifest) {
			m.Title, m.Notes, m.Seed = "x", "n", 42
			m.Variants[0].Describe = "z"
		}, nil, false},
		{"claims alone: judged differently, measured the same", func(m *Manifest) { m.Claims = m.Claims[:1] }, nil, true},
		{"a claim's tolerance counts as a claims change", func(m *Manifest) { m.Claims[0].Check.Tolerance += 0.05 }, nil, true},
		{"forks and iterations: two fields, in the manifest's order", func(m *Manifest) {
			m.Forks.Min, m.Forks.Max = 9, 9
			m.Iterations = 7
		}, []string{"forks", "iterations"}, false},
		{"a JVM option is the variants' change", func(m *Manifest) { m.Variants[0].JVM = append(m.Variants[0].JVM, "-Xmx1g") }, []string{"variants"}, false},
		{"the warm-up is the load's change", func(m *Manifest) { m.Load.Warmup.Max *= 2 }, []string{"load"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run, edited := base(), base()
			c.edit(edited)
			got, err := ChangedFields(run, edited)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.fields) {
				t.Errorf("ChangedFields = %q, want %q", got, c.fields)
			}
			claims, err := ClaimsChanged(run, edited)
			if err != nil {
				t.Fatal(err)
			}
			if claims != c.claims {
				t.Errorf("ClaimsChanged = %v, want %v", claims, c.claims)
			}
			_, same, err := SameMeasurement(run, edited)
			if err != nil {
				t.Fatal(err)
			}
			if same != (len(got) == 0) {
				t.Errorf("SameMeasurement says same=%v while ChangedFields names %q: the two must agree", same, got)
			}
		})
	}
}
