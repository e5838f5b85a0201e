package experiments

import (
	"strings"
	"testing"
)

func TestSameMeasurement(t *testing.T) {
	base := func() *Manifest {
		m, err := Load("../experiments/io-bound.yaml", "")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
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
