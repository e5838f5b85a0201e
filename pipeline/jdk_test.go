package pipeline

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/store/record"
)

// TestResolveJDKs: jdk: per variant on a host like this one (Temurin 25
// and OpenJDK 17 installed, no 21). The finder is faked here; the real
// one's directory scan is tested in env/targets with a fake /usr/lib/jvm.
func TestResolveJDKs(t *testing.T) {
	m, err := experiments.Parse("jdk.yaml", []byte(`name: jdk
title: JEP 491 pinning on 21 and 25
question: does synchronized still pin?
variants:
  run-default: {target: spring-mvc}
  on-25: {target: spring-mvc, jdk: 25}
  on-21: {target: spring-mvc, jdk: 21}
  on-17: {target: spring-mvc, jdk: 17}
  own: {command: [./server, "{port}"]}
load: {model: burst, burst: 300, requests: [{path: /io}]}
forks: 3
`), "")
	if err != nil {
		t.Fatal(err)
	}
	installed := map[int]string{25: "/usr/lib/jvm/temurin-25-jdk-amd64", 17: "/usr/lib/jvm/java-17-openjdk-amd64"}
	asked := []int{}
	find := func(major int) (string, string, error) {
		asked = append(asked, major)
		if h, ok := installed[major]; ok {
			return h, fmt.Sprintf("%d.0.3", major), nil
		}
		return "", "", fmt.Errorf("no JDK %d is installed (found: ...)", major)
	}
	s := &State{M: m, rep: replicate.New(nil)}
	s.JVM.JavaHome = "/usr/lib/jvm/temurin-25-jdk-amd64"
	s.Jobs = replicate.Schedule(m, 1)
	for _, j := range s.Jobs {
		s.Meta.Order = append(s.Meta.Order, j.Key())
	}
	s.resolveJDKs(find)

	tests := []struct {
		variant, why string
		home         string // "" when skipped
		reason       string // fragment of the skip reason
	}{
		{"run-default", "no jdk: the run's JDK", "/usr/lib/jvm/temurin-25-jdk-amd64", ""},
		{"on-25", "jdk: 25 is installed", "/usr/lib/jvm/temurin-25-jdk-amd64", ""},
		{"on-21", "no JDK 21 on this host: skipped with the finder's reason", "", "jdk: 21: no JDK 21 is installed"},
		{"on-17", "17 is installed, but the targets are compiled for 21: skipped without asking", "", "compiled for Java 21 (virtual threads; env/targets/pom.xml), so they cannot run on Java 17"},
		{"own", "a command variant picks its own Java", "/usr/lib/jvm/temurin-25-jdk-amd64", ""},
	}
	for _, tt := range tests {
		i := slices.IndexFunc(s.Meta.Skipped, func(x record.SkippedVariant) bool { return x.Variant == tt.variant })
		jobs := slices.ContainsFunc(s.Jobs, func(j replicate.Job) bool { return j.Cell.Variant.Name == tt.variant })
		order := slices.ContainsFunc(s.Meta.Order, func(k string) bool { return strings.HasPrefix(k, tt.variant+"|") })
		if tt.reason == "" {
			if i >= 0 || !jobs || !order || s.JVM.JavaHomeOf(tt.variant) != tt.home {
				t.Errorf("%s: %s: skipped %v, jobs %v, order %v, JDK %q; want it to run on %s", tt.variant, tt.why, i >= 0, jobs, order, s.JVM.JavaHomeOf(tt.variant), tt.home)
			}
			continue
		}
		if i < 0 || jobs || order || !strings.Contains(s.Meta.Skipped[i].Reason, tt.reason) {
			t.Errorf("%s: %s: skipped %+v, jobs left %v, in order %v; want a skip saying %q", tt.variant, tt.why, s.Meta.Skipped, jobs, order, tt.reason)
			continue
		}
		if got := s.rep.Stopped(replicate.CellID{Variant: tt.variant}); !strings.HasPrefix(got, "variant skipped: ") {
			t.Errorf("%s: run.json's cell reason = %q, want the skip", tt.variant, got)
		}
		if !slices.ContainsFunc(s.Meta.Warnings, func(w string) bool { return strings.HasPrefix(w, "variant "+tt.variant+" skipped: ") }) {
			t.Errorf("%s: no warning for the report: %q", tt.variant, s.Meta.Warnings)
		}
	}
	if !slices.Equal(asked, []int{25, 21}) {
		t.Errorf("asked the finder for %v, want [25 21] (17 is refused before looking)", asked)
	}
	// run.json records the JDK each jdk: variant ran on; only on-25 found one.
	want := []record.VariantJDK{{Variant: "on-25", JDK: 25, Version: "25.0.3", Home: "/usr/lib/jvm/temurin-25-jdk-amd64"}}
	if !slices.Equal(s.Meta.JDKs, want) {
		t.Errorf("variant_jdks = %+v, want %+v", s.Meta.JDKs, want)
	}
}
