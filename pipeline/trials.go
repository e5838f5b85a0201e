package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/env/targets"
	"github.com/threadlab/threadlab/pipeline/load"
	"github.com/threadlab/threadlab/pipeline/record"
	"github.com/threadlab/threadlab/pipeline/telemetry"
)

// Trials runs every job of the schedule that is not on disk yet, storing
// each trial the moment it ends.
type Trials struct{}

func (Trials) Name() string { return "trials" }

// errStartup marks a target that did not come up; the manifest decides
// whether the run stops or goes on.
var errStartup = errors.New("target failed to start")

func (Trials) Run(ctx context.Context, s *State) error {
	if cpus := s.M.Pinning.Generator; cpus != "" {
		list, err := env.ParseCPUList(cpus)
		if err == nil {
			err = env.Pin(os.Getpid(), list)
		}
		if err != nil {
			return fmt.Errorf("pin the load generator to CPUs %s: %w", cpus, err)
		}
	}
	total, done := len(s.Jobs), len(s.Done)
	if p := s.Opt.Progress; p != nil {
		p.Start(total, done)
		defer p.Close()
	}
	var kept map[string]Target // targets kept across trials when fresh_jvm is false
	if !*s.M.FreshJVM {
		kept = map[string]Target{}
		defer func() {
			for _, t := range kept {
				t.Stop()
			}
		}()
	}
	for i, j := range s.Jobs {
		if s.Done[j.key()] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		err := s.runTrial(ctx, i+1, j, kept)
		if err == nil {
			s.Done[j.key()] = true
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, errStartup) && s.M.Startup.OnFailure == "continue" {
			s.Warn("%s trial %d: %v", j.Cell.Variant.Name, j.Trial, err)
			row := record.Trial{Variant: j.Cell.Variant.Name, Point: j.Cell.PointString(), Group: s.M.Load.Measure,
				Trial: j.Trial, Seq: i + 1, Valid: false, Reason: "target failed to start", Started: now()}
			if err := record.AppendCSV(s.Dir, record.TrialsFile, []record.Trial{row}); err != nil {
				return err
			}
			s.Done[j.key()] = true
			continue
		}
		return err
	}
	return nil
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }

var slugRE = regexp.MustCompile(`[^a-zA-Z0-9.-]+`)

// runTrial starts (or reuses) the target, warms it up, measures, stops it
// and appends the trial to disk.
func (s *State) runTrial(ctx context.Context, seq int, j Job, kept map[string]Target) error {
	m := s.M
	var reasons []string
	var waited time.Duration
	var busy float64
	if m.CoolDown.MaxBusyPct < 100 { // 100 opens the gate: no need to measure
		waited, busy = telemetry.CoolDown(ctx, m.CoolDown.MaxBusyPct, m.CoolDown.MaxWait)
	}
	if busy > m.CoolDown.MaxBusyPct {
		reasons = append(reasons, fmt.Sprintf("host busy: %.0f%% CPU outside threadlab after waiting %s", busy, waited.Round(time.Millisecond)))
	}
	cellKey := j.Cell.Variant.Name + "@" + j.Cell.PointString()
	t := kept[cellKey]
	var startup time.Duration
	if t == nil {
		var err error
		start := time.Now()
		t, err = s.launch(ctx, j, seq)
		if err != nil {
			return err
		}
		startup = time.Since(start)
		s.OnCleanup(func() { t.Stop() })
		if kept != nil {
			kept[cellKey] = t
		} else {
			defer t.Stop()
		}
		s.Meta.TargetCmds[cellKey] = t.Argv()
	}
	if p := s.Opt.Progress; p != nil {
		p.Trial(j, seq)
	}
	plan, err := LoadPlan(m, j.Cell, t.URL(), m.Seed+int64(seq))
	if err != nil {
		return err
	}
	if err := s.warmup(ctx, j, seq, plan); err != nil {
		return err
	}
	if p := s.Opt.Progress; p != nil {
		plan.OnTick = p.Tick
	}
	sampler := telemetry.Start(ctx, t.Pid(), t.MetricsURL(), time.Second)
	started := now()
	res, err := load.Run(ctx, plan)
	samples := sampler.Stop()
	if err != nil {
		return fmt.Errorf("%s trial %d: %w", j.Cell.Variant.Name, j.Trial, err)
	}
	if exit := t.Exited(); exit != nil {
		reasons = append(reasons, "the target died during the trial: "+exit.Error())
	}
	if res.Self.Saturated {
		reasons = append(reasons, "load generator saturated: "+res.Self.Reason)
	}
	rows := trialRows(s, j, seq, started, res, samples, reasons)
	for i := range rows {
		rows[i].HostBusyPct = busy
		rows[i].CoolDownMs = ms(waited)
		rows[i].StartupMs = ms(startup)
		rows[i].Pid = t.Pid()
		rows[i].Log = logName(j, seq)
	}
	// Order matters for resume: trials.csv is written last, so a trial is
	// "done" only once its series and latency are on disk too.
	if _, err := saveHistograms(s.Dir, j, seq, res); err != nil {
		return err
	}
	if err := record.AppendCSV(s.Dir, record.SeriesFile, seriesRows(j, res, samples)); err != nil {
		return err
	}
	if err := record.AppendCSV(s.Dir, record.LatencyFile, latencyRows(j, res)); err != nil {
		return err
	}
	if err := record.AppendCSV(s.Dir, record.TrialsFile, rows); err != nil {
		return err
	}
	if err := s.saveMeta(); err != nil {
		return err
	}
	if p := s.Opt.Progress; p != nil {
		p.Done(j, rows[0])
	}
	if s.Opt.Progress == nil {
		s.Logf("trial %d/%d %s: %s", seq, len(s.Jobs), cellLabel(j), describe(rows[0]))
	}
	if kept == nil && m.CoolDown.Pause > 0 {
		t.Stop()
		select {
		case <-ctx.Done():
		case <-time.After(m.CoolDown.Pause):
		}
	}
	return nil
}

