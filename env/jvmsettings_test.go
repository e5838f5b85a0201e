package env

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/internal/testenv"
)

const flagsFinal = `[Global flags]
    ccstr AOTCache                                 =                                           {product} {default}
      int ActiveProcessorCount                     = -1                                        {product} {default}
   size_t MaxHeapSize                              = 2147483648                                {product} {command line}
     bool TieredCompilation                        = true                                   {pd product} {default}
     bool UseCompressedOops                        = true                           {product lp64_product} {ergonomic}
     bool UseG1GC                                  = true                                      {product} {ergonomic}
openjdk version "25.0.3" 2026-04-21 LTS
`

func TestParseFlagsFinal(t *testing.T) {
	m := ParseFlagsFinal(strings.NewReader(flagsFinal))
	tests := []struct {
		name string
		want Flag
		why  string
	}{
		{"MaxHeapSize", Flag{"size_t", "2147483648", "command line"}, "a value set on the command line"},
		{"AOTCache", Flag{"ccstr", "", "default"}, "an empty string value"},
		{"TieredCompilation", Flag{"bool", "true", "default"}, "a kind of two words ({pd product})"},
		{"UseCompressedOops", Flag{"bool", "true", "ergonomic"}, "an origin chosen by ergonomics"},
		{"ActiveProcessorCount", Flag{"int", "-1", "default"}, "a negative value"},
	}
	for _, tt := range tests {
		if got := m[tt.name]; got != tt.want {
			t.Errorf("%s: %s = %+v, want %+v", tt.why, tt.name, got, tt.want)
		}
	}
	if _, ok := m["openjdk"]; ok || len(m) != 6 {
		t.Errorf("parsed %d flags (%v), want the 6 flag lines only", len(m), m)
	}
}

func FuzzParseFlagsFinal(f *testing.F) {
	f.Add(flagsFinal)
	f.Add("x = {")
	f.Fuzz(func(t *testing.T, s string) {
		ParseFlagsFinal(strings.NewReader(s))
	})
}

// TestProbeJVM asks a real JDK 21+ (the targets' JDK) for its flags.
func TestProbeJVM(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM")
	}
	home := os.Getenv("JAVA_HOME")
	if home == "" {
		matches, _ := filepath.Glob("/usr/lib/jvm/temurin-2*")
		if len(matches) == 0 {
			testenv.Need(t, errors.New("nothing matches /usr/lib/jvm/temurin-2*"), "a JDK 21+", "install Temurin 25 or set JAVA_HOME")
		}
		home = matches[len(matches)-1]
	}
	s := ProbeJVM(context.Background(), home, []string{"-Xms64m", "-Xmx64m", "-XX:+UseSerialGC", "-XX:AOTMode=on", "-XX:AOTCache=/nonexistent.aot"})
	if s.Error != "" {
		t.Fatal(s.Error)
	}
	if s.GC != "Serial" || s.Flags["MaxHeapSize"] != "67108864 (command line)" {
		t.Errorf("settings %+v: want Serial GC and a 64 MiB heap from the command line", s)
	}
	if strings.Contains(strings.Join(s.Args, " "), "AOT") {
		t.Errorf("AOT options must be left out of the probe, got %v", s.Args)
	}
	bad := ProbeJVM(context.Background(), home, []string{"-XX:+NoSuchFlagAtAll"})
	if bad.Error == "" || len(bad.Flags) != 0 {
		t.Errorf("an unknown flag must fail the probe with a reason, got %+v", bad)
	}
}
