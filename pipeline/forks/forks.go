// Package forks is the fork loop of a run: a fresh target per fork, its
// warm-up, then its measured iterations, each stored the moment it ends.
// Invalid iterations (host noise, a dead target, a saturated generator)
// are re-run, and lost forks replaced, within the cell's retry budget
// (replicate.Policy).
//
// What the loop needs from the run around it, it asks through Hooks:
// starting a target, releasing a load, one iteration's measured window
// (the samplers here, or on every host of a multi-host run), the CPU
// affinity read-back, the wall clock, warnings and run.json. The
// orchestrator implements them (pipeline/forkhooks.go); this package
// never imports it.
package forks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/measure/telemetry"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/store/record"
)

// ErrStartup marks a target that did not come up; the manifest decides
// whether the run stops or goes on (startup.on_failure).
var ErrStartup = errors.New("target failed to start")

// Hooks is what the fork loop asks of the orchestrator.
type Hooks interface {
	// Launch starts the target of a fork (seq is its place in the
	// schedule) and waits until it is ready. An error wrapping ErrStartup
	// is a target that did not come up. A started target is stopped when
	// the run ends, however it ends.
	Launch(ctx context.Context, j replicate.Job, seq, fork int) (trial.Target, error)
	// Round runs one warm-up round's plan against t inside a window
	// measured as an iteration's (Measure), so that the round has the
	// target's CPU too; its time is the warm-up's, not the measurement's.
	Round(ctx context.Context, t trial.Target, plan load.Plan) (Window, error)
	// Measure runs one measured iteration's plan against t inside its
	// window: the samplers start before the load and stop after it, and
	// each new flag's fix-it sentence is warned about. An error is the
	// load's; the window is then empty.
	Measure(ctx context.Context, t trial.Target, plan load.Plan) (Window, error)
	// ReadBack records the CPU affinity in force for the target's
	// processes and the services' (after a fork's first iteration, when
	// the target's threads and the database backends exist).
	ReadBack(t trial.Target)
	// Spent books d to a wall-clock bucket of run.json (record.Stage*).
	Spent(bucket string, d time.Duration)
	// Warn records a warning for the report and the log; Logf writes a log line.
	Warn(format string, a ...any)
	Logf(format string, a ...any)
	// SaveMeta writes run.json.
	SaveMeta() error
}

// Window is what one measured iteration's window read.
type Window struct {
	Started string // when the load was released (RFC 3339, UTC)
	Result  *load.Result
	Samples []telemetry.Sample // the per-second series keeps them all
	// RowSamples are the samples the trial's row reads (peaks, GC totals,
	// CPU%); nil means Samples. Under --hosts they are cut to the load's
	// release and last answer (pipeline/hostsample.go rowSamples).
	RowSamples []telemetry.Sample
	Flags      []telemetry.Flag
	// Outside and Steal are the host's noise over the window, % of one
	// core: this machine's, or under --hosts the worst host's.
	Outside, Steal float64
	// NoiseReasons say why the window is invalid for noise: over the
	// manifest's gates, or a host with no sampler.
	NoiseReasons []string
	HostsNoise   string // each host's noise (trials.csv hosts_noise); "" on one machine
	// CPUSec and CPUMsPerReq are target_cpu_s and target_cpu_ms_per_req.
	CPUSec, CPUMsPerReq float64
}

// Progress is the live display's part in the loop; nil means a log line
// per iteration instead.
type Progress interface {
	Trial(j replicate.Job, seq int) // a trial's measurement starts
	Tick(t load.Tick)               // live numbers of the running trial
	Done(j replicate.Job, r record.Trial)
}

// Loop runs the forks of one run.
type Loop struct {
	M    *experiments.Manifest
	Dir  string            // the run directory
	Rep  *replicate.Policy // forks, retries and sequential stops
	Jobs int               // jobs in the schedule (the log's n/N)
	// OtherHost is a target on another machine (--hosts): this machine's
	// idle-host wait before a fork (cooldown.max_busy_pct) is skipped.
	OtherHost bool
	Progress  Progress
	Hooks     Hooks
}

// Cell runs fork j.Fork of a cell; when that fork is lost (its target
// did not start or died), replacement forks follow while the retry budget
// lasts, so the cell still ends with its planned number of forks.
func (l *Loop) Cell(ctx context.Context, seq int, j replicate.Job) error {
	c := l.Rep.Cell(l.M, j.Cell.ID(), nil)
	fork, retry := j.Fork, false
	for {
		lost, err := l.fork(ctx, seq, j, fork, retry)
		if err != nil || lost == "" {
			return err
		}
		l.Hooks.Warn("%s fork %d lost: %s", j.Cell.ID(), fork, lost)
		if !l.Rep.Spend(l.M, c) {
			return nil
		}
		fork, retry = c.NextFork, true
		c.NextFork++
	}
}

