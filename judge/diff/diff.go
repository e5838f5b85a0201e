// Package diff compares two runs of an experiment the way benchstat compares
// two benchmark files, for a reviewer who must decide whether a change made
// things faster, slower, or nothing that the noise allows to say.
//
// Data moves through it like this: Runs takes two run directories read back
// by package record, compares their fingerprints first (env.Compare: another
// CPU or JDK explains a difference as well as the change does), then, per
// metric, gathers the valid trials of every cell (variant x sweep point x
// request group) on both sides as forks (each fork the median of its
// steady-state iterations: a fork is the unit of replication, as in the
// verdicts), summarizes each side over its fork medians with the verdicts'
// 90% hierarchical bootstrap interval (stats.MedianInterval,
// stats.RatioInterval), flags noisy cells (stats.Flags), compares old and
// new with the Mann-Whitney U test at the verdicts' level in each direction
// (stats.Compare) and applies Holm's correction across the cells of the
// metric (stats.AdjustHolm). The
// Result renders as Markdown for a pull request or as aligned text for a
// terminal; every warning is data in the Result before it is prose.
package diff

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/judge/verdicts"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// Options choose what Runs compares. Zero values mean defaults.
type Options struct {
	// Metrics are trials.csv columns, one table each, in this order.
	// Default: the runs' primary metric (wall_ms for a burst, rps
	// otherwise), then the metrics a diff shows by default,
	// metric.Shown(metric.InDiff): rps, p50_ms and p99_ms.
	Metrics []string
	// Alpha is the one-sided level of each direction, as the verdicts use
	// it (default stats.Alpha, 0.05): the two-sided test runs at 2×Alpha
	// and the intervals are 1−2×Alpha (90%).
	Alpha float64
}

// Side describes one of the two runs.
type Side struct {
	Dir        string `json:"dir"`
	ID         string `json:"id"`
	Experiment string `json:"experiment"`
	Profile    string `json:"profile"`
	State      string `json:"state"`
	Trials     int    `json:"trials"`  // rows of the measured group in trials.csv
	Invalid    int    `json:"invalid"` // of those, left out of the statistics
	Primary    string `json:"primary_metric"`
}

// Result is a finished comparison of an old run (A) and a new run (B).
type Result struct {
	Old, New Side
	// Fingerprint lists every fingerprint field that differs, those that
	// can move the numbers (Matters) first. Nil when both runs have a
	// fingerprint and they agree.
	Fingerprint []env.Difference
	// NoFingerprint names the sides ("old", "new") without a
	// fingerprint.json: nothing then says where their numbers come from.
	NoFingerprint []string
	// Design lists differences in what the runs measured: another
	// experiment, profile or manifest, or a run that did not complete.
	Design []string
	Tables []Table
	// Alpha is the two-sided level of the row tests (2× the verdicts'
	// one-sided level), Level that one-sided level: intervals are 1−2×Level.
	Alpha float64
	Level float64
	// Verdicts pairs each claim's verdict in both runs.
	Verdicts []VerdictChange
	// Fingerprints is every fingerprint field of both runs, side by side.
	Fingerprints []FingerprintRow
}

// Table is the comparison of one metric across every cell.
type Table struct {
	Metric         string
	HigherIsBetter bool
	Rows           []Row
	// Family is how many comparisons Holm's correction ran over.
	Family int
	// Geomean summarizes the table: the geometric mean of new/old medians.
	Geomean Geomean
}

