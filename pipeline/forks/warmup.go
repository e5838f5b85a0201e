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
// least min, then until steady.Settled holds on the rounds' values of every
// metric the warm-up waits for (Manifest.WarmupMetrics: the primary, and
// the target's CPU when a claim reads it), at most max. Each round is
// sampled as a measured iteration is (Hooks.Round), so warmup.csv has the
// target's CPU of every round. A waited metric that no round could read
// (no CPU clock for the target) holds nothing back. Every round goes to
// warmup.csv; the last round of an until-steady warm-up says why it
// stopped ("; stop: steady", or "; stop: max" and the metrics that had
// not settled). A variant with measure: cold is not warmed up: its start
// is what is measured.
func (l *Loop) warmup(ctx context.Context, t trial.Target, j replicate.Job, seq, fork int, plan load.Plan) error {
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
	waits := newWaits(l.M.WarmupMetrics())
	start := time.Now()
	for n := 1; ; n++ {
		win, err := l.Hooks.Round(ctx, t, p)
		if err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		rows := win.rows(l.M.Load.Measure, j, seq, nil)
		elapsed := time.Since(start)
		stop := ""
		switch {
		case !w.Steady():
			if timed || elapsed >= w.Min {
				stop = "fixed"
			}
		default:
			if rows[0].Valid {
				waits.add(rows[0])
			}
			stop = waits.stop(elapsed, w.Min, w.Max)
		}
		reason := steady.RoundReason(n)
		if stop != "" && stop != "fixed" {
			reason += "; stop: " + stop
		}
		for i := range rows {
			rows[i].Reason = strings.Join(slices.DeleteFunc(slices.Concat([]string{reason, rows[i].Reason}, win.NoiseReasons), func(x string) bool { return x == "" }), "; ")
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

// waits are the series an until-steady warm-up watches, one per metric,
// and the round at which each was first found steady (0: not yet). A
// metric found steady stays so: rule 1 of steady.Settled (the latest
// rounds change direction twice) holds in about half of the rounds of a
// flat series, and asking two metrics to pass it in the same round would
// only lengthen the warm-up by chance, not by warming.
type waits struct {
	names   []string
	xs      [][]float64
	settled []int
	rounds  int
}

func newWaits(names []string) *waits {
	return &waits{names: names, xs: make([][]float64, len(names)), settled: make([]int, len(names))}
}

// add appends a round's value of each metric; a CPU figure of 0 is a
// round whose target CPU could not be read, not a free round.
func (ws *waits) add(r record.Trial) {
	ws.rounds++
	for i, name := range ws.names {
		x, ok := metric.Value(r, name)
		if !ok || math.IsNaN(x) || (metric.OwnSteady(name) && x <= 0) {
			continue
		}
		ws.xs[i] = append(ws.xs[i], x)
	}
}

// stop is the warm-up's decision after a round: "steady" once elapsed has
// reached min and every metric with readings has been found steady
// (steady.Stop), "max (M, N not steady)" once it has reached max without
// that, "" to run another round. With more than one metric, "steady"
// says the round from which each was. A metric with no readings at all
// holds nothing back; the primary must have readings.
func (ws *waits) stop(elapsed, minimum, maximum time.Duration) string {
	var unsettled, when []string
	for i, name := range ws.names {
		if i > 0 && len(ws.xs[i]) == 0 {
			continue
		}
		if ws.settled[i] == 0 {
			if s, _ := steady.Stop(ws.xs[i], elapsed, minimum, maximum, steady.Settle{HigherIsBetter: metric.HigherIsBetter(name)}); s == "steady" {
				ws.settled[i] = ws.rounds
			}
		}
		if ws.settled[i] == 0 {
			unsettled = append(unsettled, name)
		} else {
			when = append(when, fmt.Sprintf("%s from round %d", name, ws.settled[i]))
		}
	}
	switch {
	case elapsed >= minimum && len(unsettled) == 0:
		if len(when) > 1 {
			return "steady (" + strings.Join(when, ", ") + ")"
		}
		return "steady"
	case elapsed >= maximum:
		return "max (" + strings.Join(unsettled, ", ") + " not steady)"
	}
	return ""
}