// fork starts a target, warms it up and measures its iterations,
// re-running invalid ones within the budget. lost says why the fork ended
// without a live target ("" when it ran to the end).
func (l *Loop) fork(ctx context.Context, seq int, j replicate.Job, fork int, retry bool) (lost string, err error) {
	m, r := l.M, l.Rep
	c := r.Cell(l.M, j.Cell.ID(), nil)
	f := forkRun{seq: seq, job: j, fork: fork, retry: retry}
	f.waited, f.busy = l.gate(ctx)
	if p := l.Progress; p != nil {
		p.Trial(j, seq)
	}
	t, lost, err := l.startFork(ctx, &f)
	if t == nil {
		return lost, err
	}
	defer l.stopFork(ctx, t)
	plan, err := trial.LoadPlan(m, j.Cell, t.URL(), m.Seed+int64(seq))
	if err != nil {
		return "", err
	}
	t0 := time.Now()
	err = l.warmup(ctx, t, j, seq, fork, plan)
	l.Hooks.Spent(record.StageWarmups, time.Since(t0))
	if err != nil {
		return "", err
	}
	valid := 0
	for it := 1; valid < m.Iterations; it++ {
		if it > m.Iterations {
			if !r.Spend(l.M, c) {
				break
			}
			f.retry = true
		}
		if it > 1 {
			t0 := time.Now()
			sleep(ctx, m.CoolDown.Iteration)
			l.Hooks.Spent(record.StageCoolDowns, time.Since(t0))
		}
		if err := ctx.Err(); err != nil {
			return "", err
		}
		row, err := l.iterate(ctx, &f, it, plan)
		if err != nil {
			return "", err
		}
		if it == 1 {
			// Under load: the target's threads and the database backends
			// serving it exist now.
			l.Hooks.ReadBack(t)
		}
		if row.Valid {
			valid++
		}
		if exit := t.Exited(); exit != nil {
			if valid == 0 {
				return "the target died: " + exit.Error(), nil
			}
			break
		}
		// A stalled window (no answer for the stall limit while requests
		// were outstanding) leaves a frozen target: a pool deadlocked on its
		// own nested calls stays so. Its next windows would each wait out
		// the limit and measure nothing (call-depth's platform-tomcat at
		// depth 1: 61 s a window, 14 windows a fork), so the fork ends here,
		// like one whose target died.
		if f.stalled != "" {
			if valid == 0 {
				return "the target froze: " + f.stalled, nil
			}
			break
		}
	}
	if valid > 0 {
		c.Forks++
	}
	if valid > 0 && valid < m.Iterations {
		c.Short++
	}
	return "", nil
}

// gate waits for a quiet host before a fork (cooldown.max_busy_pct) and
// returns how long it waited and the busy share it measured last.
func (l *Loop) gate(ctx context.Context) (time.Duration, float64) {
	m := l.M
	if m.CoolDown.MaxBusyPct >= 100 || l.OtherHost { // 100 opens the gate: no need to measure; a target elsewhere: not this machine
		return 0, 0
	}
	t0 := time.Now()
	waited, busy := telemetry.CoolDown(ctx, m.CoolDown.MaxBusyPct, m.CoolDown.MaxWait)
	l.Hooks.Spent(record.StageCoolDowns, time.Since(t0))
	return waited, busy
}

// startFork launches the fork's target. A target that does not start is
// an error, or with startup.on_failure: continue an invalid row and a lost
// fork (nil target, lost says why).
func (l *Loop) startFork(ctx context.Context, f *forkRun) (t trial.Target, lost string, err error) {
	m, j := l.M, f.job
	c := l.Rep.Cell(l.M, j.Cell.ID(), nil)
	t0 := time.Now()
	t, err = l.Hooks.Launch(ctx, j, f.seq, f.fork)
	f.startup = time.Since(t0)
	l.Hooks.Spent(record.StageStarts, f.startup)
	c.Runs++
	if err == nil {
		f.target = t
		return t, "", nil
	}
	if !errors.Is(err, ErrStartup) || m.Startup.OnFailure != "continue" || ctx.Err() != nil {
		return nil, "", err
	}
	c.Trial++
	row := record.Trial{Variant: j.Cell.Variant.Name, Point: j.Cell.PointString(), Group: m.Load.Measure,
		Trial: c.Trial, Seq: f.seq, Fork: f.fork, Retry: f.retry, Valid: false, Reason: "target failed to start", Started: now()}
	if err := record.AppendCSV(l.Dir, record.TrialsFile, []record.Trial{row}); err != nil {
		return nil, "", err
	}
	return nil, err.Error(), nil
}

// stopFork stops a fork's target and pauses (cooldown.pause) so the next
// fork does not start beside its shutdown.
func (l *Loop) stopFork(ctx context.Context, t trial.Target) {
	t0 := time.Now()
	t.Stop()
	l.Hooks.Spent(record.StageStops, time.Since(t0))
	if p := l.M.CoolDown.Pause; p > 0 && ctx.Err() == nil {
		t0 = time.Now()
		sleep(ctx, p)
		l.Hooks.Spent(record.StageCoolDowns, time.Since(t0))
	}
}

