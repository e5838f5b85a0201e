package pipeline

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
)

// aotState is a run of one built-in-target variant whose jar is not a real
// Spring Boot jar and whose JDK does not exist, so any AOT training fails.
func aotState(t *testing.T, aot bool, jvm ...string) *State {
	dir := t.TempDir()
	jar := filepath.Join(dir, "app.jar")
	if err := os.WriteFile(jar, []byte("not a jar"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &experiments.Manifest{AOTCache: &aot, Variants: experiments.Variants{{Name: "mvc", Target: "spring-mvc", JVM: jvm}}}
	return &State{M: m, Opt: Options{Log: io.Discard}, JavaHome: filepath.Join(dir, "no-jdk"), Jars: map[string]string{"spring-mvc": jar}}
}

func TestPrepareAOT(t *testing.T) {
	t.Run("off starts the fat jar", func(t *testing.T) {
		s := aotState(t, false, "-Xmx1g")
		if err := s.prepareAOT(context.Background()); err != nil {
			t.Fatal(err)
		}
		jar, extra := s.startOf(s.M.Variants[0])
		if jar != s.Jars["spring-mvc"] || len(extra) != 0 || len(s.Meta.Warnings) != 0 {
			t.Errorf("aot_cache: false: started %s %v with warnings %v, want the fat jar, nothing appended, no warning", jar, extra, s.Meta.Warnings)
		}
		if a := s.Meta.AOT[0]; a.Asked || a.Used {
			t.Errorf("run.json says %+v, want neither asked nor used", a)
		}
		if got := s.jvmArgSets(); len(got) != 1 || !slices.Equal(got[0], []string{"-Xmx1g"}) {
			t.Errorf("JVM arg sets %v, want the variant's own", got)
		}
	})
	t.Run("failed training warns and runs without the cache", func(t *testing.T) {
		s := aotState(t, true)
		if err := s.prepareAOT(context.Background()); err != nil {
			t.Fatalf("a failed AOT training must not fail the run: %v", err)
		}
		jar, extra := s.startOf(s.M.Variants[0])
		if jar != s.Jars["spring-mvc"] || len(extra) != 0 {
			t.Errorf("started %s %v, want the fat jar without AOT options", jar, extra)
		}
		if len(s.Meta.Warnings) != 1 || !strings.Contains(s.Meta.Warnings[0], "starts without the cache") {
			t.Errorf("warnings %v, want one saying the target starts without the cache", s.Meta.Warnings)
		}
		if a := s.Meta.AOT[0]; !a.Asked || a.Used || !strings.HasPrefix(a.Note, "training failed") {
			t.Errorf("run.json says %+v, want asked, not used, training failed", a)
		}
		if len(s.aotCaches()) != 0 {
			t.Errorf("fingerprint lists caches %v for a run that used none", s.aotCaches())
		}
	})
	t.Run("cancelled run stops", func(t *testing.T) {
		s := aotState(t, true)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.prepareAOT(ctx); err == nil {
			t.Errorf("prepareAOT on a cancelled context returned nil; Ctrl-C during training must stop the run")
		}
	})
}

// Each variant starts the jar of its own Spring Boot: the default's under
// the target's name (as tests and a one-line run set it), another line's
// under target@version.
func TestJarOfBoot(t *testing.T) {
	m := &experiments.Manifest{Variants: experiments.Variants{
		{Name: "a", Target: "spring-mvc", SpringBoot: "4.1.2"},
		{Name: "b", Target: "spring-mvc"}, // not normalized: the default
		{Name: "c", Command: []string{"./x"}},
		{Name: "d", Target: "spring-webflux", SpringBoot: "3.5.7"},
		{Name: "e", Target: "spring-webflux", SpringBoot: "4.1.2"},
	}}
	s := &State{M: m, Jars: map[string]string{
		"spring-mvc": "/mvc-407.jar", "spring-mvc@4.1.2": "/mvc-412.jar",
		"spring-webflux@3.5.7": "/wf-357.jar", "spring-webflux@4.1.2": "/wf-412.jar",
	}}
	if got := strings.Join(s.bootVersions(), ","); got != "4.1.2,4.0.7,3.5.7" {
		t.Errorf("bootVersions = %s, want 4.1.2,4.0.7,3.5.7 (variant order, once each, commands left out)", got)
	}
	for _, tc := range []struct{ variant, want string }{
		{"a", "/mvc-412.jar"}, {"b", "/mvc-407.jar"}, {"d", "/wf-357.jar"}, {"e", "/wf-412.jar"},
	} {
		i := slices.IndexFunc(m.Variants, func(v experiments.Variant) bool { return v.Name == tc.variant })
		if jar, _ := s.startOf(m.Variants[i]); jar != tc.want {
			t.Errorf("variant %s starts %s, want %s", tc.variant, jar, tc.want)
		}
	}
}
