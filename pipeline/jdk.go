package pipeline

import (
	"slices"
	"strings"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/store/record"
)

// resolveJDKs gives each built-in variant that asks for a JDK its own
// (trial.JVMs.ResolveJDKs, with find), records them in run.json and skips
// the variants whose JDK cannot be had.
func (s *State) resolveJDKs(find func(major int) (home, version string, err error)) {
	s.Meta.Skipped, s.Meta.JDKs = nil, nil
	s.Meta.JDKs = s.JVM.ResolveJDKs(s.M, find, s.skipVariant, s.Logf)
}

// skipVariant takes a variant out of the run, saying why: its forks
// leave the schedule, run.json lists it (skipped_variants) and its cells
// say why they have no forks (trial.JVMs.ResolveJDKs decides).
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
