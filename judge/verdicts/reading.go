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

// Reading is a run's cells as every reader of one metric sees them
// (claims, preconditions, summary.csv), by the metric's steady-state rule
// (issue 20):
//   - a metric that does not warm up (metric.Def.NoWarmup) reads every
//     valid measured iteration;
//   - a metric that warms up reads each fork's steady iterations of the
//     primary metric (steady.go);
//   - a metric with its own steady state (metric.OwnSteady: the target's
//     CPU, which keeps falling after a burst's wall time has settled) reads
//     those iterations again reduced by a classification of the metric's
//     own series on them, so each fork starts at the later of the two
//     steady starts, and a fork whose own series never settles is left
//     out and named, as for the primary.
//
// The own selections are made once per metric, when first asked for.
type Reading struct {
	all, steady map[record.CellKey][]record.Trial
	info        map[record.CellKey]record.SteadyCell
	sel         selection
	own         map[string]ownReading
}

// ownReading is one metric's own selection, applied on the primary's.
type ownReading struct {
	cells map[record.CellKey][]record.Trial
	info  map[record.CellKey]record.SteadyCell
}

// NewReading is the reading of a run: all holds every valid measured
// iteration per cell (GroupTrials), steady and info the primary's steady
// selection of them (steadyOnly, or Steady's reduced cells and record),
// series the run's series.csv rows (nil when it has none).
func NewReading(m *experiments.Manifest, all, steady map[record.CellKey][]record.Trial, info map[record.CellKey]record.SteadyCell, series []record.Sample) *Reading {
	return &Reading{all: all, steady: steady, info: info, sel: newSelection(m, series), own: map[string]ownReading{}}
}

// Read is the reading of a run's trials.csv rows and series.csv rows
// (nil when it has none) by manifest m, as Evaluate makes it.
func Read(m *experiments.Manifest, trials []record.Trial, series []record.Sample) *Reading {
	return read(m, GroupTrials(trials), series)
}

// read classifies all by the primary metric and returns the reading.
func read(m *experiments.Manifest, all map[record.CellKey][]record.Trial, series []record.Sample) *Reading {
	cells, info := steadyOnly(m, all, series)
	return NewReading(m, all, cells, info, series)
}

// Cells returns the cells a claim or a summary on metric name reads.
func (r *Reading) Cells(name string) map[record.CellKey][]record.Trial {
	if !metric.WarmsUp(name) {
		return r.all
	}
	if o, ok := r.ownOf(name); ok {
		return o.cells
	}
	return r.steady
}

// ownOf is the own selection of name, made on first use; false for a
// metric without one (or the primary itself, which steady already is).
func (r *Reading) ownOf(name string) (ownReading, bool) {
	if !metric.OwnSteady(name) || name == r.sel.metric {
		return ownReading{}, false
	}
	if o, ok := r.own[name]; ok {
		return o, true
	}
	var o ownReading
	o.cells, o.info = r.sel.own(name).apply(r.steady)
	r.own[name] = o
	return o, true
}

// Unsettled is the number of forks of cell k whose metric name never
// settled on its own series (0 for a metric without an own selection).
func (r *Reading) Unsettled(name string, k record.CellKey) int {
	if o, ok := r.ownOf(name); ok {
		return len(o.info[k].ExcludedForks)
	}
	return 0
}

// Own is the record, for steady.json, of the own selection of each metric
// with one that m's claims or preconditions read (summary.csv's other CPU
// rows carry the unsettled-fork flag instead), metrics in metric.Defs
// order, cells in order (the run's cell order), without the forks' values,
// with each fork's warm-up read on the metric (warm: warmup.csv, may be
// nil): the stopping rule's evidence on the rounds' own values.
func (r *Reading) Own(m *experiments.Manifest, order []record.CellKey, warm []record.Trial) []record.SteadyOwn {
	warmByCell := byCell(warm)
	read := m.ReadMetrics()
	var out []record.SteadyOwn
	for _, d := range metric.Defs {
		if !read[d.Name] {
			continue
		}
		o, ok := r.ownOf(d.Name)
		if !ok {
			continue
		}
		so := record.SteadyOwn{Metric: d.Name}
		for _, k := range order {
			c, ok := o.info[k]
			if !ok {
				continue
			}
			c.Forks = slices.Clone(c.Forks)
			for i := range c.Forks {
				c.Forks[i].Values = nil
			}
			warmupOf(&c, warmByCell[k], d.Name, true)
			so.Cells = append(so.Cells, c)
		}
		out = append(out, so)
	}
	return out
}

// own is the selection that classifies metric name on its own series.
func (sel selection) own(name string) selection {
	sel.metric = name
	return sel
}

// steadyRule applies the steady-state rule of the claim's metric to its
// verdict: a metric that warms up is held back when a cell it reads has
// too few steady forks (notSteady), by the primary's selection and, for a
// metric with its own steady state, by its own (whose evidence also says
// what that selection left out); one that does not warm up read every
// iteration, and its evidence says which ones the selection of the
// primary metric would have left out (everyIteration).
func (r *Reading) steadyRule(v *stats.Verdict, m *experiments.Manifest, c experiments.Claim) {
	group := claimGroup(m, c)
	if !metric.WarmsUp(c.Check.Metric) {
		everyIteration(v, c.Check, r.info, group, m.Primary())
		return
	}
	notSteady(v, c.Check, r.info, group, "")
	if o, ok := r.ownOf(c.Check.Metric); ok {
		ownEvidence(v, c.Check, o.info, group, m.Primary())
		if v.Status != stats.Inconclusive || !strings.HasPrefix(v.Reason, NotSteadyPrefix) {
			notSteady(v, c.Check, o.info, group, c.Check.Metric)
		}
	}
}

// ownEvidence says, in the evidence of a claim on a metric with its own
// steady state, what the metric's own selection left out of each cell the
// claim reads beyond the primary's: iterations before the metric settled,
// and forks where it never did. Nothing when it left nothing out.
func ownEvidence(v *stats.Verdict, k stats.Check, info map[record.CellKey]record.SteadyCell, group, primary string) {
	what := leftOut(k, info, group, "%d more iteration(s) before "+k.Metric+" settled", ", fork %s never steady in it")
	if what == "" {
		return
	}
	v.Evidence = append(v.Evidence, fmt.Sprintf("%s keeps warming up after %s settles, so each fork is also classified on its own series and read from the later steady start (%s)",
		k.Metric, primary, what))
}
