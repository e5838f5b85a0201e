package console

import (
	"fmt"
	"io"
	"strings"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/judge/verdicts"
	"github.com/threadlab/threadlab/stats/steady"
	"github.com/threadlab/threadlab/store/record"
)

// steadyLines prints, in the terminal summary, one line per measured cell
// whose forks were not all flat. A run without steady.json prints nothing.
func steadyLines(w io.Writer, dir string, m record.Meta) error {
	st, ok, err := record.ReadSteady(dir)
	if err != nil || !ok {
		return err
	}
	head := false
	if fi := st.FirstIteration; fi != nil && fi.Excluded {
		fmt.Fprintf(w, "%s\n", firstIterationLine(st.Metric, fi))
	}
	for _, c := range st.Cells {
		line := SteadyLine(c)
		if line == "" || c.Group != m.Measured {
			continue
		}
		if !head {
			fmt.Fprintf(w, "steady state of %s (each fork's iterations before its steady state are left out; forks with none are excluded):\n", st.Metric)
			head = true
		}
		fmt.Fprintf(w, "  %s\n", line)
	}
	return nil
}

// SteadyLine describes a cell that is not all flat; "" when it is: how
// the run log and the terminal summary say what steady-state selection did.
func SteadyLine(c record.SteadyCell) string {
	classified, few := 0, 0
	for _, n := range c.Counts {
		classified += n
	}
	for _, f := range c.Forks {
		if f.Basis == "too few points" {
			few++
		}
	}
	if c.Cold || (c.Counts[string(steady.Flat)] == classified && few == 0) {
		return ""
	}
	var parts []string
	if classified > 0 {
		parts = append(parts, fmt.Sprintf("forks %s (%s), %d iteration(s) excluded", countsText(c.Counts), c.Consistency, c.Excluded))
	}
	if n := len(c.ExcludedForks); n > 0 {
		parts = append(parts, fmt.Sprintf("fork %s never reached a steady state and is excluded (%d steady fork(s) left): raise load.warmup's max", verdicts.ForkList(c.ExcludedForks), c.SteadyForks))
	}
	if few > 0 {
		parts = append(parts, fmt.Sprintf("%d fork(s) with fewer than %d points not classified (raise iterations or the window)", few, experiments.MinSteadyPoints))
	}
	return verdicts.CellName(c.Variant, c.Point) + ": " + strings.Join(parts, "; ")
}

// countsText renders class counts in a fixed order: "2 flat, 1 warmup".
func countsText(counts map[string]int) string {
	var parts []string
	for _, k := range []steady.Class{steady.Flat, steady.Warmup, steady.Slowdown, steady.NoSteadyState} {
		if n := counts[string(k)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	return strings.Join(parts, ", ")
}

// firstIterationLine describes the run-wide first-iteration test that
// runs made before issue 20 recorded in steady.json (no new run makes it).
func firstIterationLine(metric string, fi *record.FirstIteration) string {
	return fmt.Sprintf("warm-up too short: the first measured iteration's %s was worse than its fork's later ones in %d of %d forks "+
		"(one-sided sign test p=%s), so the first iteration of every fork was left out (a run made before per-fork steady state)",
		metric, fi.Worse, fi.Worse+fi.Better, fmt.Sprintf("%.2g", fi.P))
}
