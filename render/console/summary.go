package console

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// Summary prints the one-screen text summary of a run directory: the
// primary metric and p99 per cell with their intervals and flags, invalid
// trials, and the claim verdicts.
func Summary(w io.Writer, dir string) error {
	r, err := record.Read(dir)
	if err != nil {
		return err
	}
	m := r.Meta
	fmt.Fprintf(w, "\n%s (%s, profile %s, %s)\n", m.Title, m.ID, m.Profile, m.State)
	get := map[string]record.Summary{}
	for _, s := range r.Summary {
		get[s.Variant+"|"+s.Point+"|"+s.Group+"|"+s.Metric] = s
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "variant\tpoint\tn\t%s median [95%% CI]\tp99_ms median\tthreads\tflags\n", m.Primary)
	points := []string{}
	seen := map[string]bool{}
	for _, s := range r.Summary {
		if !seen[s.Point] {
			seen[s.Point] = true
			points = append(points, s.Point)
		}
	}
	for _, p := range points {
		for _, v := range m.Variants {
			s, ok := get[v+"|"+p+"|"+m.Measured+"|"+m.Primary]
			if !ok {
				continue
			}
			p99 := get[v+"|"+p+"|"+m.Measured+"|p99_ms"]
			th := get[v+"|"+p+"|"+m.Measured+"|distinct_threads"]
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.1f\t%.0f\t%s\n", v, orDash(p), s.N, interval(s), p99.Median, th.Median, orDash(s.Flags))
		}
	}
	tw.Flush()
	invalid := 0
	for _, t := range r.Trials {
		if !t.Valid {
			invalid++
		}
	}
	if invalid > 0 {
		fmt.Fprintf(w, "%d trial row(s) invalid and left out of the statistics (see trials.csv, column reason)\n", invalid)
	}
	for _, x := range m.Skipped {
		fmt.Fprintf(w, "variant %s skipped: %s\n", x.Variant, x.Reason)
	}
	replicationLines(w, r)
	affinityLines(w, m)
	if err := steadyLines(w, dir, m); err != nil {
		return err
	}
	vs, err := r.ReadVerdicts()
	if err != nil {
		return err
	}
	if len(vs) > 0 {
		fmt.Fprintln(w, "\nclaims:")
		for _, v := range vs {
			fmt.Fprintf(w, "  %-13s %s\n", stats.StatusText(v.Status), v.Says)
			switch {
			case v.Status == stats.NotApplicable:
				fmt.Fprintf(w, "  %-13s %s\n", "", v.Reason) // says which precondition failed, and how
			case len(v.Evidence) > 0:
				fmt.Fprintf(w, "  %-13s %s\n", "", v.Evidence[0])
			}
		}
	}
	for _, x := range m.Warnings {
		fmt.Fprintf(w, "warning: %s\n", x)
	}
	return nil
}

// replicationLines says how the cells were replicated ("5 forks x 4
// iterations per cell (fresh JVM per fork, 2s warm-up)"), how each cell's
// replication ended when it is worth saying (re-runs, an early stop, a
// shortfall) and where the wall time went.
func replicationLines(w io.Writer, r *record.Run) {
	m := r.Meta
	if m.Forks != "" {
		fmt.Fprintf(w, "%s; n counts forks, each the median of its iterations\n", Design(m.Forks, m.Iterations, r.Manifest))
	}
	for _, c := range m.Cells {
		if c.Retries == 0 && c.Reason == "planned n reached" {
			continue
		}
		cell := c.Variant
		if c.Point != "" {
			cell += " " + c.Point
		}
		fmt.Fprintf(w, "  %s: %d fork(s), %s; %d re-run(s)\n", cell, c.Forks, c.Reason, c.Retries)
	}
	if line := DeadTime(m.Time); line != "" {
		fmt.Fprintln(w, line)
	}
}

