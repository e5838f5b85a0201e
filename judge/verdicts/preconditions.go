package verdicts

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/digits"
	"github.com/threadlab/threadlab/store/record"
)

// This file decides whether a claim applies on this host (issue 11): its
// requires: list (experiments.Precondition) and the variants it reads.
// A precondition that fails makes the verdict not applicable here, with
// the reason, instead of contradicted: the seed's statement was about a
// situation this host or this run did not produce (a target CPU that
// never saturated, too few cores, a JDK that is not installed).

// Host is what preconditions read besides the run's trials.
type Host struct {
	// Cores is the number of CPUs the target may use: its pinning when the
	// manifest pins it, else threadlab's CPU affinity recorded in the
	// fingerprint (cpu.allowed, else cpu.threads); 0 when unknown.
	Cores int
	// Skipped maps each variant that did not run on this host to why
	// (run.json's skipped_variants).
	Skipped map[string]string
	// Columns is the header of the run's trials.csv (TrialColumns): a
	// claim or a precondition on a metric whose column is not in it is not
	// decided. nil when unknown: every column counts as recorded.
	Columns []string
	// Series is the run's series.csv: the steady-state selection classifies
	// the forks of a timed load on their per-second series
	// (steady.go). nil: forks are classified on their iterations only.
	Series []record.Sample
}

// HostFacts reads a Host from a run's fingerprint.json (nil when absent)
// and run.json.
func HostFacts(m *experiments.Manifest, fingerprint []byte, meta record.Meta) Host {
	h := Host{Skipped: map[string]string{}}
	for _, x := range meta.Skipped {
		h.Skipped[x.Variant] = x.Reason
	}
	if m.Pinning.Target != "" {
		if cpus, err := env.ParseCPUList(m.Pinning.Target); err == nil && len(cpus) > 0 {
			h.Cores = len(cpus)
			return h
		}
	}
	var fp struct {
		CPU struct {
			Threads int    `json:"threads"`
			Allowed string `json:"allowed"`
		} `json:"cpu"`
	}
	if len(fingerprint) == 0 || json.Unmarshal(fingerprint, &fp) != nil {
		return h
	}
	h.Cores = fp.CPU.Threads
	if cpus, err := env.ParseCPUList(fp.CPU.Allowed); err == nil && len(cpus) > 0 {
		h.Cores = len(cpus)
	}
	return h
}

// applicability is what a claim's preconditions found.
type applicability struct {
	failed   string   // why the claim does not apply here; "" when it does
	unknown  string   // a precondition that could not be checked (no data, no core count)
	evidence []string // one line per precondition
}

// applyPreconditions turns a verdict into not applicable when a
// precondition failed, or inconclusive when one could not be checked and
// the verdict would otherwise decide; when all hold, their lines follow
// the verdict's own evidence.
func applyPreconditions(v *stats.Verdict, a applicability) {
	switch {
	case a.failed != "":
		stats.SetAside(v, a.failed, a.evidence)
	case a.unknown != "" && v.Status != stats.Inconclusive:
		why := "a precondition could not be checked: " + a.unknown
		v.Leans, v.Status, v.Reason, v.Open = v.Status, stats.Inconclusive, why, false
		v.Evidence = append(append(slices.Clone(a.evidence), why), v.Evidence...)
	default:
		v.Evidence = append(v.Evidence, a.evidence...)
	}
}

