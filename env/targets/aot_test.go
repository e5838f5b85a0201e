package targets

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/threadlab/threadlab/internal/testenv"
)

func TestSetsAOT(t *testing.T) {
	tests := []struct {
		opts []string
		want bool
		why  string
	}{
		{nil, false, "no options: the run decides"},
		{[]string{"-Xmx2g", "-XX:+UseG1GC"}, false, "unrelated options"},
		{[]string{"-XX:AOTMode=off"}, true, "the aot-cache experiment's opt-out variant"},
		{[]string{"-XX:AOTCache=/x.aot"}, true, "a variant naming its own cache"},
		{[]string{"-XX:SharedArchiveFile=app.jsa"}, true, "a CDS archive is the older form of the same thing"},
	}
	for _, tt := range tests {
		if got := SetsAOT(tt.opts); got != tt.want {
			t.Errorf("%s: SetsAOT(%q) = %v, want %v", tt.why, tt.opts, got, tt.want)
		}
	}
}

func TestAOTStartArgs(t *testing.T) {
	a := AOT{Cache: "/t/aot/k/spring-mvc.aot"}
	want := []string{"-XX:AOTCache=/t/aot/k/spring-mvc.aot", "-XX:AOTMode=on"}
	if got := a.StartArgs(); !slices.Equal(got, want) {
		t.Errorf("StartArgs = %q, want %q", got, want)
	}
}

func TestPrepareAOTErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := PrepareAOT(context.Background(), dir, "spring-mvc", filepath.Join(dir, "missing.jar"), nil, nil); err == nil || !strings.Contains(err.Error(), "threadlab targets") {
		t.Errorf("a missing jar must say to build the targets, got %v", err)
	}
	if _, err := PrepareAOT(context.Background(), dir, "spring-mvc", "x.jar", []string{"-XX:AOTMode=off"}, nil); err == nil || !strings.Contains(err.Error(), "already choose") {
		t.Errorf("training with an AOT mode set must be refused, got %v", err)
	}
	jar := filepath.Join(dir, "app.jar")
	os.WriteFile(jar, []byte("not a jar"), 0o644)
	if _, err := PrepareAOT(context.Background(), dir, "spring-mvc", jar, nil, nil); err == nil || !strings.Contains(err.Error(), "not a JDK") {
		t.Errorf("a java home without a release file must be named, got %v", err)
	}
}

// TestAOTStartup measures time to readiness of /actuator/health for each
// built-in target started three ways, interleaved: the fat jar (no cache,
// today's start), the extracted layout without a cache, and the extracted
// layout with the AOT cache. It trains the caches if needed. It is a
// measurement, run on demand:
//
//	THREADLAB_AOT_STARTUP=5 go test -run TestAOTStartup -v ./env/targets
//
// and it fails only when a start fails (with -XX:AOTMode=on that includes a
// cache the JVM could not use).
func TestAOTStartup(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("THREADLAB_AOT_STARTUP"))
	if n <= 0 {
		t.Skip("set THREADLAB_AOT_STARTUP=<starts per mode> to measure start-up with and without the AOT cache")
	}
	home, _, err := FindJDK()
	testenv.Need(t, err, "a JDK >= 21", "install Temurin 25 or openjdk-21-jdk, or set JAVA_HOME")
	ctx := context.Background()
	root, _ := filepath.Abs(".")
	type mode struct {
		name, jar string
		args      []string
	}
	modes := map[string][]mode{}
	for _, name := range Names() {
		jar := JarPath(root, name)
		if _, err := os.Stat(jar); err != nil {
			testenv.Need(t, err, "the target jar "+jar, "run threadlab targets")
		}
		a, err := PrepareAOT(ctx, home, name, jar, nil, testWriter{t})
		if err != nil {
			t.Fatal(err)
		}
		modes[name] = []mode{{"jar", jar, nil}, {"extracted", a.Jar, nil}, {"aot", a.Jar, a.StartArgs()}}
	}
	ms := map[string][]float64{}
	for i := range n {
		for _, name := range Names() {
			m := modes[name]
			for j := range m {
				md := m[(i+j)%len(m)] // rotate: no mode always goes first
				d, err := startOnce(ctx, home, md.jar, md.args)
				if err != nil {
					t.Fatalf("%s %s: %v", name, md.name, err)
				}
				ms[name+" "+md.name] = append(ms[name+" "+md.name], d)
				t.Logf("start %d %s %s: ready in %.0f ms", i+1, name, md.name, d)
			}
		}
	}
	for _, name := range Names() {
		jar, aot := med(ms[name+" jar"]), med(ms[name+" aot"])
		t.Logf("%s: ready in median %.0f ms (fat jar) / %.0f ms (extracted, no cache) / %.0f ms (AOT cache); fat jar / AOT = %.2f",
			name, jar, med(ms[name+" extracted"]), aot, jar/aot)
	}
}

