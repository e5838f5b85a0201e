package pipeline

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/threadlab/threadlab/env/targets"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/measure/telemetry"
	"github.com/threadlab/threadlab/pipeline/forks"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/pipeline/trial"
)

// The fork loop lives in package forks; these are its hooks into the run
// (forks.Hooks): launching a target here or on the target host, the load
// here or on the load hosts, the measured window's samplers (this
// machine's, or every host's: hostsample.go), the affinity read-back,
// the wall clock and run.json.

// forkLoop is the fork loop of this run.
func (s *State) forkLoop() *forks.Loop {
	return &forks.Loop{M: s.M, Dir: s.Dir, Rep: s.rep, Jobs: len(s.Jobs), OtherHost: s.hosts != nil,
		Progress: s.Opt.Progress, Hooks: forkHooks{s}}
}

// forkHooks is what the fork loop asks of the run.
type forkHooks struct{ s *State }

// Launch starts the fork's target (launch), stops it when the run ends
// and records its command line.
func (h forkHooks) Launch(ctx context.Context, j replicate.Job, seq, fork int) (trial.Target, error) {
	s := h.s
	t, err := s.launch(ctx, j, seq, fork)
	if err != nil {
		return nil, err
	}
	s.OnCleanup(func() { t.Stop() })
	s.Meta.TargetCmds[j.Cell.Variant.Name+"@"+j.Cell.PointString()] = t.Argv()
	return t, nil
}

// Measure samples the target here (telemetry) and, on a multi-host run,
// every host (hostsample.go) around the load's window, from its release
// to its last answer.
func (h forkHooks) Measure(ctx context.Context, t trial.Target, plan load.Plan) (forks.Window, error) {
	return h.s.window(ctx, t, plan, tMeasure)
}

// Round is a warm-up round's window, sampled as Measure's; the fork loop
// books the warm-up's time.
func (h forkHooks) Round(ctx context.Context, t trial.Target, plan load.Plan) (forks.Window, error) {
	return h.s.window(ctx, t, plan, "")
}

// window runs plan inside a sampled window and books the load's time to
// bucket ("" books nothing).
func (s *State) window(ctx context.Context, t trial.Target, plan load.Plan, bucket string) (forks.Window, error) {
	sampler := telemetry.StartWith(ctx, t.Pid(), t.MetricsURL(), telemetry.Options{Interval: time.Second, Groups: s.groups})
	var onHosts *hostSampling
	if s.hosts != nil { // hostsample.go: the target's /proc and each host's noise, read there
		onHosts = s.hosts.startSampling(ctx, s, t)
	}
	w := forks.Window{Started: now()}
	t0 := time.Now()
	res, err := s.runLoadIn(ctx, plan, trialWindow(sampler, onHosts)) // the window (host samplers, target CPU-seconds) is the load's, release to last answer (hosts.go, hostsample.go)
	if bucket != "" {
		s.spent(bucket, time.Since(t0))
	}
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
		return forks.Window{}, err
	}
	w.Result, w.Samples, w.Flags = res, samples, flags
	w.RowSamples = onHosts.rowSamples(samples) // under --hosts, within the load's edges (hostsample.go)
	w.Outside, w.Steal = measureNoise(samples)
	if onHosts != nil { // each host gated on its own
		w.Outside, w.Steal = worst(noise)
		w.NoiseReasons = hostReasons
	} else {
		w.NoiseReasons = trial.NoiseReasons(s.M.Noise, w.Outside, w.Steal)
	}
	w.HostsNoise = noiseText(noise)
	w.CPUSec, w.CPUMsPerReq = cpuColumns(sampler, onHosts, res) // hostsample.go
	return w, nil
}

// ReadBack reads the affinity of the target and the services (affinity.go).
func (h forkHooks) ReadBack(t trial.Target) {
	h.s.readBack(roleTarget, h.s.M.Pinning.Target, t.Pid())
	h.s.readBackServices()
}

func (h forkHooks) Spent(bucket string, d time.Duration) { h.s.spent(bucket, d) }
func (h forkHooks) Warn(format string, a ...any)         { h.s.Warn(format, a...) }
func (h forkHooks) Logf(format string, a ...any)         { h.s.Logf(format, a...) }
func (h forkHooks) SaveMeta() error                      { return h.s.saveMeta() }

// measureNoise is trial.HostNoise; tests of the re-run logic replace it.
var measureNoise = trial.HostNoise

// launch starts the target of a fork and waits until it is ready.
func (s *State) launch(ctx context.Context, j replicate.Job, seq, fork int) (trial.Target, error) {
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
			if jh, jar, extra, actuator, err = s.hosts.javaTarget(ctx, s, v, jar, extra, props, port); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", forks.ErrStartup, v.Name, err)
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
	t, err := s.Opt.Launcher.Launch(ctx, trial.Spec{Name: v.Name, Argv: argv, Env: envs, Port: port, Ready: v.Ready, Metrics: v.Metrics, LogPath: logPath, ActuatorPort: actuator})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", forks.ErrStartup, v.Name, err)
	}
	if err := trial.WaitReady(ctx, t, v.Ready, logPath, m.Startup.Timeout); err != nil {
		t.Stop()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %s: %v", forks.ErrStartup, v.Name, err)
	}
	return t, nil
}
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func round1(x float64) float64 { return math.Round(x*10) / 10 }

func now() string { return time.Now().UTC().Format(time.RFC3339) }
