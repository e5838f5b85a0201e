package experiments

import (
	"slices"
	"strings"
	"testing"
	"time"
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
	fixed := func(m *Manifest) { m.Load.Warmup = Warmup{Min: 10 * time.Second, Max: 10 * time.Second} }
	cold := func(m *Manifest) { m.Variants[0].Measure = MeasureCold }
	cases := []struct {
		name string
		both func(m *Manifest) // the run's and the edited manifest's shared design, before edit
		edit func(m *Manifest)
		same bool
		want string // in the diff
	}{
		{"identical", nil, func(*Manifest) {}, true, ""},
		{"claims rewritten: judged, not measured", nil, func(m *Manifest) { m.Claims = m.Claims[:1] }, true, ""},
		{"title, question, descriptions and seed: description only", nil, func(m *Manifest) {
			m.Title, m.Question, m.Seed = "x", "y", 42
			m.Variants[0].Describe = "z"
		}, true, ""},
		{"more forks and iterations, both until steady: replication of the same measurement", nil, func(m *Manifest) {
			m.Forks.Min, m.Forks.Max = 9, 9
			m.Iterations += 5
		}, true, ""},
		{"more forks under a fixed warm-up: another plan", fixed, func(m *Manifest) { m.Forks.Min, m.Forks.Max = 9, 9 }, false, "forks"},
		{"more iterations under a fixed warm-up: they decide how much warm-up leaks into a median", fixed, func(m *Manifest) { m.Iterations += 5 }, false, "iterations"},
		{"more iterations with a variant measuring its start: the cold one's share changes", cold, func(m *Manifest) { m.Iterations += 5 }, false, "iterations"},
		{"the edited manifest warms up for a fixed time: not replication alone", nil, func(m *Manifest) { fixed(m); m.Iterations += 5 }, false, ""},
		{"a JVM option: another measurement", nil, func(m *Manifest) { m.Variants[0].JVM = append(m.Variants[0].JVM, "-Xmx1g") }, false, "jvm"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run, edited := base(), base()
			if c.both != nil {
				c.both(run)
				c.both(edited)
			}
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
			// They agree, but for replication under an until-steady warm-up:
			// a reader is told of changed forks and iterations, which are not
			// another measurement there.
			replication := replicationOnly(run, edited) && !slices.ContainsFunc(got, func(f string) bool { return f != "forks" && f != "iterations" })
			if same != (len(got) == 0 || replication) {
				t.Errorf("SameMeasurement says same=%v while ChangedFields names %q: the two must agree (but for replication under until-steady)", same, got)
			}
		})
	}
}
