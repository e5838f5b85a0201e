package trial

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/env/targets"
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/store/record"
)

// JVMs is how each variant's built-in target starts: the JDK it runs on
// (its jdk:, else the run's), the fat jar of its target on its Spring Boot
// version, and the jar and JVM options of its AOT cache. The build stage
// fills it (Jars, ResolveJDKs, PrepareAOT); every launch reads it.
type JVMs struct {
	JavaHome string            // the run's JDK
	Jars     map[string]string // fat jar by JarKey(target, Spring Boot version)
	// homes are the JDKs of variants that asked for one (jdk:), by
	// variant; the others run on JavaHome.
	homes  map[string]string
	starts map[string]aotStart // variant -> jar and AOT options it starts with
}

// aotStart is what a launch runs for a variant's built-in target: the jar
// and the JVM options appended to the variant's own (the AOT cache's).
type aotStart struct {
	Jar   string
	Extra []string
	Used  *targets.AOT // nil without the cache
}

// ResolveJDKs picks the JDK of every built-in variant that asks for one
// (jdk: N): a JDK of that feature release from JDK<N>_HOME, JAVA_HOME, the
// repository's .cache/jdk<N> (scripts/setup.sh) or /usr/lib/jvm
// (find is targets.ReleaseFinder outside tests). A variant whose JDK is
// not installed, or that asks for a release the targets cannot run on, is
// handed to skip with why: the orchestrator takes its forks out of the
// schedule, run.json lists it (skipped_variants), and every claim that
// reads it is not applicable here (verdicts.Evaluate). The other variants
// run on the run's JDK, JavaHome. It returns the JDKs found, for run.json.
func (j *JVMs) ResolveJDKs(m *experiments.Manifest, find func(major int) (home, version string, err error), skip func(v experiments.Variant, why string), logf func(format string, a ...any)) []record.VariantJDK {
	j.homes = map[string]string{}
	var out []record.VariantJDK
	for _, v := range m.Variants {
		if v.Target == "" || v.JDK == 0 {
			continue
		}
		if v.JDK < targets.MinJDK {
			skip(v, fmt.Sprintf("jdk: %d, but the built-in targets are compiled for Java %d (virtual threads; env/targets/pom.xml), so they cannot run on Java %d", v.JDK, targets.MinJDK, v.JDK))
			continue
		}
		home, version, err := find(v.JDK)
		if err != nil {
			skip(v, fmt.Sprintf("jdk: %d: %v", v.JDK, err))
			continue
		}
		j.homes[v.Name] = home
		out = append(out, record.VariantJDK{Variant: v.Name, JDK: v.JDK, Version: version, Home: home})
		logf("variant %s: JDK %s at %s", v.Name, version, home)
	}
	return out
}

// JavaHomeOf is the JDK a variant's built-in target runs on: the one its
// jdk: asked for, else the run's.
func (j *JVMs) JavaHomeOf(variant string) string {
	if h, ok := j.homes[variant]; ok {
		return h
	}
	return j.JavaHome
}

