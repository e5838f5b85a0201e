package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/env/targets"
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/record"
	"github.com/threadlab/threadlab/pipeline/replicate"
)

// resolveJDKs picks the JDK of every built-in variant that asks for one
// (jdk: N): a JDK of that feature release from JDK<N>_HOME, JAVA_HOME, the
// repository's .cache/jdk<N> (scripts/setup.sh) or /usr/lib/jvm
// (find is targets.ReleaseFinder outside tests). A variant whose JDK is
// not installed, or that asks for a release the targets cannot run on, is
// skipped: its forks leave the schedule, run.json lists it with why
// (skipped_variants), and every claim that reads it is not applicable here
// (verdicts.Evaluate). The other variants run on the run's JDK, JavaHome.
func (s *State) resolveJDKs(find func(major int) (home, version string, err error)) {
	s.javaHomes = map[string]string{}
	s.Meta.Skipped, s.Meta.JDKs = nil, nil
	for _, v := range s.M.Variants {
		if v.Target == "" || v.JDK == 0 {
			continue
		}
		if v.JDK < targets.MinJDK {
			s.skipVariant(v, fmt.Sprintf("jdk: %d, but the built-in targets are compiled for Java %d (virtual threads; env/targets/pom.xml), so they cannot run on Java %d", v.JDK, targets.MinJDK, v.JDK))
			continue
		}
		home, version, err := find(v.JDK)
		if err != nil {
			s.skipVariant(v, fmt.Sprintf("jdk: %d: %v", v.JDK, err))
			continue
		}
		s.javaHomes[v.Name] = home
		s.Meta.JDKs = append(s.Meta.JDKs, record.VariantJDK{Variant: v.Name, JDK: v.JDK, Version: version, Home: home})
		s.Logf("variant %s: JDK %s at %s", v.Name, version, home)
	}
}

// skipVariant takes a variant out of the run, saying why.
func (s *State) skipVariant(v experiments.Variant, why string) {
	s.Meta.Skipped = append(s.Meta.Skipped, record.SkippedVariant{Variant: v.Name, JDK: v.JDK, Reason: why})
	s.Warn("variant %s skipped: %s; the claims that read it are not applicable here", v.Name, why)
	s.Jobs = slices.DeleteFunc(s.Jobs, func(j replicate.Job) bool { return j.Cell.Variant.Name == v.Name })
	s.Meta.Order = slices.DeleteFunc(s.Meta.Order, func(k string) bool { return strings.HasPrefix(k, v.Name+"|") }) // variant|point|fork
	for _, c := range replicate.Cells(s.M) {
		if c.Variant.Name == v.Name && s.rep != nil {
			s.rep.Stop(c.ID(), "variant skipped: "+why) // run.json's cells say why they have no forks
		}
	}
}

// skipped tells whether a variant was taken out of the run.
func (s *State) skipped(variant string) bool {
	return slices.ContainsFunc(s.Meta.Skipped, func(x record.SkippedVariant) bool { return x.Variant == variant })
}

// javaHome is the JDK a variant's built-in target runs on: the one its
// jdk: asked for, else the run's.
func (s *State) javaHome(variant string) string {
	if h, ok := s.javaHomes[variant]; ok {
		return h
	}
	return s.JavaHome
}