func startOnce(ctx context.Context, home, jar string, args []string) (float64, error) {
	port, err := aotPort()
	if err != nil {
		return 0, err
	}
	argv := Command(home, jar, port, nil, args)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := os.CreateTemp("", "aot-start-*.log")
	defer os.Remove(out.Name())
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}()
	if err := waitReady(ctx, "http://127.0.0.1:"+strconv.Itoa(port)+ReadyPath, done); err != nil {
		b, _ := os.ReadFile(out.Name())
		return 0, fmt.Errorf("%v: %s", err, tail(string(b), 10))
	}
	return float64(time.Since(start)) / float64(time.Millisecond), nil
}

func med(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// failingJDK is a java home whose java prints a message and fails: enough for
// PrepareAOT to get as far as extraction.
func failingJDK(t *testing.T) string {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "bin"), 0o755)
	os.WriteFile(filepath.Join(home, "release"), []byte("JAVA_VERSION=\"25.0.3\"\n"), 0o644)
	os.WriteFile(filepath.Join(home, "bin", "java"), []byte("#!/bin/sh\necho 'no such jarmode' >&2\nexit 3\n"), 0o755)
	return home
}

func TestPrepareAOTReuse(t *testing.T) {
	home := failingJDK(t)
	jar := filepath.Join(t.TempDir(), "spring-mvc", "target", "spring-mvc.jar")
	os.MkdirAll(filepath.Dir(jar), 0o755)
	os.WriteFile(jar, []byte("a jar"), 0o644)
	ctx := context.Background()

	a, err := PrepareAOT(ctx, home, "spring-mvc", jar, []string{"-Xmx2g"}, nil)
	if err == nil || !strings.Contains(err.Error(), "extract") || !strings.Contains(err.Error(), "no such jarmode") {
		t.Fatalf("a failing extraction must quote java's output, got %v", err)
	}
	if !strings.HasPrefix(a.Key, a.JarSHA256[:12]+"-") || filepath.Dir(a.Cache) != filepath.Join(filepath.Dir(jar), "aot", a.Key) {
		t.Fatalf("cache %s with key %s: want <jar dir>/aot/<jar hash>-<options hash>/", a.Cache, a.Key)
	}
	// Another option set is another key; the same options, the same key.
	b, _ := PrepareAOT(ctx, home, "spring-mvc", jar, []string{"-Xmx1g"}, nil)
	c, _ := PrepareAOT(ctx, home, "spring-mvc", jar, []string{"-Xmx2g"}, nil)
	if b.Key == a.Key || c.Key != a.Key {
		t.Errorf("keys %s (2g), %s (1g), %s (2g again): options must key the cache", a.Key, b.Key, c.Key)
	}
	// A cache that exists is reused without running java at all.
	os.MkdirAll(filepath.Dir(a.Cache), 0o755)
	os.WriteFile(a.Cache, []byte("cache bytes"), 0o644)
	got, err := PrepareAOT(ctx, home, "spring-mvc", jar, []string{"-Xmx2g"}, nil)
	if err != nil || got.Bytes != 11 || got.TrainedMs != 0 || got.Jar != filepath.Join(filepath.Dir(a.Cache), "spring-mvc.jar") {
		t.Errorf("reuse: %+v, %v; want the existing 11-byte cache, not trained", got, err)
	}
	// Start: disabled is the fat jar untouched; enabled appends the cache;
	// a variant with its own AOT option gets the extracted jar and nothing more.
	if j, extra, used, err := Start(ctx, false, home, "spring-mvc", jar, []string{"-Xmx2g"}, nil); j != jar || extra != nil || used != nil || err != nil {
		t.Errorf("disabled: %s %q %v %v, want the fat jar alone", j, extra, used, err)
	}
	if j, extra, used, err := Start(ctx, true, home, "spring-mvc", jar, []string{"-Xmx2g"}, nil); err != nil || j != got.Jar || !slices.Equal(extra, got.StartArgs()) || used == nil {
		t.Errorf("enabled: %s %q %v %v, want the extracted jar and the cache options", j, extra, used, err)
	}
	if j, extra, used, err := Start(ctx, true, home, "spring-mvc", jar, []string{"-Xmx2g", "-XX:AOTMode=off"}, nil); err != nil || j != got.Jar || extra != nil || used != nil {
		t.Errorf("own AOT option: %s %q %v %v, want the extracted jar and nothing appended", j, extra, used, err)
	}
}
