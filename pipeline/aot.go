package pipeline

import (
	"context"
	"slices"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/env/targets"
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/record"
)

// aotStart is what launch runs for a variant's built-in target: the jar
// and the JVM options appended to the variant's own (the AOT cache's).
type aotStart struct {
	Jar   string
	Extra []string
	Used  *targets.AOT // nil without the cache
}

// prepareAOT decides, per variant with a built-in target, how it starts:
// from the JDK AOT cache (trained now if this jar, JDK and JVM options
// have none yet) when the manifest's aot_cache is on, else from its fat
// jar. A failed training (a JDK before 25, a target that does not start)
// is a warning and the variant runs without the cache: the cache only
// makes starts cheaper, so it must never cost the run.
func (s *State) prepareAOT(ctx context.Context) error {
	s.starts = map[string]aotStart{}
	s.Meta.AOT = nil
	for _, v := range s.M.Variants {
		if v.Target == "" || s.skipped(v.Name) {
			continue
		}
		fat := s.jarOf(v.Target, v.SpringBoot)
		rec := record.AOTStart{Variant: v.Name, Target: v.Target, Asked: s.M.AOT(), Jar: fat}
		jar, extra, used, err := targets.Start(ctx, s.M.AOT(), s.javaHome(v.Name), v.Target, fat, v.JVM, s.Opt.Log)
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			s.Warn("AOT cache for %s (%s): %v; it starts without the cache (set aot_cache: false to skip the training)", v.Name, v.Target, err)
			jar, extra, used = fat, nil, nil
			rec.Note = "training failed: " + err.Error()
		case used == nil && s.M.AOT():
			rec.Note = "the variant sets an AOT option itself (jvm); started from the extracted jar without the cache"
		}
		rec.Jar, rec.JVMArgs = jar, extra
		if used != nil {
			rec.Used, rec.Cache, rec.TrainedMs = true, used.Cache, used.TrainedMs
			s.Logf("AOT cache for %s: %s", v.Name, used.Cache)
		}
		s.starts[v.Name] = aotStart{Jar: jar, Extra: extra, Used: used}
		s.Meta.AOT = append(s.Meta.AOT, rec)
	}
	return nil
}

// startOf is the jar and the extra JVM options a variant's built-in target
// starts with; the fat jar alone when Build did not decide (tests that set
// Jars directly).
func (s *State) startOf(v experiments.Variant) (string, []string) {
	if a, ok := s.starts[v.Name]; ok {
		return a.Jar, a.Extra
	}
	return s.jarOf(v.Target, v.SpringBoot), nil
}

// bootOf is the Spring Boot version of a variant: its spring_boot, which
// Normalize fills, or the default for a manifest built in a test.
func bootOf(version string) string {
	if version == "" {
		return targets.DefaultBoot
	}
	return version
}

// jarKey is the key of State.Jars: the target's name on the default
// Spring Boot (as tests set it), target@version on another.
func jarKey(target, version string) string {
	if bootOf(version) == targets.DefaultBoot {
		return target
	}
	return target + "@" + version
}

// jarOf is the fat jar of a built-in target on a Spring Boot version.
func (s *State) jarOf(target, version string) string {
	return s.Jars[jarKey(target, version)]
}

// bootVersions are the Spring Boot versions the run's built-in variants
// are built on, each once.
func (s *State) bootVersions() []string {
	var out []string
	for _, v := range s.M.Variants {
		if v.Target != "" && !slices.Contains(out, bootOf(v.SpringBoot)) {
			out = append(out, bootOf(v.SpringBoot))
		}
	}
	return out
}

// aotCaches lists the caches the run uses for the fingerprint, one per
// distinct cache.
func (s *State) aotCaches() []env.AOTCache {
	var out []env.AOTCache
	for _, v := range s.M.Variants {
		a := s.starts[v.Name].Used
		if a == nil || slices.ContainsFunc(out, func(c env.AOTCache) bool { return c.Cache == a.Cache }) {
			continue
		}
		out = append(out, env.AOTCache{Target: a.Target, Cache: a.Cache, JarSHA256: a.JarSHA256, Key: a.Key,
			Bytes: a.Bytes, JVMArgs: a.StartArgs(), TrainedMs: a.TrainedMs})
	}
	return out
}

// jvmArgSets are the variants' JVM option sets, for the fingerprint's
// probe of effective settings (each distinct set once, the empty set too).
func (s *State) jvmArgSets() [][]string {
	var out [][]string
	for _, v := range s.M.Variants {
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
