package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/env/targets"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/measure/telemetry"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// Trials runs every fork of the schedule that is not on disk yet: a fresh
// target per fork, its warm-up, then its measured iterations, each stored
// the moment it ends. Invalid iterations (host noise, a dead target, a
// saturated generator) are re-run within the manifest's retry budget per
// cell; with forks: {min, max}, forks past min run only while a claim that
// reads the cell is undecided (see Decide).
type Trials struct {
	// Decide looks at the claims between sequential rounds; nil means
	// DecideByClaims.
	Decide Decide
}

// Decide is replicate.Decide given the run's state: it looks at the data
// on disk after a fork has ended and returns the cells no undecided claim
// needs any more (look is the fork about to run, maxLooks the most a cell
// may get).
type Decide func(s *State, look, maxLooks int) (map[replicate.CellID]bool, error)

// DecideByClaims is the default Decide: replicate.ByClaims on the run's
// directory, with the claims stage's rules.
func DecideByClaims(s *State, look, maxLooks int) (map[replicate.CellID]bool, error) {
	return replicate.ByClaims(s.Dir, s.M, stats.Options{Seed: s.M.Seed, Version: Version()})(look, maxLooks)
}

func (Trials) Name() string { return "trials" }

// errStartup marks a target that did not come up; the manifest decides
// whether the run stops or goes on.
var errStartup = errors.New("target failed to start")

func (t Trials) Run(ctx context.Context, s *State) error {
	if cpus := s.M.Pinning.Generator; cpus != "" && s.hosts == nil {
		list, err := env.ParseCPUList(cpus)
		if err == nil {
			err = env.Pin(os.Getpid(), list)
		}
		if err != nil {
			return fmt.Errorf("pin the load generator to CPUs %s: %w", cpus, err)
		}
	}
	// What is in force, not what was asked: read back after pinning, and
	// the services again after each fork's first iteration (backends).
	s.readBack(roleGenerator, s.M.Pinning.Generator, os.Getpid())
	s.readBackServices()
	r := s.rep
	s.snapshotClock()
	s.Meta.Forks, s.Meta.Iterations = s.M.Forks.String(), s.M.Iterations
	onDisk, err := record.ReadCSV[record.Trial](s.Dir, record.TrialsFile)
	if err != nil {
		return err
	}
	planned, done := 0, 0
	for _, j := range s.Jobs {
		r.Cell(s.M, j.Cell.ID(), onDisk)
		if j.Fork <= s.M.Forks.Min {
			planned += s.M.Iterations
			if s.Done[j.Key()] {
				done += s.M.Iterations
			}
		}
	}
	if p := s.Opt.Progress; p != nil {
		p.Start(planned, done)
		defer p.Close()
	}
	defer func() { s.Meta.Cells = r.Stops(s.M) }()
	for i, j := range s.Jobs {
		if s.Done[j.Key()] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		decide := t.Decide
		if decide == nil {
			decide = DecideByClaims
		}
		ok, err := r.Wanted(s.M, j, func(look, maxLooks int) (map[replicate.CellID]bool, error) { return decide(s, look, maxLooks) })
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := s.runCell(ctx, i+1, j); err != nil {
			return err
		}
		s.Done[j.Key()] = true
		r.ForkDone()
	}
	return nil
}

// runCell runs fork j.Fork of a cell; when that fork is lost (its target
// did not start or died), replacement forks follow while the retry budget
// lasts, so the cell still ends with its planned number of forks.
func (s *State) runCell(ctx context.Context, seq int, j replicate.Job) error {
	c := s.rep.Cell(s.M, j.Cell.ID(), nil)
	fork, retry := j.Fork, false
	for {
		lost, err := s.runFork(ctx, seq, j, fork, retry)
		if err != nil || lost == "" {
			return err
		}
		s.Warn("%s fork %d lost: %s", j.Cell.ID(), fork, lost)
		if !s.rep.Spend(s.M, c) {
			return nil
		}
		fork, retry = c.NextFork, true
		c.NextFork++
	}
}

