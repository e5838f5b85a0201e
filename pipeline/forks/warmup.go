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
	"github.com/threadlab/threadlab/measure/telemetry"
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
				waits.add(rows[0], slices.ContainsFunc(win.Samples, func(x telemetry.Sample) bool { return x.JIT }))
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

// An until-steady warm-up also waits for the JIT to go quiet: the
// compile time in each of the last jitQuietRounds rounds (jit_ms, the
// growth of jvm_compilation_time_ms_total over the round's samples) at
// most jitQuietShare of the target's CPU time in the round, or of the
// round's wall time when the target used less than one core (jitShare).
// A wall time can look settled while the compiler threads still take a
// large share of the target's CPU: in a cpu-bound pilot (1 fork x 254
// bursts a variant, wave 3 session 15) the rule on wall time alone stopped
// with the JIT at 30-110% of the target's CPU over the last 4 rounds, and
// the first 10 measured bursts still spent 18-62% of it compiling; from
// burst 41 on it was 1.7-2.5%, the level of background compilation. A
// round without the counter (a target without Micrometer's
// JvmCompilationMetrics) or whose CPU could not be read holds nothing back.
//
// The wall-time floor is for targets that mostly wait. Their CPU time in a
// round is small (8-15 ms for jep491-pinning's 300-ms sleeps), so the few
// ms of background compilation every JVM keeps doing is a large share of
// it: in the measured windows of runs warmed for a full minute, the JIT
// was above 5% of the target's CPU in 47-56% of aot-cache's I/O windows,
// 65-83% of pool-sweep's and 60-100% of jep491-pinning's, so four quiet
// rounds in a row almost never came and the warm-up ran to its max (all
// 30 pool-sweep forks, 21 of 24 aot-cache forks for the JIT alone). A
// compiler thread on a core the target leaves idle does not slow it; held
// to one core for the round's length, the same windows were above 5% in
// 4-26% of rounds. A target busier than one core is held to its CPU time,
// as before.
const (
	jitQuietShare  = 0.05
	jitQuietRounds = 4
)

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
	// jit is each round's JIT compile time over the target's CPU time in
	// it (rounds whose CPU was read); jitQuiet the round from which the
	// last jitQuietRounds were at most jitQuietShare (0: not yet).
	jit      []float64
	jitQuiet int
}

func newWaits(names []string) *waits {
	return &waits{names: names, xs: make([][]float64, len(names)), settled: make([]int, len(names))}
}

// add appends a round's value of each metric; a CPU figure of 0 is a
// round whose target CPU could not be read, not a free round. jit says
// whether the round's samples read the JIT's counter: a round without it
// tells nothing about the JIT.
func (ws *waits) add(r record.Trial, jit bool) {
	ws.rounds++
	for i, name := range ws.names {
		x, ok := metric.Value(r, name)
		if !ok || math.IsNaN(x) || (metric.OwnSteady(name) && x <= 0) {
			continue
		}
		ws.xs[i] = append(ws.xs[i], x)
	}
	if jit && r.TargetCPUSec > 0 {
		ws.jit = append(ws.jit, jitShare(r))
	}
}

// jitShare is a round's JIT compile time over the larger of the target's
// CPU time and the round's wall time: the share of the target's work, or
// of one core when the target used less than one.
func jitShare(r record.Trial) float64 {
	return r.JITMs / max(r.TargetCPUSec*1000, r.WallMs)
}

// jitBusy reports whether the JIT still holds the warm-up back, and the
// last round's share for the stop reason; false once it has been quiet for
// jitQuietRounds rounds in a row, and when no round could be read.
func (ws *waits) jitBusy() (bool, float64) {
	n := len(ws.jit)
	if n == 0 {
		return false, 0
	}
	if ws.jitQuiet == 0 && n >= jitQuietRounds && !slices.ContainsFunc(ws.jit[n-jitQuietRounds:], func(x float64) bool { return x > jitQuietShare }) {
		ws.jitQuiet = ws.rounds
	}
	return ws.jitQuiet == 0, ws.jit[n-1]
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
	busy, share := ws.jitBusy()
	if ws.jitQuiet > 0 {
		when = append(when, fmt.Sprintf("JIT quiet from round %d", ws.jitQuiet))
	}
	switch {
	case elapsed >= minimum && len(unsettled) == 0 && !busy:
		if len(when) > 1 {
			return "steady (" + strings.Join(when, ", ") + ")"
		}
		return "steady"
	case elapsed >= maximum:
		var why []string
		if len(unsettled) > 0 {
			why = append(why, strings.Join(unsettled, ", ")+" not steady")
		}
		if busy {
			why = append(why, fmt.Sprintf("JIT still compiling: %.0f%% of the target's CPU (or of one core, for a target using less) in the last round", 100*share))
		}
		return "max (" + strings.Join(why, "; ") + ")"
	}
	return ""
}
