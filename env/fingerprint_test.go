package env

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCollectOnTree(t *testing.T) {
	manifest := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(manifest, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := treeHost("testdata/hosts/v2-systemd", 1024, 4096)
	fp, err := h.collect(context.Background(), FingerprintOptions{
		JVMFlags: []string{"-Xmx2g"}, Components: map[string]string{"spring-boot": "4.0.7"}, ManifestPath: manifest})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		field     string
		got, want any
	}{
		{"cpu.threads (8 logical)", fp.CPU.Threads, 8},
		{"cpu.cores (2 sockets x 2 cores)", fp.CPU.Cores, 4},
		{"cpu.sockets", fp.CPU.Sockets, 2},
		{"cpu.governor (both seen)", fp.CPU.Governor, "performance,powersave"},
		{"cpu.boost (no_turbo 0)", fp.CPU.Boost, "on"},
		{"cpu.smt", fp.CPU.SMT, "on"},
		{"cpu.online", fp.CPU.Online, "0-7"},
		{"memory.total (65536000 kB)", fp.Memory.TotalBytes, uint64(65536000 * 1024)},
		{"memory.swap (8388604 kB)", fp.Memory.SwapBytes, uint64(8388604 * 1024)},
		{"memory.thp", fp.Memory.THP, "always"},
		{"kernel.release", fp.Kernel.Release, "6.8.0-45-generic"},
		{"cgroup.cpu_limit", fp.Cgroup.CPULimit, 2.0},
		{"cgroup.memory_max", fp.Cgroup.MemoryMax, int64(1 << 30)},
		{"sysctl somaxconn", fp.Sysctls["net.core.somaxconn"], "128"},
		{"sysctl port range, tab normalised", fp.Sysctls["net.ipv4.ip_local_port_range"], "40000 44999"},
		{"nofile hard", fp.NofileHard, uint64(4096)},
		{"virtualization", fp.Virtualization.String(), "none detected"},
		// sha256("abc"), FIPS 180-2 appendix B.1.
		{"manifest sha256", fp.Manifest.SHA256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"jvm flags copied", strings.Join(fp.JVMFlags, " "), "-Xmx2g"},
		{"components copied", fp.Components["spring-boot"], "4.0.7"},
		{"schema", fp.Schema, 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.field, c.got, c.want)
		}
	}
	if len(fp.CPU.FlagsHash) != 16 || fp.CPU.NumFlags != 104 {
		t.Errorf("flags hash %q over %d flags, want 16 hex digits over 104 (hypervisor removed from 105)", fp.CPU.FlagsHash, fp.CPU.NumFlags)
	}
	if !hasWarning(fp, "jdk: no java home") || !hasWarning(fp, "distro") {
		t.Errorf("missing JDK and os-release must be warnings, got %q", fp.Warnings)
	}
}

func hasWarning(fp *Fingerprint, prefix string) bool {
	for _, w := range fp.Warnings {
		if strings.HasPrefix(w, prefix) {
			return true
		}
	}
	return false
}