// forkRun is what the iterations of one fork share.
type forkRun struct {
	seq     int
	job     replicate.Job
	fork    int
	retry   bool   // this fork, or the current iteration, re-runs an invalid one
	stalled string // why the last measured window stalled, "" when it did not
	target  trial.Target
	startup time.Duration
	busy    float64
	waited  time.Duration
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// iterate measures one iteration of a fork and appends it to disk; it
// returns the measured group's row.
func (l *Loop) iterate(ctx context.Context, f *forkRun, it int, plan load.Plan) (record.Trial, error) {
	m, r, j, t := l.M, l.Rep, f.job, f.target
	c := r.Cell(l.M, j.Cell.ID(), nil)
	plan.Seed = m.Seed + int64(f.seq)*1000 + int64(it)
	if p := l.Progress; p != nil {
		plan.OnTick = p.Tick
	}
	spin := 0.0
	if !l.OtherHost { // the probe times this machine: a target elsewhere runs on another CPU
		spin = telemetry.SpinNs()
	}
	w, err := l.Hooks.Measure(ctx, t, plan)
	if err != nil {
		return record.Trial{}, fmt.Errorf("%s fork %d iteration %d: %w", j.Cell.Variant.Name, f.fork, it, err)
	}
	res := w.Result
	f.stalled = res.Stalled
	reasons := trial.WindowReasons(t.Exited(), res)
	reasons = append(reasons, w.NoiseReasons...)
	reasons = append(reasons, trial.FlagReasons(m, w.Flags)...)
	c.Trial++
	rows := w.rows(m.Load.Measure, j, f.seq, reasons)
	trial.CheckBounds(m, j.Cell.Variant, plan, res, rows)
	for i := range rows {
		rows[i].Trial, rows[i].Fork, rows[i].Iteration, rows[i].Retry = c.Trial, f.fork, it, f.retry
		rows[i].HostBusyPct, rows[i].CoolDownMs = f.busy, ms(f.waited)
		rows[i].HostSpinNs = spin
		if it == 1 {
			rows[i].StartupMs = ms(f.startup)
		}
		rows[i].Pid = t.Pid()
		rows[i].Log = trial.LogName(j, f.seq, f.fork)
	}
	// Order matters for resume: trials.csv is written last, so a trial is
	// "done" only once its series and latency are on disk too.
	if _, err := trial.SaveHistograms(l.Dir, j, f.seq, c.Trial, res); err != nil {
		return rows[0], err
	}
	if err := record.AppendCSV(l.Dir, record.SeriesFile, trial.SeriesRows(j, c.Trial, f.fork, it, res, w.Samples)); err != nil {
		return rows[0], err
	}
	if err := record.AppendCSV(l.Dir, record.LatencyFile, trial.LatencyRows(j, c.Trial, f.fork, it, res)); err != nil {
		return rows[0], err
	}
	if err := record.AppendCSV(l.Dir, record.TrialsFile, rows); err != nil {
		return rows[0], err
	}
	if err := l.Hooks.SaveMeta(); err != nil {
		return rows[0], err
	}
	shown := j
	shown.Fork = f.fork // a replacement fork has its own id
	if p := l.Progress; p != nil {
		p.Done(shown, rows[0])
	}
	if l.Progress == nil {
		l.Hooks.Logf("%d/%d %s iteration %d: %s", f.seq, l.Jobs, Label(shown), it, Describe(rows[0]))
	}
	return rows[0], nil
}

// Label names a job on the console and in the log: "virtual fork 2".
func Label(j replicate.Job) string {
	s := j.Cell.Variant.Name
	if p := j.Cell.PointString(); p != "" {
		s += " " + p
	}
	return fmt.Sprintf("%s fork %d", s, j.Fork)
}

// Describe is an iteration's outcome in one line of the console or the log.
func Describe(r record.Trial) string {
	v := fmt.Sprintf("%.0f rps, wall %.0f ms, p99 %.1f ms, %d errors, %d threads", r.RPS, r.WallMs, r.P99Ms, r.Errors, r.DistinctThreads)
	if !r.Valid {
		v += " (invalid: " + r.Reason + ")"
	}
	return v
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }

func now() string { return time.Now().UTC().Format(time.RFC3339) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// rows are the window's trials.csv rows (trial.Rows) with what the window
// measured around the load: the target's CPU, host noise and telemetry
// flags. A measured iteration and a warm-up round read a window alike.
func (w Window) rows(measured string, j replicate.Job, seq int, reasons []string) []record.Trial {
	samples := w.RowSamples
	if samples == nil {
		samples = w.Samples
	}
	rows := trial.Rows(measured, j, seq, w.Started, w.Result, samples, reasons)
	var codes []string
	for _, x := range w.Flags {
		codes = append(codes, x.Code)
	}
	for i := range rows {
		rows[i].HostOutsidePct, rows[i].HostStealPct = round1(w.Outside), round1(w.Steal)
		rows[i].Flags = strings.Join(codes, ";")
		rows[i].HostsNoise = w.HostsNoise
		rows[i].TargetCPUSec, rows[i].TargetCPUMsPerReq = w.CPUSec, w.CPUMsPerReq
	}
	return rows
}