func describe(r record.Trial) string {
	v := fmt.Sprintf("%.0f rps, wall %.0f ms, p99 %.1f ms, %d errors, %d threads", r.RPS, r.WallMs, r.P99Ms, r.Errors, r.DistinctThreads)
	if !r.Valid {
		v += " (invalid: " + r.Reason + ")"
	}
	return v
}

func logName(j Job, seq int) string {
	p := slugRE.ReplaceAllString(j.Cell.PointString(), "_")
	if p != "" {
		p = "-" + p
	}
	return filepath.Join(record.LogsDir, fmt.Sprintf("%03d-%s%s-t%d.log", seq, j.Cell.Variant.Name, p, j.Trial))
}

// launch starts the target of a job and waits until it is ready.
func (s *State) launch(ctx context.Context, j Job, seq int) (Target, error) {
	m, v := s.M, j.Cell.Variant
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	var argv []string
	if v.Target != "" {
		jar := s.Jars[v.Target]
		argv = targets.Command(s.JavaHome, jar, port, Properties(m, j.Cell, s.ServiceProps), v.JVM)
	} else {
		subst := maps.Clone(s.ServiceSubst)
		subst["port"] = strconv.Itoa(port)
		for _, a := range v.Command {
			for k, x := range subst {
				a = strings.ReplaceAll(a, "{"+k+"}", x)
			}
			argv = append(argv, a)
		}
	}
	if m.Pinning.Target != "" {
		// taskset at exec time pins every thread the JVM will ever create;
		// sched_setaffinity on a running JVM would miss threads made later.
		argv = append([]string{"taskset", "-c", m.Pinning.Target}, argv...)
	}
	var envs []string
	for _, k := range slices.Sorted(maps.Keys(v.Env)) {
		envs = append(envs, k+"="+v.Env[k])
	}
	logPath := filepath.Join(s.Dir, logName(j, seq))
	t, err := s.Opt.Launcher.Launch(ctx, Spec{Name: v.Name, Argv: argv, Env: envs, Port: port, Ready: v.Ready, Metrics: v.Metrics, LogPath: logPath})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errStartup, v.Name, err)
	}
	if err := waitReady(ctx, t, v.Ready, logPath, m.Startup.Timeout); err != nil {
		t.Stop()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %s: %v", errStartup, v.Name, err)
	}
	return t, nil
}

