package env

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// JVMSettings are a target JVM's effective settings for one JDK and one set
// of JVM options, as the JVM itself reports them with -XX:+PrintFlagsFinal:
// what the ergonomics chose (heap, collector, compiler threads) on this
// host, not what was asked.
type JVMSettings struct {
	JavaHome string   `json:"java_home"`
	Args     []string `json:"args"` // the options probed (AOT options left out, see ProbeJVM)
	// Flags maps each flag of jvmFlagSubset to its value and origin, e.g.
	// "MaxHeapSize": "2147483648 (command line)", "UseG1GC": "true (ergonomic)".
	Flags map[string]string `json:"flags"`
	GC    string            `json:"gc"`              // the collector whose Use*GC flag is true
	Error string            `json:"error,omitempty"` // why the probe failed; Flags is then empty
}

// jvmFlagSubset is what changes a threading-model result: heap size and
// collector (GC pauses land in latency), the JIT (tiered, compiler threads),
// the processor count the JVM sizes its pools from (ActiveProcessorCount -1
// means every CPU the process may use; CICompilerCount and
// ParallelGCThreads show what that came to), and the AOT cache settings.
var jvmFlagSubset = []string{
	"MaxHeapSize", "InitialHeapSize", "UseCompressedOops",
	"UseG1GC", "UseParallelGC", "UseSerialGC", "UseZGC", "UseShenandoahGC", "UseEpsilonGC",
	"TieredCompilation", "TieredStopAtLevel", "CICompilerCount",
	"ActiveProcessorCount", "ParallelGCThreads", "ConcGCThreads", "UseContainerSupport",
	"AOTCache", "AOTMode",
}

// ProbeJVM asks java under home for its final flags with args. Options that
// name an AOT cache or mode are dropped from the probe: a cache is valid
// only for its application's class path, and `java -version` has none, so
// -XX:AOTMode=on would fail the probe. The AOT cache is recorded on its own
// (Fingerprint.AOT). A failed probe is returned with Error set.
func ProbeJVM(ctx context.Context, home string, args []string) JVMSettings {
	s := JVMSettings{JavaHome: home, Flags: map[string]string{}}
	for _, a := range args {
		if !strings.HasPrefix(a, "-XX:AOT") {
			s.Args = append(s.Args, a)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	argv := append(slices.Clone(s.Args), "-XX:+PrintFlagsFinal", "-version")
	cmd := exec.CommandContext(ctx, filepath.Join(home, "bin", "java"), argv...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		s.Error = fmt.Sprintf("java %s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(lastLine(errOut.String())))
		return s
	}
	all := ParseFlagsFinal(&out)
	for _, name := range jvmFlagSubset {
		f, ok := all[name]
		if !ok {
			continue
		}
		s.Flags[name] = f.Value + " (" + f.Origin + ")"
		if strings.HasPrefix(name, "Use") && strings.HasSuffix(name, "GC") && f.Value == "true" {
			s.GC = strings.TrimSuffix(strings.TrimPrefix(name, "Use"), "GC")
		}
	}
	return s
}

// Flag is one line of -XX:+PrintFlagsFinal.
type Flag struct {
	Type, Value, Origin string
}

// ParseFlagsFinal reads -XX:+PrintFlagsFinal output:
//
//	size_t MaxHeapSize   = 2147483648    {product} {command line}
//	ccstr  AOTCache      =               {product} {default}
//
// type, name, "=", an optional value, then braces: the kind, and the origin
// (default, ergonomic, command line, ...). Lines of another shape are skipped.
func ParseFlagsFinal(r io.Reader) map[string]Flag {
	m := map[string]Flag{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		lhs, rhs, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		head := strings.Fields(lhs)
		if len(head) != 2 {
			continue
		}
		value, braces, _ := strings.Cut(rhs, "{")
		origin := ""
		if i := strings.LastIndex(braces, "{"); i >= 0 {
			origin = strings.TrimSuffix(strings.TrimSpace(braces[i+1:]), "}")
		}
		m[head[1]] = Flag{Type: head[0], Value: strings.TrimSpace(value), Origin: origin}
	}
	return m
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// AOTCache records a target's AOT cache as a run used it.
type AOTCache struct {
	Target    string   `json:"target"`
	Cache     string   `json:"cache"`
	JarSHA256 string   `json:"jar_sha256"`
	Key       string   `json:"key"`
	Bytes     int64    `json:"bytes"`
	JVMArgs   []string `json:"jvm_args"` // what each start appended
	TrainedMs float64  `json:"trained_ms,omitempty"`
}

// probeAll runs ProbeJVM once per distinct option set.
func probeAll(ctx context.Context, home string, sets [][]string) []JVMSettings {
	var out []JVMSettings
	seen := map[string]bool{}
	for _, args := range sets {
		key := strings.Join(args, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		if ctx.Err() != nil {
			break
		}
		out = append(out, ProbeJVM(ctx, home, args))
	}
	return out
}
