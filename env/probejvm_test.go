package env_test

import (
	"context"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/env/targets"
	"github.com/threadlab/threadlab/internal/testenv"
)

// TestProbeJVM asks a real JDK 21+ for its flags: the one the targets run
// on (targets.FindJDK, the same search scripts/setup.sh checks), so CI,
// which has one, never skips it. An external test package, because
// env/targets imports env.
func TestProbeJVM(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM")
	}
	home, _, err := targets.FindJDK()
	testenv.Need(t, err, "a JDK >= 21", "install Temurin 25 or openjdk-21-jdk, or set JAVA_HOME")
	s := env.ProbeJVM(context.Background(), home, []string{"-Xms64m", "-Xmx64m", "-XX:+UseSerialGC", "-XX:AOTMode=on", "-XX:AOTCache=/nonexistent.aot"})
	if s.Error != "" {
		t.Fatal(s.Error)
	}
	if s.GC != "Serial" || s.Flags["MaxHeapSize"] != "67108864 (command line)" {
		t.Errorf("settings %+v: want Serial GC and a 64 MiB heap from the command line", s)
	}
	if strings.Contains(strings.Join(s.Args, " "), "AOT") {
		t.Errorf("AOT options must be left out of the probe, got %v", s.Args)
	}
	bad := env.ProbeJVM(context.Background(), home, []string{"-XX:+NoSuchFlagAtAll"})
	if bad.Error == "" || len(bad.Flags) != 0 {
		t.Errorf("an unknown flag must fail the probe with a reason, got %+v", bad)
	}
}