// warmup sends the trial's own load, untimed, until the manifest's warm-up
// has passed (at least once): the JIT compiles the identical code path the
// trial measures (seed 000's warm-up bug). Warm-up numbers go to warmup.csv.
func (s *State) warmup(ctx context.Context, j Job, seq int, plan load.Plan) error {
	w := s.M.Load.Warmup
	if w <= 0 {
		return nil
	}
	p := plan
	p.Groups = slices.Clone(plan.Groups)
	timed := false
	for i := range p.Groups {
		if p.Groups[i].Model != load.Burst {
			p.Groups[i].Duration = w
			p.Groups[i].Start = 0
			timed = true
		}
	}
	deadline := time.Now().Add(w)
	for round := 1; ; round++ {
		res, err := load.Run(ctx, p)
		if err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		rows := trialRows(s, j, seq, now(), res, nil, []string{fmt.Sprintf("warm-up round %d", round)})
		for i := range rows {
			rows[i].Valid = false
		}
		if err := record.AppendCSV(s.Dir, record.WarmupFile, rows); err != nil {
			return err
		}
		if timed || time.Now().After(deadline) || ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// trialRows turns a load result and the server samples into trials.csv rows.
func trialRows(s *State, j Job, seq int, started string, res *load.Result, samples []telemetry.Sample, reasons []string) []record.Trial {
	var cpu, rss float64
	var threads int
	for _, x := range samples {
		cpu += x.CPUUserPct + x.CPUSysPct
		rss = max(rss, x.RSSMB)
		threads = max(threads, x.Threads)
	}
	if len(samples) > 0 {
		cpu /= float64(len(samples))
	}
	var rows []record.Trial
	for _, g := range res.Groups {
		r := record.Trial{
			Variant: j.Cell.Variant.Name, Point: j.Cell.PointString(), Group: g.Name, Trial: j.Trial, Seq: seq,
			Started: started, Requests: g.Requests, Errors: g.Errors, RPS: g.RPS,
			P50Ms: g.QuantileMs(50), P90Ms: g.QuantileMs(90), P99Ms: g.QuantileMs(99), P999Ms: g.QuantileMs(99.9),
			MaxMs: g.MaxMs(), WallMs: ms(g.Wall), DistinctThreads: len(g.Headers),
			ErrorClasses: classes(g.ErrorsByClass), AskedRate: g.AskedRate, AchievedRate: g.AchievedRate,
			Missed: g.Missed, LatePct: g.LatePct, GenCPUPct: res.Self.CPUPct, GenSaturated: res.Self.Saturated,
			TargetCPUPct: cpu, TargetThreads: threads, TargetRSSMB: rss,
		}
		if g.Latency != nil && g.Latency.TotalCount() > 0 {
			r.MeanMs = g.Latency.Mean() / 1000
		}
		if g.Requests > 0 {
			r.ErrorPct = 100 * float64(g.Errors) / float64(g.Requests)
		}
		rr := slices.Clone(reasons)
		if g.Requests == 0 {
			rr = append(rr, "no request completed")
		}
		r.Valid = len(rr) == 0
		r.Reason = strings.Join(rr, "; ")
		rows = append(rows, r)
	}
	// The measured group first: it is the row that answers the question.
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].Group == s.M.Load.Measure && rows[b].Group != s.M.Load.Measure })
	return rows
}

func classes(m map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
		}
	}
	return strings.Join(parts, ";")
}

// seriesRows joins the client's per-second series with the server samples
// of the same second. A second without a server sample (or without a JVM
// scrape, for the JVM columns) keeps its server columns missing: empty in
// series.csv, a gap in the charts, never a fall to 0.
func seriesRows(j Job, res *load.Result, samples []telemetry.Sample) []record.Sample {
	bySec := map[int]telemetry.Sample{}
	for _, x := range samples {
		bySec[int(x.T)] = x
	}
	g := func(x float64) record.Gauge { return record.Gauge(x) }
	var out []record.Sample
	for _, gr := range res.Groups {
		for _, sec := range gr.Series {
			m := record.Missing()
			r := record.Sample{Variant: j.Cell.Variant.Name, Point: j.Cell.PointString(), Trial: j.Trial, Group: gr.Name,
				T: float64(sec.T), Requests: sec.Requests, Errors: sec.Errors, P50Ms: sec.P50Ms, P99Ms: sec.P99Ms,
				TargetCPUPct: m, TargetRSSMB: m, OSThreads: m, JVMThreads: m, HeapUsedMB: m, GCCount: m, GCPauseMs: m,
				HikariActive: m, HikariPending: m, GenCPUPct: m, HostCPUPct: m, HostStealPct: m}
			if x, ok := bySec[sec.T]; ok {
				r.TargetCPUPct, r.TargetRSSMB, r.OSThreads = g(x.CPUUserPct+x.CPUSysPct), g(x.RSSMB), g(float64(x.Threads))
				r.GenCPUPct, r.HostCPUPct, r.HostStealPct = g(x.GenCPUPct), g(x.HostCPUPct), g(x.HostStealPct)
				if x.JVM {
					r.JVMThreads, r.HeapUsedMB, r.GCCount, r.GCPauseMs = g(x.JVMLiveThreads), g(x.HeapUsedMB), g(x.GCCount), g(x.GCPauseMs)
					r.HikariActive, r.HikariPending = g(x.HikariActive), g(x.HikariPending)
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// Spectrum is the percentile ladder stored per trial for the latency chart.
var Spectrum = []float64{50, 75, 90, 95, 99, 99.9, 99.99, 100}

func latencyRows(j Job, res *load.Result) []record.Quantile {
	var out []record.Quantile
	for _, g := range res.Groups {
		for _, q := range Spectrum {
			out = append(out, record.Quantile{Variant: j.Cell.Variant.Name, Point: j.Cell.PointString(), Group: g.Name, Trial: j.Trial, Percentile: q, Ms: g.QuantileMs(q)})
		}
	}
	return out
}