func TestCollectErrors(t *testing.T) {
	h := treeHost(t.TempDir(), 0, 0)
	if _, err := h.collect(context.Background(), FingerprintOptions{ManifestPath: "testdata/no-such.yaml"}); err == nil || !strings.Contains(err.Error(), "manifest") {
		t.Errorf("unreadable manifest: err = %v, want an error naming the manifest", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.collect(ctx, FingerprintOptions{}); err == nil {
		t.Error("cancelled context: no error")
	}
	// An empty root is not an error: every gap is a warning.
	fp, err := h.collect(context.Background(), FingerprintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"cpu:", "memory:", "kernel:", "distro:", "sysctls:", "jdk:"} {
		if !hasWarning(fp, w) {
			t.Errorf("empty root: no %q warning in %q", w, fp.Warnings)
		}
	}
}

func TestParseJavaProperties(t *testing.T) {
	p := ParseJavaProperties(open(t, "java/temurin25-properties.txt"))
	want := map[string]string{
		"java.vendor": "Eclipse Adoptium", "java.version": "25.0.3", "java.runtime.version": "25.0.3+9-LTS",
		"java.vm.name": "OpenJDK 64-Bit Server VM", "java.home": "/usr/lib/jvm/temurin-25-jdk-amd64",
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %q, want %q", k, p[k], v)
		}
	}
	// Continuation lines of java.library.path are not properties.
	for k := range p {
		if strings.HasPrefix(k, "/") {
			t.Errorf("continuation line parsed as property %q", k)
		}
	}
	if _, ok := p["openjdk"]; ok {
		t.Error("the version banner parsed as a property")
	}
}

// fakeJDK makes a JDK directory whose bin/java prints script (or is absent).
func fakeJDK(t *testing.T, script, release string) string {
	t.Helper()
	home := t.TempDir()
	if script != "" {
		if err := os.MkdirAll(filepath.Join(home, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, "bin", "java"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if release != "" {
		if err := os.WriteFile(filepath.Join(home, "release"), []byte(release), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func TestReadJDK(t *testing.T) {
	const release = "IMPLEMENTOR=\"Eclipse Adoptium\"\nJAVA_VERSION=\"21.0.5\"\nJAVA_RUNTIME_VERSION=\"21.0.5+11-LTS\"\n"
	tests := []struct {
		why, script, release string
		vendor, version, src string
		wantErr              bool
	}{
		{why: "the JVM answers: its own properties win over the release file",
			script:  "printf 'Property settings:\\n    java.vendor = Azul Systems, Inc.\\n    java.version = 25.0.1\\n' >&2\n",
			release: release, vendor: "Azul Systems, Inc.", version: "25.0.1", src: "java -XshowSettings:properties"},
		{why: "java cannot start (exit 1): fall back to the release file, with the failure reported",
			script: "exit 1\n", release: release, vendor: "Eclipse Adoptium", version: "21.0.5", src: "release file", wantErr: false},
		{why: "no java binary and no release file: not a JDK", wantErr: true},
	}
	for _, tt := range tests {
		jdk, err := ReadJDK(context.Background(), fakeJDK(t, tt.script, tt.release))
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err = %v", tt.why, err)
		}
		if jdk.Vendor != tt.vendor || jdk.Version != tt.version || jdk.Source != tt.src {
			t.Errorf("%s: got %+v", tt.why, jdk)
		}
	}
}

func TestCollectLive(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM when one is installed")
	}
	o := FingerprintOptions{RepoDir: ".."}
	if homes, _ := filepath.Glob("/usr/lib/jvm/*/release"); len(homes) > 0 {
		o.JavaHome = filepath.Dir(homes[len(homes)-1])
	}
	fp, err := Collect(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if fp.CPU.Model == "" || fp.CPU.Threads < 1 || fp.Kernel.Release == "" || fp.Memory.TotalBytes == 0 || fp.Hostname == "" || fp.CPU.Allowed == "" {
		t.Errorf("missing basics on this machine: %+v", fp)
	}
	if !strings.HasPrefix(fp.Go, "go1.") {
		t.Errorf("go = %q", fp.Go)
	}
	if len(fp.Threadlab.Commit) != 40 {
		t.Errorf("commit from git in .. = %q, want 40 hex digits", fp.Threadlab.Commit)
	}
	if o.JavaHome != "" && fp.JDK.Version == "" {
		t.Errorf("JDK at %s not identified: %+v, warnings %q", o.JavaHome, fp.JDK, fp.Warnings)
	}
	// fingerprint.json round-trips without changing any compared field.
	b, err := json.Marshal(fp)
	if err != nil {
		t.Fatal(err)
	}
	var back Fingerprint
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := Compare(fp, &back); len(d) != 0 {
		t.Errorf("json round trip changed %+v", d)
	}
}
