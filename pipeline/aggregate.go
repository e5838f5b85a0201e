package pipeline

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/judge/verdicts"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// Aggregate summarizes every cell and metric across the valid trials and
// compares the variants at each point; the results go to summary.csv and
// comparisons.csv. The unit is the fork: a fork's iterations are reduced
// to their median first, so n, intervals and tests count fresh JVMs, not
// windows of one JVM (which share its JIT profile and heap). The cells
// and forks are judging's (verdicts.GroupTrials, verdicts.ForkValues), so
// the tables and the claims read the same numbers.
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
	cells := verdicts.GroupTrials(trials)
	order := cellOrder(s, cells)
	// Steady state first: the pre-steady iterations of each fork leave the
	// cells before anything is summarised or compared (verdicts.Steady).
	series, err := record.ReadCSV[record.Sample](s.Dir, record.SeriesFile)
	if err != nil {
		return err
	}
	warm, err := record.ReadCSV[record.Trial](s.Dir, record.WarmupFile)
	if err != nil {
		return err
	}
	all := maps.Clone(cells) // metrics that do not warm up read every iteration (verdicts.Reading)
	st := verdicts.Steady(s.M, order, cells, series, warm)
	if earlier, ok, err := record.ReadSteady(s.Dir); err == nil && ok {
		st.Rule = verdicts.KeepWarmup(st.Rule, earlier.Rule) // a re-evaluation: the forks were warmed up by the run's rule
	}
	s.logSteady(st)
	unsettled := map[record.CellKey]int{}
	for _, c := range st.Cells {
		unsettled[record.CellKey{Variant: c.Variant, Point: c.Point, Group: c.Group}] = len(c.ExcludedForks)
	}
	reading := verdicts.NewReading(s.M, all, cells, nil, series)
	var rows []record.Summary
	for _, k := range order {
		for _, metric := range experiments.Metrics {
			xs, _ := verdicts.ForkValues(reading.Cells(metric)[k], metric)
			if len(xs) == 0 {
				continue
			}
			sum := stats.Summarize(xs)
			flags := stats.Codes(stats.Flags(xs, stats.HigherIsBetter(metric)))
			if (metric == s.M.Primary() && unsettled[k] > 0) || reading.Unsettled(metric, k) > 0 {
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
	st.Own = reading.Own(s.M, order, warm)
	if err := record.WriteJSON(s.Dir, record.SteadyFile, st); err != nil {
		return err
	}
	if err := record.WriteCSV(s.Dir, record.SummaryFile, rows); err != nil {
		return err
	}
	return record.WriteCSV(s.Dir, record.ComparisonsFile, comparisons(s, cells))
}

// FlagUnsettled is the summary.csv flag of a cell's primary metric, or of
// a metric with its own steady state (metric.OwnSteady), when some fork
// never reached a steady state in it and was left out.
const FlagUnsettled = "unsettled-fork"

// cellOrder lists cells in manifest order: point, then variant, then group.
func cellOrder(s *State, cells map[record.CellKey][]record.Trial) []record.CellKey {
	var out []record.CellKey
	for _, p := range replicate.Points(s.M) {
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
		for _, p := range replicate.Points(s.M) {
			pt := record.FormatPoint(p)
			a, _ := verdicts.ForkValues(cells[record.CellKey{Variant: base, Point: pt, Group: group}], metric)
			for _, v := range s.M.Variants[1:] {
				b, _ := verdicts.ForkValues(cells[record.CellKey{Variant: v.Name, Point: pt, Group: group}], metric)
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