// Row is one cell: a variant at a sweep point in a request group.
type Row struct {
	Variant, Point, Group string
	// Old and New summarize each side's fork medians (a fork is the unit
	// of replication, as on the run pages; each fork is the median of its
	// valid steady-state iterations); N counts forks and is 0 when the
	// cell is missing from that run.
	Old, New           stats.Summary
	OldForks, NewForks [][]float64
	// OldLow..NewHigh bound each side's median, RatioLow and RatioHigh
	// new/old, by the hierarchical bootstrap at the verdicts' level.
	OldLow, OldHigh, NewLow, NewHigh float64
	RatioLow, RatioHigh              float64
	OldFlags, NewFlags               []stats.Flag
	// OldInvalid and NewInvalid count trials left out, with their reasons.
	OldInvalid, NewInvalid []string
	// Cmp compares new against old; nil when either side has no trials.
	Cmp *stats.Comparison
}

// Regression reports whether the row got significantly worse.
func (r Row) Regression(higherIsBetter bool) bool {
	return r.Cmp != nil && r.Cmp.Regression(higherIsBetter)
}

// Regression is a row that got significantly worse, for
// `threadlab diff --fail-on-regression`.
type Regression struct {
	Metric string
	Row    Row
}

func (g Regression) String() string {
	return fmt.Sprintf("%s %s: %s -> %s (%s, p=%s)", g.Metric, cellName(g.Row), num(g.Row.Old.Median),
		num(g.Row.New.Median), g.Row.Cmp.Verdict, fmtP(g.Row.Cmp.PAdj))
}

// Regressions lists every significant change for the worse, table by table.
func (r *Result) Regressions() []Regression {
	var out []Regression
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			if row.Regression(t.HigherIsBetter) {
				out = append(out, Regression{Metric: t.Metric, Row: row})
			}
		}
	}
	return out
}

// Mismatch lists the fingerprint differences that can move the numbers on
// their own (another CPU, JDK, kernel, cgroup limit...).
func (r *Result) Mismatch() []env.Difference {
	var out []env.Difference
	for _, d := range r.Fingerprint {
		if d.Matters {
			out = append(out, d)
		}
	}
	return out
}

// Runs compares run b (new) against run a (old).
func Runs(a, b *record.Run, opt Options) (*Result, error) {
	level := opt.Alpha
	if !(level > 0 && level < 0.5) {
		level = stats.Alpha
	}
	alpha := 2 * level // two-sided: each direction at the verdicts' one-sided level
	metrics := opt.Metrics
	if len(metrics) == 0 {
		metrics = defaultMetrics(a, b)
	}
	for _, m := range metrics {
		if _, ok := metric.Lookup(m); !ok {
			return nil, fmt.Errorf("unknown metric %q: use a numeric column of trials.csv (%s)", m, strings.Join(metric.Names(), ", "))
		}
	}
	res := &Result{Old: side(a), New: side(b), Alpha: alpha, Level: level}
	for _, s := range []struct {
		name string
		run  *record.Run
	}{{"old", a}, {"new", b}} {
		if len(s.run.Trials) == 0 {
			return nil, fmt.Errorf("%s run %s has no trials in %s (did it start? resume it with threadlab run --resume %s)",
				s.name, s.run.Dir, record.TrialsFile, s.run.Dir)
		}
	}
	if err := res.compareFingerprints(a, b); err != nil {
		return nil, err
	}
	res.Design = append(design(a, b), hostsDesign(a, b)...)

	oldCells, newCells := cells(a), cells(b)
	oldSkip, newSkip := skipped(a), skipped(b)
	keys := order(a, b, oldCells, newCells)
	for _, name := range metrics {
		t := Table{Metric: name, HigherIsBetter: metric.HigherIsBetter(name)}
		var fam []stats.Comparison
		var at []int
		for _, k := range keys {
			o, n := oldCells.get(k), newCells.get(k)
			xo, fo := forkValues(o.valid, name, oldSkip)
			xn, fn := forkValues(n.valid, name, newSkip)
			row := Row{Variant: k.Variant, Point: k.Point, Group: k.Group,
				Old: stats.Summarize(xo), New: stats.Summarize(xn), OldInvalid: o.invalid, NewInvalid: n.invalid,
				OldForks: fo, NewForks: fn}
			label := name + "|" + k.Variant + "|" + k.Point + "|" + k.Group
			row.OldLow, row.OldHigh = stats.MedianInterval(fo, level, 0, 1, "old|"+label)
			row.NewLow, row.NewHigh = stats.MedianInterval(fn, level, 0, 1, "new|"+label)
			row.RatioLow, row.RatioHigh = stats.RatioInterval(fo, fn, level, 0, 1, label)
			if len(xo) > 0 {
				row.OldFlags = rowFlags(xo, t.HigherIsBetter)
			}
			if len(xn) > 0 {
				row.NewFlags = rowFlags(xn, t.HigherIsBetter)
			}
			if len(xo) > 0 && len(xn) > 0 {
				c := stats.Compare(xo, xn, alpha)
				c.A, c.B = "old", "new"
				fam = append(fam, c)
				at = append(at, len(t.Rows))
			}
			t.Rows = append(t.Rows, row)
		}
		// One family per metric: the table's rows are read together, so a
		// reader scanning it for a change is making len(fam) comparisons.
		stats.AdjustHolm(fam)
		for i, c := range fam {
			t.Rows[at[i]].Cmp = &c
		}
		t.Family = len(fam)
		t.Geomean = geomean(t)
		res.Tables = append(res.Tables, t)
	}
	res.Verdicts = verdictChanges(a, b)
	res.Fingerprints = sideBySide(a.Fingerprint, b.Fingerprint)
	return res, nil
}