// checkPreconditions evaluates claim c on this run: every variant it reads
// must have run here, then each precondition in order. r is the run's
// reading: a precondition on a metric reads the cells a claim on it would
// (Reading.Cells); all is every row of trials.csv, invalid ones too (the
// generator rule counts windows the retries replaced).
func checkPreconditions(m *experiments.Manifest, c experiments.Claim, r *Reading, all []record.Trial, h Host) applicability {
	var a applicability
	for _, name := range claimVariants(c) {
		if why, ok := h.Skipped[name]; ok {
			a.failed = fmt.Sprintf("variant %s did not run on this host (%s)", name, strings.TrimRight(why, "."))
			a.evidence = append(a.evidence, fmt.Sprintf("precondition: variant %s runs here: fails, it was skipped: %s", name, why))
			return a
		}
	}
	for _, req := range c.Requires {
		var line, failed, unknown string
		switch {
		case req.Cores != nil:
			line, failed, unknown = checkCores(req.Cores, h)
		case req.Generator != "":
			line, failed, unknown = checkGenerator(preconditionCells(m, c, req), all)
		default:
			line, failed, unknown = checkMetric(req, preconditionCells(m, c, req), r.Cells(req.Metric), h)
		}
		a.evidence = append(a.evidence, "precondition: "+line)
		if failed != "" && a.failed == "" {
			a.failed = failed
		}
		if unknown != "" && a.unknown == "" {
			a.unknown = unknown
		}
	}
	return a
}

