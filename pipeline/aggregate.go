package pipeline

import (
	"context"
	"fmt"
	"github.com/threadlab/threadlab/pipeline/metric"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/record"
	"github.com/threadlab/threadlab/pipeline/report"
	"github.com/threadlab/threadlab/pipeline/stats"
	"github.com/threadlab/threadlab/pipeline/telemetry"
)

// Aggregate summarizes every cell and metric across the valid trials and
// compares the variants at each point; the results go to summary.csv and
// comparisons.csv. The unit is the fork: a fork's iterations are reduced
// to their median first, so n, intervals and tests count fresh JVMs, not
// windows of one JVM (which share its JIT profile and heap).
type Aggregate struct{}

func (Aggregate) Name() string { return "aggregate" }

// compared are the metrics put side by side in comparisons.csv, besides the primary one.
var compared = metric.Shown(metric.InComparisons)

func (Aggregate) Run(ctx context.Context, s *State) error {
	trials, err := record.ReadCSV[record.Trial](s.Dir, record.TrialsFile)
	if err != nil {
		return err
	}
	if len(trials) == 0 {
		return nil
	}
	cells := groupTrials(trials)
	order := cellOrder(s, cells)
	// Steady state first: the pre-steady iterations of each fork leave the
	// cells before anything is summarised or compared (steadystate.go).
	series, err := record.ReadCSV[record.Sample](s.Dir, record.SeriesFile)
	if err != nil {
		return err
	}
	warm, err := record.ReadCSV[record.Trial](s.Dir, record.WarmupFile)
	if err != nil {
		return err
	}
	st, err := applySteady(s.Dir, s.M, order, cells, series, warm)
	if err != nil {
		return err
	}
	s.logSteady(st)
	unsettled := map[record.CellKey]int{}
	for _, c := range st.Cells {
		unsettled[record.CellKey{Variant: c.Variant, Point: c.Point, Group: c.Group}] = len(c.ExcludedForks)
	}
	var rows []record.Summary
	for _, k := range order {
		for _, metric := range experiments.Metrics {
			xs, _ := forkValues(cells[k], metric)
			if len(xs) == 0 {
				continue
			}
			sum := stats.Summarize(xs)
			flags := stats.Codes(stats.Flags(xs, stats.HigherIsBetter(metric)))
			if metric == s.M.Primary() && unsettled[k] > 0 {
				flags = append(flags, FlagUnsettled)
			}
			rows = append(rows, record.Summary{
				Variant: k.Variant, Point: k.Point, Group: k.Group, Metric: metric, N: sum.N,
				Median: sum.Median, Low: sum.Low, High: sum.High, Confidence: sum.Confidence,
				Min: sum.Min, Max: sum.Max, Mean: sum.Mean, IQR: sum.IQR, CVPct: 100 * sum.CV,
				Flags: strings.Join(flags, ";"),
			})
		}
	}
	if err := record.WriteCSV(s.Dir, record.SummaryFile, rows); err != nil {
		return err
	}
	return record.WriteCSV(s.Dir, record.ComparisonsFile, comparisons(s, cells))
}

// groupTrials collects the valid trials of each cell in execution order.
func groupTrials(trials []record.Trial) map[record.CellKey][]record.Trial {
	slices.SortStableFunc(trials, func(a, b record.Trial) int { return a.Seq - b.Seq })
	out := map[record.CellKey][]record.Trial{}
	for _, t := range trials {
		if t.Valid {
			out[t.Key()] = append(out[t.Key()], t)
		}
	}
	return out
}

// cellOrder lists cells in manifest order: point, then variant, then group.
func cellOrder(s *State, cells map[record.CellKey][]record.Trial) []record.CellKey {
	var out []record.CellKey
	for _, p := range Points(s.M) {
		for _, v := range s.M.Variants {
			for _, g := range s.Meta.Groups {
				k := record.CellKey{Variant: v.Name, Point: record.FormatPoint(p), Group: g}
				if _, ok := cells[k]; ok {
					out = append(out, k)
				}
			}
		}
	}
	return out
}

// forkValues extracts one metric from trials: per fork, the values of its
// iterations in order, and the median of each fork (the unit of
// replication). Rows without a fork id (runs made before forks existed)
// are each their own fork.
func forkValues(ts []record.Trial, metric string) (medians []float64, forks [][]float64) {
	index := map[int]int{}
	for _, t := range ts {
		x, ok := Metric(t, metric)
		if !ok || math.IsNaN(x) || spoiled(t, metric) {
			continue
		}
		id := t.Fork
		if id == 0 {
			id = -t.Trial - 1 // legacy row: a fork of its own
		}
		i, seen := index[id]
		if !seen {
			i = len(forks)
			index[id] = i
			forks = append(forks, nil)
		}
		forks[i] = append(forks[i], x)
	}
	for _, f := range forks {
		medians = append(medians, stats.Median(f))
	}
	return medians, forks
}

// spoiled tells whether a telemetry flag of the row makes this column
// unreliable (a lost pid leaves target_cpu_pct at 0): such a value is left
// out even when the row stayed valid because no claim read the column
// when it was measured.
func spoiled(t record.Trial, metric string) bool {
	if t.Flags == "" {
		return false
	}
	for _, code := range strings.Split(t.Flags, ";") {
		if slices.Contains(telemetry.Affects(code), metric) {
			return true
		}
	}
	return false
}

// values is the per-fork medians of one metric.
func values(ts []record.Trial, metric string) []float64 {
	xs, _ := forkValues(ts, metric)
	return xs
}

