package pipeline

import (
	"context"
	"io"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/store/record"
)

// Reaggregate recomputes the derived files of a finished run directory
// (summary.csv, comparisons.csv, steady.json) from its trials.csv,
// series.csv and warmup.csv with today's rules, the way `threadlab report
// --reevaluate` recomputes its verdicts: the measurements are the run's,
// the reading of them is today's (steady state, the first-iteration test,
// flags). m is the run's manifest and meta its run.json; the aggregate
// stage's log lines go to log (nil for none).
func Reaggregate(ctx context.Context, dir string, m *experiments.Manifest, meta record.Meta, log io.Writer) error {
	if len(meta.Groups) == 0 {
		meta.Groups = []string{m.Load.Measure}
	}
	s := &State{M: m, Dir: dir, Meta: meta, Opt: Options{Log: log}}
	return Aggregate{}.Run(ctx, s)
}
