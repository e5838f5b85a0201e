package forks

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/stats/steady"
	"github.com/threadlab/threadlab/store/record"
)

// warmup sends the fork's own load, untimed, before its measured
// iterations: the JIT compiles the identical code path the trial measures
// (seed 000's warm-up bug). A fixed warm-up runs for its duration (bursts
// repeat until it has passed, at least once); warmup: {until: steady} runs
// rounds (one burst, or a DefaultWarmupRound window of a timed load) for at
// least min, then until steady.Settled holds on the rounds' primary metric,
// at most max. Every round goes to warmup.csv; the last round of an
// until-steady warm-up says why it stopped ("; stop: steady" or "; stop:
// max"). A variant with measure: cold is not warmed up: its start is what
// is measured.
func (l *Loop) warmup(ctx context.Context, j replicate.Job, seq, fork int, plan load.Plan) error {
	w := l.M.Load.Warmup
	if w.Max <= 0 || j.Cell.Variant.Measure == experiments.MeasureCold {
		return nil
	}
	round := w.Min // a fixed warm-up of a timed load is one window
	if w.Steady() {
		round = min(experiments.DefaultWarmupRound, w.Max)
	}
	p := plan
	p.Groups = slices.Clone(plan.Groups)
	timed := false
	for i := range p.Groups {
		if p.Groups[i].Model != load.Burst {
			p.Groups[i].Duration = round
			p.Groups[i].Start = 0
			timed = true
		}
	}
	primary := l.M.Primary()
	rule := steady.Settle{HigherIsBetter: metric.HigherIsBetter(primary)}
	var xs []float64
	start := time.Now()
	for n := 1; ; n++ {
		res, err := l.Hooks.Release(ctx, p)
		if err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		rows := trial.Rows(l.M.Load.Measure, j, seq, now(), res, nil, nil)
		elapsed := time.Since(start)
		stop := ""
		switch {
		case !w.Steady():
			if timed || elapsed >= w.Min {
				stop = "fixed"
			}
		default:
			if x, ok := metric.Value(rows[0], primary); ok && !math.IsNaN(x) && rows[0].Valid {
				xs = append(xs, x)
			}
			stop, _ = steady.Stop(xs, elapsed, w.Min, w.Max, rule)
		}
		reason := steady.RoundReason(n)
		if stop == "steady" || stop == "max" {
			reason += "; stop: " + stop
		}
		for i := range rows {
			rows[i].Reason = strings.Join(slices.DeleteFunc([]string{reason, rows[i].Reason}, func(x string) bool { return x == "" }), "; ")
			rows[i].Valid = false
			rows[i].Fork = fork
		}
		if err := record.AppendCSV(l.Dir, record.WarmupFile, rows); err != nil {
			return err
		}
		if stop != "" || ctx.Err() != nil {
			return ctx.Err()
		}
	}
}