// Metric reads a trials.csv column by name, from the one list of metric
// definitions (pipeline/metric).
func Metric(t record.Trial, name string) (float64, bool) { return metric.Value(t, name) }

// comparisons puts every variant against the first one (the baseline) at
// each point, per metric, with Holm's correction across each metric's family.
func comparisons(s *State, cells map[record.CellKey][]record.Trial) []record.Comparison {
	metrics := []string{s.M.Primary()}
	for _, m := range compared {
		if !slices.Contains(metrics, m) {
			metrics = append(metrics, m)
		}
	}
	group := s.M.Load.Measure
	base := s.M.Variants[0].Name
	var out []record.Comparison
	for _, metric := range metrics {
		var fam []stats.Comparison
		var where []record.Comparison
		for _, p := range Points(s.M) {
			pt := record.FormatPoint(p)
			a := values(cells[record.CellKey{Variant: base, Point: pt, Group: group}], metric)
			for _, v := range s.M.Variants[1:] {
				b := values(cells[record.CellKey{Variant: v.Name, Point: pt, Group: group}], metric)
				if len(a) == 0 || len(b) == 0 {
					continue
				}
				c := stats.Compare(a, b, 0)
				fam = append(fam, c)
				where = append(where, record.Comparison{Point: pt, Group: group, Metric: metric, A: base, B: v.Name})
			}
		}
		stats.AdjustHolm(fam)
		for i, c := range fam {
			r := where[i]
			r.MedianA, r.MedianB, r.DeltaPct = c.MedianA, c.MedianB, 100*c.Delta
			r.P, r.PAdj, r.Verdict, r.Note = c.P, c.PAdj, c.Verdict, c.Note
			out = append(out, r)
		}
	}
	return out
}

// Claims gives every claim of the manifest a verdict with its evidence.
type Claims struct{}

func (Claims) Name() string { return "claims" }

func (Claims) Run(ctx context.Context, s *State) error {
	if len(s.M.Claims) == 0 {
		return nil
	}
	trials, err := record.ReadCSV[record.Trial](s.Dir, record.TrialsFile)
	if err != nil {
		return err
	}
	fp, _ := os.ReadFile(filepath.Join(s.Dir, record.FingerprintFile)) // absent: the core count is unknown
	h := HostFacts(s.M, fp, s.Meta)
	if h.Columns, err = TrialColumns(s.Dir); err != nil {
		return err
	}
	if h.Series, err = record.ReadCSV[record.Sample](s.Dir, record.SeriesFile); err != nil {
		return err
	}
	out := EvaluateClaims(s.M, trials, stats.Options{Seed: s.M.Seed, Version: Version()}, h)
	for _, v := range out {
		s.Logf("claim %s: %s", v.ID, stats.StatusText(v.Status))
	}
	return record.WriteJSON(s.Dir, record.VerdictsFile, out)
}

// claimCells builds the stats cells a claim is evaluated on: per cell of
// its group, the per-fork medians as Values and the iterations per fork.
func claimCells(m *experiments.Manifest, c experiments.Claim, cells map[record.CellKey][]record.Trial) []stats.Cell {
	group := c.Check.Group
	if group == "" {
		group = m.Load.Measure
	}
	var sc []stats.Cell
	for k, ts := range cells {
		if k.Group != group {
			continue
		}
		med, forks := forkValues(ts, c.Check.Metric)
		sc = append(sc, stats.Cell{Variant: k.Variant, Point: record.ParsePoint(k.Point), Group: k.Group, Metric: c.Check.Metric, Values: med, Forks: forks})
	}
	slices.SortFunc(sc, func(a, b stats.Cell) int {
		return strings.Compare(a.Variant+record.FormatPoint(a.Point), b.Variant+record.FormatPoint(b.Point))
	})
	return sc
}

// MinForks is the fewest forks a cell may have for a claim that reads it
// to be decided: below it the claim rests on too few fresh JVMs to say
// anything about the next one (issue 10), whatever its iterations say.
const MinForks = 3

// capByForks makes a verdict inconclusive, keeping what it leaned to, when
// a cell it reads has fewer than MinForks forks.
func capByForks(v *stats.Verdict, k stats.Check, cells []stats.Cell) {
	if v.Status == stats.Inconclusive {
		return
	}
	for _, c := range cells {
		cell := Cell{Variant: experiments.Variant{Name: c.Variant}, Point: c.Point}
		if !dependsOn(k, cell) || len(c.Values) >= MinForks {
			continue
		}
		why := fmt.Sprintf("%s rests on %d fork(s): fewer than %d fresh JVMs cannot replicate a claim (raise forks)", cell.ID(), len(c.Values), MinForks)
		v.Leans, v.Status, v.Reason, v.Open = v.Status, stats.Inconclusive, why, true // more forks can decide it
		v.Evidence = append(v.Evidence, why)
		return
	}
}

// finite maps NaN and infinities to 0 so verdicts.json stays valid JSON.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// Report renders the run's page and the site index from the data alone.
type Report struct{}

func (Report) Name() string { return "report" }

func (Report) Run(ctx context.Context, s *State) error {
	if s.Opt.NoReport {
		return nil
	}
	if err := s.saveMeta(); err != nil {
		return err
	}
	r, err := record.Read(s.Dir)
	if err != nil {
		return err
	}
	page, err := report.Run(r, s.Opt.ReportsDir)
	if err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	if _, err := report.Index(s.Opt.DataDir, s.Opt.ReportsDir); err != nil {
		return fmt.Errorf("render index: %w", err)
	}
	s.ReportPath = page
	return nil
}