// PrepareAOT decides, per variant with a built-in target, how it starts:
// from the JDK AOT cache (trained now if this jar, JDK and JVM options
// have none yet) when the manifest's aot_cache is on, else from its fat
// jar. A failed training (a JDK before 25, a target that does not start)
// is a warning and the variant runs without the cache: the cache only
// makes starts cheaper, so it must never cost the run. Variants skipped
// says are left out; out gets the training's output. It returns what
// run.json records of each start.
func (j *JVMs) PrepareAOT(ctx context.Context, m *experiments.Manifest, skipped func(variant string) bool, out io.Writer, warn, logf func(format string, a ...any)) ([]record.AOTStart, error) {
	j.starts = map[string]aotStart{}
	var recs []record.AOTStart
	for _, v := range m.Variants {
		if v.Target == "" || skipped(v.Name) {
			continue
		}
		fat := j.JarOf(v.Target, v.SpringBoot)
		rec := record.AOTStart{Variant: v.Name, Target: v.Target, Asked: m.AOT(), Jar: fat}
		jar, extra, used, err := targets.Start(ctx, m.AOT(), j.JavaHomeOf(v.Name), v.Target, fat, v.JVM, out)
		switch {
		case err != nil && ctx.Err() != nil:
			return recs, ctx.Err()
		case err != nil:
			warn("AOT cache for %s (%s): %v; it starts without the cache (set aot_cache: false to skip the training)", v.Name, v.Target, err)
			jar, extra, used = fat, nil, nil
			rec.Note = "training failed: " + err.Error()
		case used == nil && m.AOT():
			rec.Note = "the variant sets an AOT option itself (jvm); started from the extracted jar without the cache"
		}
		rec.Jar, rec.JVMArgs = jar, extra
		if used != nil {
			rec.Used, rec.Cache, rec.TrainedMs = true, used.Cache, used.TrainedMs
			logf("AOT cache for %s: %s", v.Name, used.Cache)
		}
		j.starts[v.Name] = aotStart{Jar: jar, Extra: extra, Used: used}
		recs = append(recs, rec)
	}
	return recs, nil
}

// StartOf is the jar and the extra JVM options a variant's built-in target
// starts with; the fat jar alone when PrepareAOT did not decide (tests
// that set Jars directly).
func (j *JVMs) StartOf(v experiments.Variant) (string, []string) {
	if a, ok := j.starts[v.Name]; ok {
		return a.Jar, a.Extra
	}
	return j.JarOf(v.Target, v.SpringBoot), nil
}

// BootOf is the Spring Boot version of a variant: its spring_boot, which
// Normalize fills, or the default for a manifest built in a test.
func BootOf(version string) string {
	if version == "" {
		return targets.DefaultBoot
	}
	return version
}

// JarKey is the key of Jars: the target's name on the default Spring Boot
// (as tests set it), target@version on another.
func JarKey(target, version string) string {
	if BootOf(version) == targets.DefaultBoot {
		return target
	}
	return target + "@" + version
}

// JarOf is the fat jar of a built-in target on a Spring Boot version.
func (j *JVMs) JarOf(target, version string) string {
	return j.Jars[JarKey(target, version)]
}

// BootVersions are the Spring Boot versions m's built-in variants are
// built on, each once.
func BootVersions(m *experiments.Manifest) []string {
	var out []string
	for _, v := range m.Variants {
		if v.Target != "" && !slices.Contains(out, BootOf(v.SpringBoot)) {
			out = append(out, BootOf(v.SpringBoot))
		}
	}
	return out
}

// AOTCaches lists the caches m's variants start from, for the
// fingerprint, one per distinct cache.
func (j *JVMs) AOTCaches(m *experiments.Manifest) []env.AOTCache {
	var out []env.AOTCache
	for _, v := range m.Variants {
		a := j.starts[v.Name].Used
		if a == nil || slices.ContainsFunc(out, func(c env.AOTCache) bool { return c.Cache == a.Cache }) {
			continue
		}
		out = append(out, env.AOTCache{Target: a.Target, Cache: a.Cache, JarSHA256: a.JarSHA256, Key: a.Key,
			Bytes: a.Bytes, JVMArgs: a.StartArgs(), TrainedMs: a.TrainedMs})
	}
	return out
}

// JVMArgSets are m's variants' JVM option sets, for the fingerprint's
// probe of effective settings (each distinct set once, the empty set too).
func JVMArgSets(m *experiments.Manifest) [][]string {
	var out [][]string
	for _, v := range m.Variants {
		if v.Target == "" {
			continue
		}
		set := append([]string{}, v.JVM...)
		if !slices.ContainsFunc(out, func(o []string) bool { return slices.Equal(o, set) }) {
			out = append(out, set)
		}
	}
	return out
}
