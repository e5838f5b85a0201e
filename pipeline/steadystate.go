package pipeline

import (
	"github.com/threadlab/threadlab/render/console"
	"github.com/threadlab/threadlab/store/record"
)

// Steady state on the console: the per-fork selection itself is judging
// (verdicts.Steady, which the aggregate stage applies and writes to
// steady.json); this file logs what it did as the run goes, in
// console.SteadyLine's words (the terminal summary's too).

// logSteady logs each cell of the measured group whose forks were not all
// flat, as the run goes.
func (s *State) logSteady(st record.Steady) {
	for _, c := range st.Cells {
		if line := console.SteadyLine(c); line != "" && c.Group == s.M.Load.Measure {
			s.Logf("steady state: %s", line)
		}
	}
}