// runFork starts a target, warms it up and measures its iterations,
// re-running invalid ones within the budget. lost says why the fork ended
// without a live target ("" when it ran to the end).
func (s *State) runFork(ctx context.Context, seq int, j replicate.Job, fork int, retry bool) (lost string, err error) {
	m, r := s.M, s.rep
	c := r.Cell(s.M, j.Cell.ID(), nil)
	f := forkRun{seq: seq, job: j, fork: fork, retry: retry}
	f.waited, f.busy = s.gate(ctx)
	if p := s.Opt.Progress; p != nil {
		p.Trial(j, seq)
	}
	t, lost, err := s.startFork(ctx, &f)
	if t == nil {
		return lost, err
	}
	defer s.stopFork(ctx, t)
	plan, err := trial.LoadPlan(m, j.Cell, t.URL(), m.Seed+int64(seq))
	if err != nil {
		return "", err
	}
	t0 := time.Now()
	err = s.warmup(ctx, j, seq, fork, plan)
	s.spent(tWarmups, time.Since(t0))
	if err != nil {
		return "", err
	}
	valid := 0
	for it := 1; valid < m.Iterations; it++ {
		if it > m.Iterations {
			if !r.Spend(s.M, c) {
				break
			}
			f.retry = true
		}
		if it > 1 {
			t0 := time.Now()
			sleep(ctx, m.CoolDown.Iteration)
			s.spent(tCoolDowns, time.Since(t0))
		}
		if err := ctx.Err(); err != nil {
			return "", err
		}
		row, err := s.iterate(ctx, &f, it, plan)
		if err != nil {
			return "", err
		}
		if it == 1 {
			// Under load: the target's threads and the database backends
			// serving it exist now.
			s.readBack(roleTarget, m.Pinning.Target, t.Pid())
			s.readBackServices()
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
func (s *State) gate(ctx context.Context) (time.Duration, float64) {
	m := s.M
	if m.CoolDown.MaxBusyPct >= 100 || s.hosts != nil { // 100 opens the gate: no need to measure; hosts.go: not this machine
		return 0, 0
	}
	t0 := time.Now()
	waited, busy := telemetry.CoolDown(ctx, m.CoolDown.MaxBusyPct, m.CoolDown.MaxWait)
	s.spent(tCoolDowns, time.Since(t0))
	return waited, busy
}

// startFork launches the fork's target. A target that does not start is
// an error, or with startup.on_failure: continue an invalid row and a lost
// fork (nil target, lost says why).
func (s *State) startFork(ctx context.Context, f *forkRun) (t Target, lost string, err error) {
	m, j := s.M, f.job
	c := s.rep.Cell(s.M, j.Cell.ID(), nil)
	t0 := time.Now()
	t, err = s.launch(ctx, j, f.seq, f.fork)
	f.startup = time.Since(t0)
	s.spent(tStarts, f.startup)
	c.Runs++
	if err == nil {
		f.target = t
		s.OnCleanup(func() { t.Stop() })
		s.Meta.TargetCmds[j.Cell.Variant.Name+"@"+j.Cell.PointString()] = t.Argv()
		return t, "", nil
	}
	if !errors.Is(err, errStartup) || m.Startup.OnFailure != "continue" || ctx.Err() != nil {
		return nil, "", err
	}
	c.Trial++
	row := record.Trial{Variant: j.Cell.Variant.Name, Point: j.Cell.PointString(), Group: m.Load.Measure,
		Trial: c.Trial, Seq: f.seq, Fork: f.fork, Retry: f.retry, Valid: false, Reason: "target failed to start", Started: now()}
	if err := record.AppendCSV(s.Dir, record.TrialsFile, []record.Trial{row}); err != nil {
		return nil, "", err
	}
	return nil, err.Error(), nil
}

// stopFork stops a fork's target and pauses (cooldown.pause) so the next
// fork does not start beside its shutdown.
func (s *State) stopFork(ctx context.Context, t Target) {
	t0 := time.Now()
	t.Stop()
	s.spent(tStops, time.Since(t0))
	if p := s.M.CoolDown.Pause; p > 0 && ctx.Err() == nil {
		t0 = time.Now()
		sleep(ctx, p)
		s.spent(tCoolDowns, time.Since(t0))
	}
}

// forkRun is what the iterations of one fork share.
type forkRun struct {
	seq     int
	job     replicate.Job
	fork    int
	retry   bool // this fork, or the current iteration, re-runs an invalid one
	target  Target
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
func (s *State) iterate(ctx context.Context, f *forkRun, it int, plan load.Plan) (record.Trial, error) {
	m, r, j, t := s.M, s.rep, f.job, f.target
	c := r.Cell(s.M, j.Cell.ID(), nil)
	plan.Seed = m.Seed + int64(f.seq)*1000 + int64(it)
	if p := s.Opt.Progress; p != nil {
		plan.OnTick = p.Tick
	}
	sampler := telemetry.StartWith(ctx, t.Pid(), t.MetricsURL(), telemetry.Options{Interval: time.Second, Groups: s.groups})
	var onHosts *hostSampling
	if s.hosts != nil { // hostsample.go: the target's /proc and each host's noise, read there
		onHosts = s.hosts.startSampling(ctx, s, t)
	}
	started := now()
	t0 := time.Now()
	res, err := s.runLoadIn(ctx, plan, trialWindow(sampler, onHosts)) // the window (host samplers, target CPU-seconds) is the load's, release to last answer (hosts.go, hostsample.go)
	s.spent(tMeasure, time.Since(t0))
	samples, flags := sampler.Stop(), sampler.Flags()
	var noise []noiseOn
	var hostReasons []string
	if onHosts != nil {
		samples, flags, noise, hostReasons = onHosts.stop(s, samples, flags)
	}
	s.mu.Lock()
	said := slices.Clone(s.Meta.Warnings)
	s.mu.Unlock()
	for _, w := range telemetry.NewWarnings(flags, said) { // each flag's fix-it sentence, once per code per run
		s.Warn("%s", w)
	}
	if err != nil {
		return record.Trial{}, fmt.Errorf("%s fork %d iteration %d: %w", j.Cell.Variant.Name, f.fork, it, err)
	}
	reasons := trial.WindowReasons(t.Exited(), res)
	outside, steal := measureNoise(samples)
	if onHosts != nil { // each host gated on its own
		outside, steal = worst(noise)
		reasons = append(reasons, hostReasons...)
	} else {
		reasons = append(reasons, trial.NoiseReasons(m.Noise, outside, steal)...)
	}
	reasons = append(reasons, trial.FlagReasons(m, flags)...)
	c.Trial++
	seqNo := f.seq
	rows := trial.Rows(m.Load.Measure, j, seqNo, started, res, onHosts.rowSamples(samples), reasons) // under --hosts, the samples within the load's edges (hostsample.go)
	trial.CheckBounds(m, j.Cell.Variant, plan, res, rows)
	var codes []string
	for _, x := range flags {
		codes = append(codes, x.Code)
	}
	for i := range rows {
		rows[i].Trial, rows[i].Fork, rows[i].Iteration, rows[i].Retry = c.Trial, f.fork, it, f.retry
		rows[i].HostBusyPct, rows[i].CoolDownMs = f.busy, ms(f.waited)
		rows[i].HostOutsidePct, rows[i].HostStealPct = round1(outside), round1(steal)
		rows[i].Flags = strings.Join(codes, ";")
		rows[i].HostsNoise = noiseText(noise)
		rows[i].TargetCPUSec, rows[i].TargetCPUMsPerReq = cpuColumns(sampler, onHosts, res) // hostsample.go
		if it == 1 {
			rows[i].StartupMs = ms(f.startup)
		}
		rows[i].Pid = t.Pid()
		rows[i].Log = trial.LogName(j, f.seq, f.fork)
	}
	// Order matters for resume: trials.csv is written last, so a trial is
	// "done" only once its series and latency are on disk too.
	if _, err := trial.SaveHistograms(s.Dir, j, f.seq, c.Trial, res); err != nil {
		return rows[0], err
	}
	if err := record.AppendCSV(s.Dir, record.SeriesFile, trial.SeriesRows(j, c.Trial, f.fork, it, res, samples)); err != nil {
		return rows[0], err
	}
	if err := record.AppendCSV(s.Dir, record.LatencyFile, trial.LatencyRows(j, c.Trial, f.fork, it, res)); err != nil {
		return rows[0], err
	}
	if err := record.AppendCSV(s.Dir, record.TrialsFile, rows); err != nil {
		return rows[0], err
	}
	if err := s.saveMeta(); err != nil {
		return rows[0], err
	}
	shown := j
	shown.Fork = f.fork // a replacement fork has its own id
	if p := s.Opt.Progress; p != nil {
		p.Done(shown, rows[0])
	}
	if s.Opt.Progress == nil {
		s.Logf("%d/%d %s iteration %d: %s", f.seq, len(s.Jobs), cellLabel(shown), it, describe(rows[0]))
	}
	return rows[0], nil
}

// measureNoise is trial.HostNoise; tests of the re-run logic replace it.
var measureNoise = trial.HostNoise

func round1(x float64) float64 { return math.Round(x*10) / 10 }

func now() string { return time.Now().UTC().Format(time.RFC3339) }

func describe(r record.Trial) string {
	v := fmt.Sprintf("%.0f rps, wall %.0f ms, p99 %.1f ms, %d errors, %d threads", r.RPS, r.WallMs, r.P99Ms, r.Errors, r.DistinctThreads)
	if !r.Valid {
		v += " (invalid: " + r.Reason + ")"
	}
	return v
}

// launch starts the target of a fork and waits until it is ready.
func (s *State) launch(ctx context.Context, j replicate.Job, seq, fork int) (Target, error) {
	m, v := s.M, j.Cell.Variant
	port, err := s.targetPort(ctx)
	if err != nil {
		return nil, err
	}
	var argv []string
	actuator := 0
	if v.Target != "" {
		jar, extra := s.JVM.StartOf(v)
		jh, props := s.JVM.JavaHomeOf(v.Name), trial.Properties(m, j.Cell, s.ServiceProps)
		if s.hosts != nil { // the target host's JDK, the jar shipped there, its address
			if jh, jar, extra, err = s.hosts.javaTarget(ctx, s, v, jar, extra, props); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", errStartup, v.Name, err)
			}
		} else if actuator, err = trial.ActuatorPort(props); err != nil {
			return nil, err
		}
		argv = targets.Command(jh, jar, port, props, slices.Concat(v.JVM, extra))
	} else {
		subst := maps.Clone(s.ServiceSubst)
		subst["address"] = "127.0.0.1" // one machine: listeners on loopback, so one manifest runs both ways
		if s.hosts != nil {
			s.hosts.subst(subst)
		}
		subst["port"] = strconv.Itoa(port)
		for _, a := range v.Command {
			for k, x := range subst {
				a = strings.ReplaceAll(a, "{"+k+"}", x)
			}
			argv = append(argv, a)
		}
	}
	if m.Pinning.Target != "" && s.hosts == nil { // on hosts: the inventory's cpus (hostLauncher)
		// taskset at exec time pins every thread the JVM will ever create;
		// sched_setaffinity on a running JVM would miss threads made later.
		argv = append([]string{"taskset", "-c", m.Pinning.Target}, argv...)
	}
	var envs []string
	for _, k := range slices.Sorted(maps.Keys(v.Env)) {
		envs = append(envs, k+"="+v.Env[k])
	}
	envs = append(envs, s.ServiceEnv...) // secrets such as the database password: not on the command line
	logPath := filepath.Join(s.Dir, trial.LogName(j, seq, fork))
	t, err := s.Opt.Launcher.Launch(ctx, Spec{Name: v.Name, Argv: argv, Env: envs, Port: port, Ready: v.Ready, Metrics: v.Metrics, LogPath: logPath, ActuatorPort: actuator})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errStartup, v.Name, err)
	}
	if err := trial.WaitReady(ctx, t, v.Ready, logPath, m.Startup.Timeout); err != nil {
		t.Stop()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %s: %v", errStartup, v.Name, err)
	}
	return t, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// trialRows is trial.Rows of the run's measured group (the warm-up's rows too).
func trialRows(s *State, j replicate.Job, seq int, started string, res *load.Result, samples []telemetry.Sample, reasons []string) []record.Trial {
	return trial.Rows(s.M.Load.Measure, j, seq, started, res, samples, reasons)
}