// claimVariants are the variants a claim reads: its check's and its
// preconditions', in that order, each once.
func claimVariants(c experiments.Claim) []string {
	names := slices.Clone(c.Check.Compare)
	if c.Check.Variant != "" {
		names = append(names, c.Check.Variant)
	}
	for _, r := range c.Requires {
		if r.Variant != "" {
			names = append(names, r.Variant)
		}
	}
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// preconditionCells are the cells a precondition reads, in schedule order:
// its variant (else the check's), at the points its where selects (else
// the points the check reads), in its group (else the check's, else the
// measured group).
func preconditionCells(m *experiments.Manifest, c experiments.Claim, r experiments.Precondition) []record.CellKey {
	sel := c.Check
	if r.Variant != "" {
		sel.Compare, sel.Variant = nil, r.Variant
	}
	if r.Where != nil {
		sel.Where, sel.FlatOver, sel.IncreasesOver, sel.DecreasesOver = r.Where, nil, nil, nil
	}
	group := r.Group
	if group == "" {
		group = c.Check.Group
	}
	if group == "" {
		group = m.Load.Measure
	}
	var out []record.CellKey
	for _, p := range m.Sweep.Points() { // the schedule's cells: each point, each variant
		for _, v := range m.Variants {
			if DependsOn(sel, v.Name, p) {
				out = append(out, record.CellKey{Variant: v.Name, Point: record.FormatPoint(p), Group: group})
			}
		}
	}
	return out
}

func cellName(k record.CellKey) string { return CellName(k.Variant, k.Point) }

// checkCores compares the target's CPUs with the bounds.
func checkCores(b *experiments.CoreBounds, h Host) (line, failed, unknown string) {
	var want string
	switch {
	case b.AtLeast != nil && b.AtMost != nil:
		want = fmt.Sprintf("%d to %d", *b.AtLeast, *b.AtMost)
	case b.AtLeast != nil:
		want = fmt.Sprintf("at least %d", *b.AtLeast)
	case b.AtMost != nil:
		want = fmt.Sprintf("at most %d", *b.AtMost)
	}
	if h.Cores <= 0 {
		unknown = "the target's CPU count is unknown (no fingerprint.json and no pinning), so cores " + want + " could not be checked"
		return "the target has " + want + " CPUs: unknown", "", unknown
	}
	ok := (b.AtLeast == nil || h.Cores >= *b.AtLeast) && (b.AtMost == nil || h.Cores <= *b.AtMost)
	line = fmt.Sprintf("the target has %s CPUs: it had %d, %s", want, h.Cores, holdsText(ok))
	if !ok {
		failed = fmt.Sprintf("it needs %s CPUs for the target, and this host gave it %d", want, h.Cores)
	}
	return line, failed, ""
}

// checkGenerator fails when, in a cell, the load generator saturated in
// half or more of the measured windows: the retries then kept only the
// windows where it happened to keep up, and the host cannot drive that
// load.
func checkGenerator(keys []record.CellKey, all []record.Trial) (line, failed, unknown string) {
	var parts []string
	for _, k := range keys {
		n, sat := 0, 0
		for _, t := range all {
			if t.Key() == k {
				n++
				if t.GenSaturated {
					sat++
				}
			}
		}
		if n == 0 {
			if unknown == "" {
				unknown = "no window of " + cellName(k) + " ran, so whether the load generator kept up is unknown"
			}
			parts = append(parts, cellName(k)+": no windows")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %d of %d", cellName(k), sat, n))
		if 2*sat >= n && sat > 0 && failed == "" {
			failed = fmt.Sprintf("the load generator saturated in %d of %d windows of %s: this host cannot drive that load and measure it too", sat, n, cellName(k))
		}
	}
	if len(keys) == 0 {
		unknown = "the generator precondition selects no cell of this run"
	}
	line = "the load generator kept up (saturated windows of all windows, valid or re-run; fails at half or more): " + strings.Join(parts, ", ")
	return line + ", " + holdsText(failed == "" && unknown == ""), failed, unknown
}

// checkMetric compares the median over forks of a metric in every cell
// with the bounds, per CPU when per_core is set.
func checkMetric(r experiments.Precondition, keys []record.CellKey, valid map[record.CellKey][]record.Trial, h Host) (line, failed, unknown string) {
	want := boundsText(r)
	if col, missing := h.unrecorded(r.Metric); missing {
		unknown = fmt.Sprintf("this run's %s has no %s column (recorded before threadlab measured it), so %s %s could not be checked",
			record.TrialsFile, col, r.Metric, want)
		return r.Metric + " " + want + ": not recorded in this run", "", unknown
	}
	if r.PerCore {
		if h.Cores <= 0 {
			unknown = fmt.Sprintf("the target's CPU count is unknown, so %s %s could not be checked", r.Metric, want)
			return r.Metric + " " + want + ": unknown", "", unknown
		}
	}
	var parts []string
	for _, k := range keys {
		xs := medians(valid[k], r.Metric)
		if len(xs) == 0 {
			if unknown == "" {
				unknown = fmt.Sprintf("%s has no valid %s to check %s against", cellName(k), r.Metric, want)
			}
			parts = append(parts, cellName(k)+": no data")
			continue
		}
		med := stats.Median(xs)
		x, shown := med, num(med)
		if r.PerCore {
			x = med / float64(h.Cores)
			shown = fmt.Sprintf("%s (%s per CPU on %d)", num(med), num(x), h.Cores)
		}
		parts = append(parts, fmt.Sprintf("%s: %s", cellName(k), shown))
		if failed != "" {
			continue
		}
		if lo, ok := stats.Bound(r.AtLeast); ok && x < lo {
			failed = fmt.Sprintf("%s of %s is %s, below the %s the claim needs", r.Metric, cellName(k), shown, want)
		} else if hi, ok := stats.Bound(r.AtMost); ok && x > hi {
			failed = fmt.Sprintf("%s of %s is %s, above the %s the claim needs", r.Metric, cellName(k), shown, want)
		}
	}
	if len(keys) == 0 {
		unknown = fmt.Sprintf("the %s precondition selects no cell of this run", r.Metric)
	}
	line = fmt.Sprintf("%s %s (median over forks): %s, %s", r.Metric, want, strings.Join(parts, ", "), holdsText(failed == "" && unknown == ""))
	return line, failed, unknown
}

// boundsText says a metric precondition's bounds: "at least 90 per CPU".
func boundsText(r experiments.Precondition) string {
	var parts []string
	if lo, ok := stats.Bound(r.AtLeast); ok {
		parts = append(parts, "at least "+num(lo))
	}
	if hi, ok := stats.Bound(r.AtMost); ok {
		parts = append(parts, "at most "+num(hi))
	}
	s := strings.Join(parts, " and ")
	if r.PerCore {
		s += " per CPU"
	}
	return s
}

func holdsText(ok bool) string {
	if ok {
		return "holds"
	}
	return "fails"
}

// num prints a value to one decimal, without a trailing ".0".
func num(x float64) string { return digits.Format(x, digits.Tenths) }