func side(r *record.Run) Side {
	s := Side{Dir: r.Dir, ID: r.Meta.ID, Experiment: r.Meta.Experiment, Profile: r.Meta.Profile,
		State: r.Meta.State, Primary: r.Meta.Primary}
	for _, t := range r.Trials {
		if t.Group != r.Meta.Measured && r.Meta.Measured != "" {
			continue
		}
		s.Trials++
		if !t.Valid {
			s.Invalid++
		}
	}
	return s
}

// defaultMetrics is the primary metric of each run, then the metrics
// shown in a diff by default.
func defaultMetrics(a, b *record.Run) []string {
	var out []string
	for _, m := range append([]string{a.Meta.Primary, b.Meta.Primary}, metric.Shown(metric.InDiff)...) {
		if m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// compareFingerprints fills Fingerprint and NoFingerprint.
func (res *Result) compareFingerprints(a, b *record.Run) error {
	var fps [2]*env.Fingerprint
	for i, r := range []*record.Run{a, b} {
		name := [2]string{"old", "new"}[i]
		if len(r.Fingerprint) == 0 {
			res.NoFingerprint = append(res.NoFingerprint, name)
			continue
		}
		fps[i] = &env.Fingerprint{}
		if err := json.Unmarshal(r.Fingerprint, fps[i]); err != nil {
			return fmt.Errorf("%s: not a fingerprint: %w (rewrite it with threadlab fingerprint --json, or delete it to compare without)",
				filepath.Join(r.Dir, record.FingerprintFile), err)
		}
	}
	if fps[0] != nil && fps[1] != nil {
		res.Fingerprint = env.Compare(fps[0], fps[1])
	}
	return nil
}

// design lists differences in what the two runs measured.
func design(a, b *record.Run) []string {
	var out []string
	ma, mb := a.Meta, b.Meta
	if ma.Experiment != mb.Experiment {
		out = append(out, fmt.Sprintf("different experiments: old is %s, new is %s", ma.Experiment, mb.Experiment))
	}
	if ma.Profile != mb.Profile {
		out = append(out, fmt.Sprintf("different profiles: old ran %s, new ran %s (trials, load and sweep may differ)", orDash(ma.Profile), orDash(mb.Profile)))
	}
	if keys := manifestChanges(a.Manifest, b.Manifest); len(keys) > 0 {
		out = append(out, fmt.Sprintf("the manifests as run differ in %s (compare %s of both runs)", strings.Join(keys, ", "), record.ManifestFile))
	}
	if ma.Measured != mb.Measured {
		out = append(out, fmt.Sprintf("different measured groups: old %s, new %s", ma.Measured, mb.Measured))
	}
	for _, s := range []struct {
		name string
		m    record.Meta
	}{{"old", ma}, {"new", mb}} {
		if s.m.State != "complete" {
			out = append(out, fmt.Sprintf("the %s run is %s, not complete: cells may have fewer trials", s.name, orDash(s.m.State)))
		}
	}
	return out
}

// runKeys are the manifest keys every run sets for itself: the seed a run
// picked when the manifest left it out, and the profile (compared on its own).
var runKeys = []string{"seed", "profile"}

// manifestChanges lists the top-level keys of two manifests as run whose
// values differ, ignoring runKeys; nil when either is missing. Manifests
// that are not YAML maps are compared as bytes.
func manifestChanges(a, b []byte) []string {
	if len(a) == 0 || len(b) == 0 {
		return nil
	}
	ia, _ := record.ParseManifestInfo(a) // a field of another type still gives Keys
	ib, _ := record.ParseManifestInfo(b)
	ma, mb := ia.Keys, ib.Keys
	if ma == nil || mb == nil {
		if string(a) != string(b) {
			return []string{"(unparsable YAML)"}
		}
		return nil
	}
	var keys []string
	for k := range ma {
		if _, ok := mb[k]; !ok {
			mb[k] = nil
		}
	}
	for k, vb := range mb {
		if !slices.Contains(runKeys, k) && !reflect.DeepEqual(ma[k], vb) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// cell holds one cell's trials of one run.
type cell struct {
	valid   []record.Trial // in execution order
	invalid []string       // "trial 3: host busy ..."
}

// cellMap is a run's cells by key.
type cellMap map[record.CellKey]*cell

// get returns the cell, or an empty one when the run lacks it (a variant or
// sweep point added or dropped between the runs).
func (m cellMap) get(k record.CellKey) *cell {
	if c := m[k]; c != nil {
		return c
	}
	return &cell{}
}

func cells(r *record.Run) cellMap {
	ts := slices.Clone(r.Trials)
	slices.SortStableFunc(ts, func(x, y record.Trial) int { return x.Seq - y.Seq })
	out := cellMap{}
	for _, t := range ts {
		c := out[t.Key()]
		if c == nil {
			c = &cell{}
			out[t.Key()] = c
		}
		if t.Valid {
			c.valid = append(c.valid, t)
		} else {
			c.invalid = append(c.invalid, fmt.Sprintf("trial %d: %s", t.Trial, orDash(t.Reason)))
		}
	}
	return out
}

// order lists the cells of both runs: variants in manifest order (old's,
// then any new ones), then sweep points in natural order, then request
// groups with the measured group first.
func order(a, b *record.Run, oc, nc cellMap) []record.CellKey {
	rank := func(list ...[]string) map[string]int {
		m := map[string]int{}
		for _, l := range list {
			for _, x := range l {
				if _, ok := m[x]; !ok {
					m[x] = len(m)
				}
			}
		}
		return m
	}
	variants := rank(a.Meta.Variants, b.Meta.Variants)
	groups := rank([]string{a.Meta.Measured, b.Meta.Measured}, a.Meta.Groups, b.Meta.Groups)
	pos := func(m map[string]int, x string) int {
		if i, ok := m[x]; ok {
			return i
		}
		return len(m)
	}
	var keys []record.CellKey
	for _, cs := range []cellMap{oc, nc} {
		for k := range cs {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.SortFunc(keys, func(x, y record.CellKey) int {
		if d := pos(variants, x.Variant) - pos(variants, y.Variant); d != 0 {
			return d
		}
		if d := strings.Compare(x.Variant, y.Variant); d != 0 {
			return d
		}
		if d := comparePoints(x.Point, y.Point); d != 0 {
			return d
		}
		if d := pos(groups, x.Group) - pos(groups, y.Group); d != 0 {
			return d
		}
		return strings.Compare(x.Group, y.Group)
	})
	return keys
}

// comparePoints orders sweep points key by key, numerically when both
// values are numbers, so pool=50 comes before pool=100.
func comparePoints(x, y string) int {
	px, py := strings.Split(x, ";"), strings.Split(y, ";")
	for i := 0; i < len(px) && i < len(py); i++ {
		kx, vx, _ := strings.Cut(px[i], "=")
		ky, vy, _ := strings.Cut(py[i], "=")
		if d := strings.Compare(kx, ky); d != 0 {
			return d
		}
		fx, ex := strconv.ParseFloat(vx, 64)
		fy, ey := strconv.ParseFloat(vy, 64)
		switch {
		case ex == nil && ey == nil && fx != fy:
			if fx < fy {
				return -1
			}
			return 1
		case vx != vy:
			return strings.Compare(vx, vy)
		}
	}
	return len(px) - len(py)
}

// rowFlags are a side's noise flags, without few-trials-ci: the row's
// interval is the bootstrap's, which exists from one fork on, so the order-
// statistic interval's minimum would be a footnote on nearly every row.
func rowFlags(xs []float64, higherIsBetter bool) []stats.Flag {
	return slices.DeleteFunc(stats.Flags(xs, higherIsBetter), func(f stats.Flag) bool { return f.Code == stats.FlagFewTrialsCI })
}

// forkKey names one fork of one cell, for the steady-state exclusions.
type forkKey struct {
	variant, point, group string
	fork                  int
}

// skipped is how many leading iterations of each fork steady.json left
// out of the fork medians (the run page's reading); nil without one.
func skipped(r *record.Run) map[forkKey]int {
	st, ok, err := record.ReadSteady(r.Dir)
	if err != nil || !ok {
		return nil
	}
	out := map[forkKey]int{}
	for _, c := range st.Cells {
		for _, f := range c.Forks {
			if f.Excluded > 0 {
				out[forkKey{c.Variant, c.Point, c.Group, f.Fork}] = f.Excluded
			}
		}
	}
	return out
}

// forkValues extracts one metric from a cell's valid trials (in
// execution order): the iterations of each fork after its steady-state
// exclusions, and each fork's value, the unit of replication: its median,
// or for a metric of rare events its mean alone (verdicts.Summarize and
// Units, as the claims read it). A row without a fork id (a run made
// before forks) is a fork of its own.
func forkValues(ts []record.Trial, name string, skip map[forkKey]int) (medians []float64, forks [][]float64) {
	seen := map[int]int{} // iterations of each fork met so far, valid or not in the metric
	medians, forks = verdicts.ByFork(ts, func(t record.Trial) (float64, bool) {
		id := verdicts.ForkID(t)
		seen[id]++
		if t.Fork != 0 && seen[id] <= skip[forkKey{t.Variant, t.Point, t.Group, t.Fork}] {
			return 0, false
		}
		return metric.Measured(t, name) // a value a telemetry flag spoils is no measurement, as in the verdicts
	})
	medians = verdicts.Summarize(name, medians, forks)
	return medians, verdicts.Units(name, medians, forks)
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// Forks is a run's fork values of one cell and metric, as the diff reads
// them (steady-state exclusions applied): the report's summary uses it for
// the interval of cells too small for the order-statistic one.
func Forks(r *record.Run, k record.CellKey, name string) [][]float64 {
	var ts []record.Trial
	for _, t := range r.Trials {
		if t.Valid && t.Key() == k {
			ts = append(ts, t)
		}
	}
	slices.SortStableFunc(ts, func(x, y record.Trial) int { return x.Seq - y.Seq })
	_, forks := forkValues(ts, name, skipped(r))
	return forks
}