// Design says a run's replication in one phrase: "5 forks x 4 iterations
// per cell (fresh JVM per fork, 2s warm-up)", from run.json's plan and the
// manifest as run (a fresh process, not a JVM, for command targets).
func Design(forks string, iterations int, manifest []byte) string {
	mi, _ := record.ParseManifestInfo(manifest) // an old or odd manifest: the plain words
	fresh := "fresh JVM per fork"
	for _, v := range mi.Variants {
		if v.Target == "" {
			fresh = "fresh process per fork"
		}
	}
	if len(mi.Variants) == 0 {
		fresh = "fresh target per fork"
	}
	warm := "no warm-up"
	switch w := mi.Load.Warmup; {
	case w.Steady():
		warm = fmt.Sprintf("warm-up until steady, %s to %s", w.Min, w.Max)
	case w.Min > 0:
		warm = w.Min.String() + " warm-up"
	}
	iterations = max(iterations, 1)
	return fmt.Sprintf("%s fork%s x %d iteration%s per cell (%s, %s)", forks, plural(forks != "1"), iterations, plural(iterations != 1), fresh, warm)
}

func plural(many bool) string {
	if many {
		return "s"
	}
	return ""
}

// affinityLines shows the pinning asked beside the CPU affinity read back
// from the processes, per role, with every mismatch marked.
func affinityLines(w io.Writer, m record.Meta) {
	if len(m.Affinity) == 0 {
		return
	}
	fmt.Fprintln(w, "CPU affinity, asked and read back from the kernel:")
	var roles []string
	by := map[string][]record.Affinity{}
	for _, a := range m.Affinity {
		if by[a.Role] == nil {
			roles = append(roles, a.Role)
		}
		by[a.Role] = append(by[a.Role], a)
	}
	for _, role := range roles {
		es := by[role]
		sort.SliceStable(es, func(i, j int) bool {
			if es[i].Mismatch != es[j].Mismatch {
				return !es[i].Mismatch
			}
			return es[i].Actual < es[j].Actual
		})
		var parts []string
		for _, a := range es {
			parts = append(parts, AffinityText(a))
		}
		fmt.Fprintf(w, "  %s: %s\n", role, strings.Join(parts, "; "))
	}
}

// AffinityText is one read-back result: "asked 1, read back 1 in 30
// processes", marked when the threads differ or it is not what was asked.
func AffinityText(a record.Affinity) string {
	asked := a.Asked
	if asked == "" {
		asked = "none"
	}
	s := fmt.Sprintf("asked %s, read back %s in %d process%s", asked, a.Actual, a.Processes, map[bool]string{true: "es"}[a.Processes != 1])
	if a.Mixed {
		s += " (threads differ)"
	}
	if a.Mismatch {
		s += " (MISMATCH)"
	}
	return s
}

func interval(s record.Summary) string {
	if math.IsNaN(s.Low) || math.IsNaN(s.High) || (s.Low == 0 && s.High == 0) {
		return fmt.Sprintf("%.1f (min %.1f, max %.1f)", s.Median, s.Min, s.Max)
	}
	return fmt.Sprintf("%.1f [%.1f, %.1f]", s.Median, s.Low, s.High)
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// DeadTime is the terminal summary's line about where the wall time went:
// "measured 180 s of 403 s wall (45%); starts 31%, warm-ups 12%, ...".
func DeadTime(w *record.WallClock) string {
	if w == nil || w.Wall <= 0 {
		return ""
	}
	var parts []string
	for _, b := range record.StageOrder[1:] {
		if x := w.Stages[b]; x >= 0.005*w.Wall {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", b, 100*x/w.Wall))
		}
	}
	line := fmt.Sprintf("measured %.0f s of %.0f s wall (%.0f%%); dead time %.0f%% (wall time outside measurement; the catalog's goal is 35%% or less)",
		w.Measured, w.Wall, 100*w.Measured/w.Wall, 100-100*w.Measured/w.Wall)
	if len(parts) > 0 {
		line += ": " + strings.Join(parts, ", ")
	}
	return line
}
