package experiments

import (
	"strings"
	"testing"

	"github.com/threadlab/threadlab/env/targets"
)

func TestNormalizeBoot(t *testing.T) {
	for _, tc := range []struct {
		name, edit   string // edit replaces "trials: 3" in valid
		variantEdit  string // replaces {target: spring-mvc}
		top, variant string // after Normalize
		why          string
	}{
		{"unset", "trials: 3", "{target: spring-mvc}", targets.DefaultBoot, targets.DefaultBoot,
			"no spring_boot means the poms' own Boot, written out so the saved manifest says it"},
		{"line", "trials: 3\nspring_boot: \"4.1\"", "{target: spring-mvc}", "4.1.2", "4.1.2",
			"a line is written as the version built for it, on the manifest and the variant"},
		{"variant override", "trials: 3\nspring_boot: \"4.1\"", "{target: spring-mvc, spring_boot: \"3.5\"}", "4.1.2", "3.5.7",
			"a variant's own line wins over the manifest's"},
	} {
		s := strings.Replace(strings.Replace(valid, "trials: 3", tc.edit, 1), "{target: spring-mvc}", tc.variantEdit, 1)
		m, err := Parse("demo.yaml", []byte(s), "")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if m.SpringBoot != tc.top || m.Variants[0].SpringBoot != tc.variant {
			t.Errorf("%s: spring_boot = %q, platform's = %q; want %q, %q (%s)", tc.name, m.SpringBoot, m.Variants[0].SpringBoot, tc.top, tc.variant, tc.why)
		}
		if m.Variants[1].SpringBoot != "" {
			t.Errorf("%s: the command variant got spring_boot %q; it has no Spring Boot of ours", tc.name, m.Variants[1].SpringBoot)
		}
		// The saved copy says it, and loads back to the same.
		out, err := Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), "spring_boot: "+tc.top) {
			t.Errorf("%s: the normalized manifest does not record spring_boot %s:\n%s", tc.name, tc.top, out)
		}
		back, err := Parse("run.yaml", out, "")
		if err != nil {
			t.Fatalf("%s: the saved manifest does not load: %v", tc.name, err)
		}
		if back.Variants[0].SpringBoot != tc.variant {
			t.Errorf("%s: reloaded platform spring_boot = %q, want %q", tc.name, back.Variants[0].SpringBoot, tc.variant)
		}
	}
}

func TestNormalizeBootCommandsOnly(t *testing.T) {
	s := strings.Replace(valid, "  platform: {target: spring-mvc}\n", "", 1)
	m, err := Parse("demo.yaml", []byte(s), "")
	if err != nil {
		t.Fatal(err)
	}
	if m.SpringBoot != "" {
		t.Errorf("a manifest of commands only got spring_boot %q (it builds no target)", m.SpringBoot)
	}
	_, err = Parse("demo.yaml", []byte(s+"spring_boot: \"4.1\"\n"), "")
	if err == nil || !strings.Contains(err.Error(), "every variant here is a command") {
		t.Errorf("spring_boot with commands only: err = %v, want it refused", err)
	}
}
