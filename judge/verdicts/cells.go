package verdicts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// GroupTrials collects the valid trials of each cell in execution order.
func GroupTrials(trials []record.Trial) map[record.CellKey][]record.Trial {
	slices.SortStableFunc(trials, func(a, b record.Trial) int { return a.Seq - b.Seq })
	out := map[record.CellKey][]record.Trial{}
	for _, t := range trials {
		if t.Valid {
			out[t.Key()] = append(out[t.Key()], t)
		}
	}
	return out
}

// ForkValues extracts one metric from trials: per fork, the values of its
// iterations in order, and the summary of each fork (the unit of
// replication): the median of its iterations, or their mean for a metric
// that counts rare events (metric.Events: gc_count, gc_pause_ms, errors,
// error_pct). Rows
// without a fork id (runs made before forks existed) are each their own
// fork.
func ForkValues(ts []record.Trial, name string) (medians []float64, forks [][]float64) {
	medians, forks = ByFork(ts, func(t record.Trial) (float64, bool) { return metric.Measured(t, name) })
	return Summarize(name, medians, forks), forks
}

// Summarize gives each fork its value of the metric: the medians ByFork
// took, or for an events metric the mean of the fork's iterations.
func Summarize(name string, medians []float64, forks [][]float64) []float64 {
	if !metric.Events(name) {
		return medians
	}
	out := make([]float64, len(forks))
	for i, f := range forks {
		sum := 0.0
		for _, x := range f {
			sum += x
		}
		out[i] = sum / float64(len(f)) // ByFork makes no empty fork
	}
	return out
}

// Units is what the claim tests resample for a metric: each fork's
// iterations, whose median the bootstrap takes as the fork's value, or
// for an events metric the fork's mean alone, so the tests read the same
// per-fork value as the tables.
func Units(name string, values []float64, forks [][]float64) [][]float64 {
	if !metric.Events(name) {
		return forks
	}
	out := make([][]float64, len(values))
	for i, x := range values {
		out[i] = []float64{x}
	}
	return out
}

// ByFork groups the values value keeps (ok) by fork, each fork's in the
// trials' order, and gives each fork's median: the one grouping the
// claims, the tables and the diff share. A row without a fork id (a run
// made before forks) is a fork of its own.
func ByFork(ts []record.Trial, value func(record.Trial) (float64, bool)) (medians []float64, forks [][]float64) {
	index := map[int]int{}
	for _, t := range ts {
		x, ok := value(t)
		if !ok {
			continue
		}
		id := ForkID(t)
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

// ForkID is a trial's fork; a legacy row without one is a fork of its own.
func ForkID(t record.Trial) int {
	if t.Fork == 0 {
		return -t.Trial - 1
	}
	return t.Fork
}

// medians is the per-fork medians of one metric.
func medians(ts []record.Trial, name string) []float64 {
	xs, _ := ForkValues(ts, name)
	return xs
}

// claimCells builds the stats cells a claim is evaluated on: per cell of
// its group, the per-fork medians as Values and the iterations per fork.
func claimCells(m *experiments.Manifest, c experiments.Claim, cells map[record.CellKey][]record.Trial) []stats.Cell {
	group := claimGroup(m, c)
	var sc []stats.Cell
	for k, ts := range cells {
		if k.Group != group {
			continue
		}
		med, forks := ForkValues(ts, c.Check.Metric)
		sc = append(sc, stats.Cell{Variant: k.Variant, Point: record.ParsePoint(k.Point), Group: k.Group, Metric: c.Check.Metric, Values: med, Forks: Units(c.Check.Metric, med, forks)})
	}
	slices.SortFunc(sc, func(a, b stats.Cell) int {
		return strings.Compare(a.Variant+record.FormatPoint(a.Point), b.Variant+record.FormatPoint(b.Point))
	})
	return sc
}

// capByForks makes a verdict inconclusive, keeping what it leaned to, when
// a cell it reads has fewer than stats.MinReplicates forks: below it the
// claim rests on too few fresh JVMs to say anything about the next one
// (issue 10), whatever its iterations say.
func capByForks(v *stats.Verdict, k stats.Check, cells []stats.Cell) {
	if v.Status == stats.Inconclusive {
		return
	}
	for _, c := range cells {
		if !DependsOn(k, c.Variant, c.Point) || len(c.Values) >= stats.MinReplicates {
			continue
		}
		why := fmt.Sprintf("%s rests on %d fork(s): fewer than %d fresh JVMs cannot replicate a claim (raise forks)",
			CellName(c.Variant, record.FormatPoint(c.Point)), len(c.Values), stats.MinReplicates)
		v.Leans, v.Status, v.Reason, v.Open = v.Status, stats.Inconclusive, why, true // more forks can decide it
		v.Evidence = append(v.Evidence, why)
		return
	}
}

// DependsOn tells whether a claim's check reads a cell (a variant at a
// sweep point): the variant is one the check names (all variants when it
// names none) and the point matches every where/over selection of the
// check.
func DependsOn(k stats.Check, variant string, point map[string]string) bool {
	names := slices.Clone(k.Compare)
	if k.Variant != "" {
		names = append(names, k.Variant)
	}
	if len(names) > 0 && !slices.Contains(names, variant) {
		return false
	}
	for _, sel := range []map[string][]string{k.Where, k.FlatOver, k.IncreasesOver, k.DecreasesOver} {
		for key, values := range sel {
			if v, ok := point[key]; ok && len(values) > 0 && !slices.Contains(values, v) {
				return false
			}
		}
	}
	return true
}

// CellName names a cell of the schedule without its request group, as
// verdicts and the terminal say it: "virtual pool=20", or the variant
// alone without a sweep. point is as trials.csv stores it
// (record.FormatPoint).
func CellName(variant, point string) string {
	if point == "" {
		return variant
	}
	return variant + " " + point
}
