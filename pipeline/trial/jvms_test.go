package trial

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/store/record"
)

// aotRun is one built-in-target variant whose jar is not a real Spring
// Boot jar and whose JDK does not exist, so any AOT training fails; warned
// collects the warnings.
type aotRun struct {
	m      *experiments.Manifest
	jvms   *JVMs
	warned []string
}

func aotState(t *testing.T, aot bool, jvm ...string) *aotRun {
	dir := t.TempDir()
	jar := filepath.Join(dir, "app.jar")
	if err := os.WriteFile(jar, []byte("not a jar"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &experiments.Manifest{AOTCache: &aot, Variants: experiments.Variants{{Name: "mvc", Target: "spring-mvc", JVM: jvm}}}
	return &aotRun{m: m, jvms: &JVMs{JavaHome: filepath.Join(dir, "no-jdk"), Jars: map[string]string{"spring-mvc": jar}}}
}

// prepare is PrepareAOT with nothing skipped, the training's output
// discarded and the warnings kept.
func (r *aotRun) prepare(ctx context.Context) ([]record.AOTStart, error) {
	return r.jvms.PrepareAOT(ctx, r.m, func(string) bool { return false }, io.Discard,
		func(f string, a ...any) { r.warned = append(r.warned, fmt.Sprintf(f, a...)) }, func(string, ...any) {})
}

func TestPrepareAOT(t *testing.T) {
	t.Run("off starts the fat jar", func(t *testing.T) {
		s := aotState(t, false, "-Xmx1g")
		recs, err := s.prepare(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		jar, extra := s.jvms.StartOf(s.m.Variants[0])
		if jar != s.jvms.Jars["spring-mvc"] || len(extra) != 0 || len(s.warned) != 0 {
			t.Errorf("aot_cache: false: started %s %v with warnings %v, want the fat jar, nothing appended, no warning", jar, extra, s.warned)
		}
		if a := recs[0]; a.Asked || a.Used {
			t.Errorf("run.json says %+v, want neither asked nor used", a)
		}
		if got := JVMArgSets(s.m); len(got) != 1 || !slices.Equal(got[0], []string{"-Xmx1g"}) {
			t.Errorf("JVM arg sets %v, want the variant's own", got)
		}
	})
	t.Run("failed training warns and runs without the cache", func(t *testing.T) {
		s := aotState(t, true)
		recs, err := s.prepare(context.Background())
		if err != nil {
			t.Fatalf("a failed AOT training must not fail the run: %v", err)
		}
		jar, extra := s.jvms.StartOf(s.m.Variants[0])
		if jar != s.jvms.Jars["spring-mvc"] || len(extra) != 0 {
			t.Errorf("started %s %v, want the fat jar without AOT options", jar, extra)
		}
		if len(s.warned) != 1 || !strings.Contains(s.warned[0], "starts without the cache") {
			t.Errorf("warnings %v, want one saying the target starts without the cache", s.warned)
		}
		if a := recs[0]; !a.Asked || a.Used || !strings.HasPrefix(a.Note, "training failed") {
			t.Errorf("run.json says %+v, want asked, not used, training failed", a)
		}
		if len(s.jvms.AOTCaches(s.m)) != 0 {
			t.Errorf("fingerprint lists caches %v for a run that used none", s.jvms.AOTCaches(s.m))
		}
	})
	t.Run("cancelled run stops", func(t *testing.T) {
		s := aotState(t, true)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := s.prepare(ctx); err == nil {
			t.Errorf("PrepareAOT on a cancelled context returned nil; Ctrl-C during training must stop the run")
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
	s := &JVMs{Jars: map[string]string{
		"spring-mvc": "/mvc-407.jar", "spring-mvc@4.1.2": "/mvc-412.jar",
		"spring-webflux@3.5.7": "/wf-357.jar", "spring-webflux@4.1.2": "/wf-412.jar",
	}}
	if got := strings.Join(BootVersions(m), ","); got != "4.1.2,4.0.7,3.5.7" {
		t.Errorf("BootVersions = %s, want 4.1.2,4.0.7,3.5.7 (variant order, once each, commands left out)", got)
	}
	for _, tc := range []struct{ variant, want string }{
		{"a", "/mvc-412.jar"}, {"b", "/mvc-407.jar"}, {"d", "/wf-357.jar"}, {"e", "/wf-412.jar"},
	} {
		i := slices.IndexFunc(m.Variants, func(v experiments.Variant) bool { return v.Name == tc.variant })
		if jar, _ := s.StartOf(m.Variants[i]); jar != tc.want {
			t.Errorf("variant %s starts %s, want %s", tc.variant, jar, tc.want)
		}
	}
}
