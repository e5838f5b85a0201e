package targets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseRelease(t *testing.T) {
	tests := []struct {
		name, release, version string
		major                  int
		err                    string
	}{
		{"temurin 25 quotes the value", "IMPLEMENTOR=\"Eclipse Adoptium\"\nJAVA_VERSION=\"25.0.3\"\nJAVA_VERSION_DATE=\"2026-04-21\"\n", "25.0.3", 25, ""},
		{"a GA feature release has no dots", `JAVA_VERSION="21"`, "21", 21, ""},
		{"debian openjdk 17", "JAVA_VERSION=\"17.0.15\"\nMODULES=\"java.base\"", "17.0.15", 17, ""},
		{"pre-9 scheme reads the second number", `JAVA_VERSION="1.8.0_292"`, "1.8.0_292", 8, ""},
		{"build suffix is ignored", `JAVA_VERSION="22.0.2+9"`, "22.0.2+9", 22, ""},
		{"JAVA_VERSION_DATE must not be taken for JAVA_VERSION", "JAVA_VERSION_DATE=\"2026-04-21\"\n", "", 0, "no JAVA_VERSION"},
		{"garbage version is an error", `JAVA_VERSION="ea"`, "", 0, "cannot read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, major, err := parseRelease([]byte(tt.release))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || v != tt.version || major != tt.major {
				t.Fatalf("parseRelease = %q, %d, %v; want %q, %d", v, major, err, tt.version, tt.major)
			}
		})
	}
}

