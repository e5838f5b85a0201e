package experiments

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/env/targets"
)

// Trust model: a manifest is code, like a Makefile. Its command variants
// run any program, its jvm: options reach the java command line, its env:
// reaches every target's environment. threadlab runs them as given and
// never through a shell; what it promises is that they are visible:
// `threadlab lint` prints every command a manifest will run and warns on
// the options below, so a reviewer sees them in a pull request.

// Command is one program a manifest makes threadlab start.
type Command struct {
	Variant string
	Field   string   // where it comes from, e.g. variants.own.command
	Env     []string // KEY=value the variant adds to the environment, sorted
	Argv    []string // {port} and swept values stay as placeholders
}

// String is the command as a shell would read it, for review.
func (c Command) String() string {
	var q []string
	if len(c.Env) > 0 {
		q = append(q, "env")
		for _, e := range c.Env {
			q = append(q, shellQuote(e))
		}
	}
	for _, a := range c.Argv {
		q = append(q, shellQuote(a))
	}
	return strings.Join(q, " ")
}

// Commands lists every program the manifest starts, one per variant: the
// command of a command variant, or the java command line of a built-in
// target with its JVM options and Spring properties (swept ones as
// {key}), behind taskset when the manifest pins the target.
func Commands(m *Manifest) []Command {
	var out []Command
	for _, v := range m.Variants {
		c := Command{Variant: v.Name, Field: "variants." + v.Name + ".command"}
		if v.Target != "" {
			props := map[string]string{}
			for k, x := range v.Properties {
				props[k] = x
			}
			for _, d := range m.Sweep {
				if d.Property != "" {
					props[d.Property] = "{" + d.Name + "}"
				}
			}
			c.Field = "variants." + v.Name + ".jvm"
			c.Argv = targets.Command("$JAVA_HOME", targets.JarPathBoot("env/targets", v.Target, v.SpringBoot), 0, props, v.JVM)
			for i, a := range c.Argv {
				if a == "--server.port=0" {
					c.Argv[i] = "--server.port={port}"
				}
			}
		} else {
			c.Argv = append([]string(nil), v.Command...)
		}
		if m.Pinning.Target != "" {
			c.Argv = append([]string{"taskset", "-c", m.Pinning.Target}, c.Argv...)
		}
		for _, k := range slices.Sorted(maps.Keys(v.Env)) {
			c.Env = append(c.Env, k+"="+v.Env[k])
		}
		out = append(out, c)
	}
	return out
}

// riskyJVM are JVM options that run another program or replace what the
// JVM runs, with why a reviewer should look.
var riskyJVM = []struct{ prefix, why string }{
	{"-XX:OnOutOfMemoryError", "runs a shell command when the heap runs out"},
	{"-XX:OnError", "runs a shell command when the JVM crashes"},
	{"-jar", "replaces the target's jar with another program"},
	{"-javaagent", "loads an agent that can rewrite any class"},
	{"-agentpath", "loads a native library into the JVM"},
	{"-agentlib", "loads a native library into the JVM"},
	{"-Xbootclasspath", "replaces JDK classes"},
	{"-XX:VMOptionsFile", "reads more options from a file"},
	{"-XX:Flags", "reads more options from a file"},
	{"@", "reads more options from a file"},
	{"-cp", "changes the class path"},
	{"-classpath", "changes the class path"},
	{"--class-path", "changes the class path"},
}

// riskyEnv are environment variables that change what a process runs.
var riskyEnv = map[string]string{
	"JAVA_TOOL_OPTIONS": "adds JVM options, agents included, to every java process",
	"JDK_JAVA_OPTIONS":  "adds JVM options to the java launcher",
	"_JAVA_OPTIONS":     "adds JVM options to every java process",
	"LD_PRELOAD":        "loads a native library into the process",
	"LD_LIBRARY_PATH":   "changes which native libraries load",
}

// TrustWarnings are the warnings of lintTrust alone, for a profile whose
// other warnings are not of interest (lint shows them for every profile).
func TrustWarnings(m *Manifest) []Warning {
	var ws []Warning
	m.lintTrust(func(field, format string, a ...any) {
		ws = append(ws, Warning{File: m.File, Field: field, Msg: fmt.Sprintf(format, a...)})
	})
	return ws
}

// lintTrust warns on JVM options and environment variables that run
// programs or replace what runs: allowed (a manifest is code), but a
// reviewer must see them.
func (m *Manifest) lintTrust(warn func(string, string, ...any)) {
	for _, v := range m.Variants {
		for i, o := range v.JVM {
			for _, r := range riskyJVM {
				if strings.HasPrefix(o, r.prefix) {
					warn(fmt.Sprintf("variants.%s.jvm[%d]", v.Name, i), "JVM option %q %s: review it like code (a manifest is code; see Trust model in README.md)", o, r.why)
					break
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v.Env)) {
			if why, ok := riskyEnv[k]; ok {
				warn("variants."+v.Name+".env."+k, "%s %s: review it like code (a manifest is code; see Trust model in README.md)", k, why)
			}
		}
	}
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%{}$", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