// fakeJDK lays out dir/release and dir/bin/java the way a JDK does.
func fakeJDK(t *testing.T, dir, version string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "release"), []byte("JAVA_VERSION=\""+version+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "java"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestFindJDK(t *testing.T) {
	root := t.TempDir()
	jvm := filepath.Join(root, "jvm")
	j17 := fakeJDK(t, filepath.Join(jvm, "java-17-openjdk-amd64"), "17.0.15")
	fakeJDK(t, filepath.Join(jvm, "java-21-openjdk-amd64"), "21.0.11")
	j25 := fakeJDK(t, filepath.Join(jvm, "temurin-25-jdk-amd64"), "25.0.3")
	if err := os.Symlink(j17, filepath.Join(jvm, "java-1.17.0-openjdk-amd64")); err != nil {
		t.Fatal(err)
	}
	// a JRE-like directory without bin/java must be skipped, whatever its release says
	if err := os.MkdirAll(filepath.Join(jvm, "broken-99"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(jvm, "broken-99", "release"), []byte(`JAVA_VERSION="99"`), 0o644)
	old := fakeJDK(t, filepath.Join(root, "old", "jvm", "java-17"), "17.0.15")
	onlyOld := filepath.Join(root, "old", "jvm")
	external := fakeJDK(t, filepath.Join(root, "opt", "jdk-21"), "21.0.2")
	two := filepath.Join(root, "two")
	fakeJDK(t, filepath.Join(two, "java-21.0.9"), "21.0.9")
	j21newest := fakeJDK(t, filepath.Join(two, "java-21.0.11"), "21.0.11")

	tests := []struct {
		name, javaHome string
		roots          []string
		wantHome       string
		wantMajor      int
		wantErr        string
	}{
		{"JAVA_HOME >= 21 wins over a newer installed JDK", external, []string{jvm}, external, 21, ""},
		{"JAVA_HOME too old falls back to the newest installed", j17, []string{jvm}, j25, 25, ""},
		{"unset JAVA_HOME scans and picks the newest", "", []string{jvm}, j25, 25, ""},
		{"JAVA_HOME that is no JDK falls back", filepath.Join(root, "nope"), []string{jvm}, j25, 25, ""},
		{"same feature release: the newer update wins", "", []string{two}, j21newest, 21, ""},
		{"only old JDKs is an error naming what was found", "", []string{onlyOld}, "", 0, "threadlab needs a JDK >= 21"},
		{"nothing installed is an error with the install hint", "", []string{filepath.Join(root, "missing")}, "", 0, "apt-get install temurin-25-jdk"},
		{"a 17 JAVA_HOME and no others says JAVA_HOME is 17", old, nil, "", 0, "is Java 17.0.15"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, major, err := findJDK(tt.javaHome, tt.roots)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || home != tt.wantHome || major != tt.wantMajor {
				t.Fatalf("findJDK = %q, %d, %v; want %q, %d", home, major, err, tt.wantHome, tt.wantMajor)
			}
		})
	}
}

// TestFindJDKRelease: jdk: N on a variant picks a JDK of that feature
// release from JAVA_HOME or the roots, on a fake /usr/lib/jvm like this
// host's (Temurin 25 and OpenJDK 17 behind an alias).
func TestFindJDKRelease(t *testing.T) {
	root := t.TempDir()
	jvm := filepath.Join(root, "jvm")
	j17 := fakeJDK(t, filepath.Join(jvm, "java-17-openjdk-amd64"), "17.0.15")
	j25 := fakeJDK(t, filepath.Join(jvm, "temurin-25-jdk-amd64"), "25.0.3")
	if err := os.Symlink(j17, filepath.Join(jvm, "java-1.17.0-openjdk-amd64")); err != nil {
		t.Fatal(err)
	}
	two := filepath.Join(root, "two")
	fakeJDK(t, filepath.Join(two, "java-21.0.9"), "21.0.9")
	j21 := fakeJDK(t, filepath.Join(two, "java-21.0.11"), "21.0.11")
	external := fakeJDK(t, filepath.Join(root, "opt", "jdk-21"), "21.0.2")
	targetsDir := filepath.Join(root, "repo", "env", "targets")
	local := fakeJDK(t, LocalJDK(targetsDir, 21), "21.0.8")
	noLocal := filepath.Join(root, "bare", "env", "targets")

	tests := []struct {
		name, javaHome string
		release        string // JDK<N>_HOME
		targetsDir     string
		roots          []string
		major          int
		wantHome       string
		wantVersion    string
		wantErr        []string
	}{
		{name: "this host asks for 25: Temurin", roots: []string{jvm}, major: 25, wantHome: j25, wantVersion: "25.0.3"},
		{name: "this host asks for 17: the real directory, not its alias", roots: []string{jvm}, major: 17, wantHome: j17, wantVersion: "17.0.15"},
		{name: "this host asks for 21: none, and the error lists what there is once",
			roots: []string{jvm}, major: 21,
			wantErr: []string{"no JDK 21 is installed", "java-17-openjdk-amd64 is Java 17.0.15; " + j25 + " is Java 25.0.3)", "run scripts/setup.sh", "point JDK21_HOME (or JAVA_HOME) at one"}},
		{name: "setup.sh's pinned copy in the repository is found on a host without JDK 21", targetsDir: targetsDir, roots: []string{jvm}, major: 21, wantHome: local, wantVersion: "21.0.8"},
		{name: "setup.sh's copy wins over /usr/lib/jvm: the same JDK on every machine", targetsDir: targetsDir, roots: []string{two}, major: 21, wantHome: local, wantVersion: "21.0.8"},
		{name: "JDK21_HOME wins over JAVA_HOME and the local copy", release: external, javaHome: j21, targetsDir: targetsDir, roots: []string{two}, major: 21, wantHome: external, wantVersion: "21.0.2"},
		{name: "a JDK21_HOME of another release is reported and the search goes on", release: j25, targetsDir: noLocal, roots: []string{two}, major: 21, wantHome: j21, wantVersion: "21.0.11"},
		{name: "a JDK21_HOME that is no JDK is named in the error", release: filepath.Join(root, "nope"), targetsDir: noLocal, roots: nil, major: 21,
			wantErr: []string{"JDK21_HOME=" + filepath.Join(root, "nope") + ": not a JDK"}},
		{name: "a JAVA_HOME of that release wins over the roots", javaHome: external, roots: []string{two}, major: 21, wantHome: external, wantVersion: "21.0.2"},
		{name: "a JAVA_HOME of another release falls back to the roots", javaHome: j25, roots: []string{two}, major: 21, wantHome: j21, wantVersion: "21.0.11"},
		{name: "two updates of one release: the newer", roots: []string{two}, major: 21, wantHome: j21, wantVersion: "21.0.11"},
		{name: "nothing anywhere names the roots searched", roots: []string{filepath.Join(root, "missing")}, major: 21,
			wantErr: []string{"no JDK 21 is installed (found: no JDK under " + filepath.Join(root, "missing")}},
		{name: "a JAVA_HOME that is no JDK is reported", javaHome: filepath.Join(root, "nope"), roots: nil, major: 25,
			wantErr: []string{"JAVA_HOME=" + filepath.Join(root, "nope") + ": not a JDK"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td := tt.targetsDir
			if td == "" {
				td = noLocal
			}
			homes := []candidate{{ReleaseEnv(tt.major), tt.release}, {"JAVA_HOME", tt.javaHome}, {"setup.sh's copy", LocalJDK(td, tt.major)}}
			home, version, err := findJDKRelease(homes, tt.roots, tt.major)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("found %s (%s), want an error", home, version)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("err = %v, want one containing %q", err, w)
					}
				}
				return
			}
			if err != nil || home != tt.wantHome || version != tt.wantVersion {
				t.Fatalf("findJDKRelease = %q, %q, %v; want %q, %q", home, version, err, tt.wantHome, tt.wantVersion)
			}
		})
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
		why  string
	}{
		{"25.0.3", "21.0.11", 1, "feature release first"},
		{"21.0.11", "21.0.9", 1, "numeric, not lexical"},
		{"21", "21.0.0", 0, "missing parts are zero"},
		{"17", "", 1, "anything beats nothing"},
		{"1.8.0_292", "11", -1, "the 1.x scheme is Java 8"},
	}
	for _, tt := range tests {
		if got := compareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d (%s)", tt.a, tt.b, got, tt.want, tt.why)
		}
	}
}
