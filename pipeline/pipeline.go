// Package pipeline runs an experiment: it plans the trials of a manifest,
// drives the stages (host check, fingerprint, build, services, trials,
// aggregate, claims, report) over one shared State, and leaves a run
// directory under data/ and a report under reports/.
//
// The pipeline only orchestrates; measuring, statistics, host inspection,
// storage, judging the claims and rendering live in the packages below it
// (load, stats, env, telemetry, record, verdicts, report), and so do the
// rooms of a run it sequences: the host-limit refusal (preflight), the
// schedule and replication policy (replicate), the estimate (cost) and a
// trial's launch and rows (trial). None of them imports this one
// (README's Layout). Every finished trial is on disk before the
// next one starts, so a crash or Ctrl-C loses nothing that was finished,
// and a run can be resumed.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/threadlab/threadlab/env/hosts"
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/preflight"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/store/record"
)

// Stage is one step of a run. It returns an error only when the run cannot
// go on; everything else goes into the state's warnings.
type Stage interface {
	Name() string
	Run(ctx context.Context, s *State) error
}

// Stages is the default pipeline. Reading it tells what a run does.
func Stages() []Stage {
	return []Stage{
		HostCheck{},
		Fingerprint{},
		Build{},
		Services{},
		Trials{},
		Aggregate{},
		Claims{},
		Report{},
	}
}

// finishing are the stages that still run after an interruption, on the
// trials that finished, so an interrupted run still has its summary and report.
func finishing(st Stage) bool {
	if f, ok := st.(interface{ Finishing() bool }); ok {
		return f.Finishing() // a stage of a custom pipeline can say so itself
	}
	switch st.(type) {
	case Aggregate, Claims, Report:
		return true
	}
	return false
}

// Options configure a run; none of them changes a measurement.
type Options struct {
	DataDir    string         // default "data"
	ReportsDir string         // default "reports"
	TargetsDir string         // the Maven project of the built-in targets; default "env/targets"
	RunID      string         // default: UTC time stamp
	Resume     string         // an existing run directory to continue
	Command    string         // how the run was started, for "how to reproduce"
	Log        io.Writer      // plain log lines; default io.Discard
	Progress   Progress       // live display; default none
	Launcher   trial.Launcher // default trial.Processes{}
	Stages     []Stage        // default Stages()
	NoReport   bool           // skip rendering (tests of the data alone)
	// Downstream is the command of the downstream service as a process of
	// its own ({port} and {delay} are replaced), e.g. threadlab downstream
	// --port {port} --delay {delay}. It is used when the manifest pins
	// services, so the service runs on their CPUs; without it, or without
	// pinning.services, the service runs inside threadlab.
	Downstream []string
	// Hosts places the roles on other hosts over SSH (threadlab run
	// --hosts, hosts.go); nil runs everything on this machine.
	Hosts *hosts.Inventory
	// Threadlab returns a threadlab binary for a host's GOOS and GOARCH,
	// to ship to it; nil cross-builds the module in the working directory
	// (remote.Binary). Multi-host runs only.
	Threadlab func(ctx context.Context, goos, goarch string) (string, error)
}

// State is what the stages share.
type State struct {
	M    *experiments.Manifest
	Opt  Options
	Dir  string // the run directory
	Meta record.Meta
	Jobs []replicate.Job
	Done map[string]bool // jobs already on disk (resume)
	// JVM is how each variant's built-in target starts: its JDK, its jar
	// and its AOT cache (the build stage fills it).
	JVM trial.JVMs
	// ServiceProps are the Spring properties pointing targets at the services.
	ServiceProps map[string]string
	// ServiceSubst replaces {name} in command variants (e.g. {downstream}).
	ServiceSubst map[string]string
	// ServiceEnv is KEY=VALUE for every target's environment: secrets that
	// must not be on a command line (any local user can read those, and the
	// report records them), such as the database password.
	ServiceEnv []string
	Components map[string]string // versions of the targets' frameworks
	ReportPath string            // the rendered report page

	mu       sync.Mutex
	cleanups []func()

	rep *replicate.Policy // forks, retries and sequential stops
	// resumed: this process continues an interrupted run (resume.go).
	resumed bool
	// booked holds the wall-clock buckets as the last stage ended, so a
	// resumed run's earlier seconds are not booked twice (clock.go).
	booked map[string]float64
	// groups are the process groups of services threadlab started (the
	// PostgreSQL cluster): their CPU is the experiment's, not host noise.
	groups []int

	// CPU affinity read back (affinity.go, trial.ReadBack): the services'
	// processes, the processes already recorded and the roles already
	// warned about.
	pgGroup       int // the PostgreSQL cluster's process group
	downstreamPid int // the downstream service's process (threadlab's own when in-process)
	aff           trial.ReadBack

	hosts *hostRun // a multi-host run's connections; nil on one machine (hosts.go)

	settledOnce bool // settle ran (before the report); the next keeps its finish time
}

// Warn records a warning for the report and the log.
func (s *State) Warn(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	s.mu.Lock()
	s.Meta.Warnings = append(s.Meta.Warnings, msg)
	s.mu.Unlock()
	s.Logf("warning: %s", msg)
}

// Logf writes a plain log line.
func (s *State) Logf(format string, a ...any) {
	if s.Opt.Log != nil {
		fmt.Fprintf(s.Opt.Log, format+"\n", a...)
	}
}

// OnCleanup registers f to run when the run ends, however it ends (LIFO).
func (s *State) OnCleanup(f func()) {
	s.mu.Lock()
	s.cleanups = append(s.cleanups, f)
	s.mu.Unlock()
}

func (s *State) cleanup() {
	s.mu.Lock()
	fs := s.cleanups
	s.cleanups = nil
	s.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// saveMeta rewrites run.json; after Abandon it writes nothing more.
func (s *State) saveMeta() error {
	active.Lock()
	defer active.Unlock()
	if active.abandoned {
		return errors.New("the run was abandoned by a force-quit")
	}
	return record.WriteJSON(s.Dir, record.RunFile, s.Meta)
}

// active are the runs in progress, for Abandon.
var active struct {
	sync.Mutex
	runs      map[*State]bool
	abandoned bool
}

// Abandon marks every run in progress as interrupted on disk and stops
// them from writing run.json again. It is the force-quit of a second Ctrl-C,
// which exits without the finishing stages: the run must not be left
// saying "running". It is safe to call from a signal handler's goroutine.
func Abandon() {
	active.Lock()
	defer active.Unlock()
	active.abandoned = true
	for s := range active.runs {
		var m record.Meta
		if err := record.ReadJSON(s.Dir, record.RunFile, &m); err != nil {
			continue
		}
		m.State = "interrupted"
		m.Error = "force-quit by a second signal; resume with: threadlab run --resume " + s.Dir
		m.Finished = time.Now().UTC().Format(time.RFC3339)
		_ = record.WriteJSON(s.Dir, record.RunFile, m)
	}
}

// Run executes the manifest and returns the run directory. On an error or
// interruption the finished trials stay on disk, the run is marked as such,
// and the summary and report are still produced from what finished.
func Run(ctx context.Context, m *experiments.Manifest, opt Options) (*State, error) {
	if opt.DataDir == "" {
		opt.DataDir = "data"
	}
	if opt.ReportsDir == "" {
		opt.ReportsDir = "reports"
	}
	if opt.TargetsDir == "" {
		opt.TargetsDir = filepath.Join("env", "targets")
	}
	if opt.Launcher == nil {
		opt.Launcher = trial.Processes{}
	}
	if opt.Stages == nil {
		opt.Stages = Stages()
	}
	var hr *hostRun
	if opt.Hosts == nil {
		if err := preflight.Check(m, opt.Resume); err != nil { // fds, ports, memory
			return nil, err
		}
	} else {
		// This machine only directs: the hosts' own checks stand in for
		// its limits. Every host must answer before anything starts.
		mm := m
		if mm == nil {
			var err error
			if mm, err = experiments.Load(filepath.Join(opt.Resume, record.ManifestFile), ""); err != nil {
				return nil, fmt.Errorf("resume %s: %w", opt.Resume, err)
			}
		}
		var err error
		if hr, err = connectHosts(ctx, mm, opt); err != nil {
			return nil, err
		}
		defer hr.close() // after s.cleanup, which stops the remote programs
		if opt.Launcher == nil || opt.Launcher == (trial.Processes{}) {
			opt.Launcher = hostLauncher{hr}
		}
	}
	s, err := newState(m, opt)
	if err != nil {
		return nil, err
	}
	defer s.cleanup()
	if hr != nil {
		s.hosts = hr
		s.Meta.Hosts = hr.rec
		s.Meta.Pinning = hr.pinningText()
		if err := s.saveMeta(); err != nil {
			return s, err
		}
	}
	active.Lock()
	if active.runs == nil {
		active.runs = map[*State]bool{}
	}
	active.runs[s] = true
	active.Unlock()
	defer func() {
		active.Lock()
		delete(active.runs, s)
		active.Unlock()
	}()

	var runErr error
	for _, st := range opt.Stages {
		if runErr == nil && ctx.Err() != nil {
			// A stage that finished despite the signal must not let the
			// next ones start: only the finishing stages run from here.
			runErr = fmt.Errorf("interrupted before %s: %w", st.Name(), context.Canceled)
		}
		if runErr != nil && !finishing(st) {
			continue
		}
		stageCtx := ctx
		if runErr != nil {
			// Summarize what finished even after Ctrl-C, within a bound; a
			// second Ctrl-C force-quits (cmd/threadlab).
			var cancel context.CancelFunc
			stageCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			defer cancel()
		}
		if _, ok := st.(Report); ok {
			s.settle(ctx, runErr) // the report shows the run's final state
		}
		s.Logf("== %s", st.Name())
		stageStart := time.Now()
		err := runStage(stageCtx, st, s)
		s.stageDone(st, time.Since(stageStart))
		if err == nil && runErr == nil && ctx.Err() != nil {
			err = context.Canceled // the stage swallowed the signal
		}
		if err != nil {
			if runErr == nil {
				runErr = fmt.Errorf("%s: %w", st.Name(), err)
			} else {
				s.Warn("%s after the run stopped: %v", st.Name(), err)
			}
		}
	}
	s.settle(ctx, runErr)
	if err := s.saveMeta(); err != nil && runErr == nil {
		runErr = err
	}
	return s, runErr
}

// runStage runs one stage and turns a panic into an error, so that the run
// is settled as failed (not left "running") and the cleanups still stop
// every process it started.
func runStage(ctx context.Context, st Stage, s *State) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error (a bug in threadlab; please report it with this message): panic: %v\n%s", r, debug.Stack())
		}
	}()
	return st.Run(ctx, s)
}

// settle records how the run ended.
// Settled once before the report and again after it: the second keeps
// the first's finish time when the state did not change, so run.json says
// what the report shows and a re-render gives the same page.
func (s *State) settle(ctx context.Context, runErr error) {
	was, finished := s.Meta.State, s.Meta.Finished
	defer func() {
		if s.settledOnce && s.Meta.State == was && finished != "" {
			s.Meta.Finished = finished
		}
		s.settledOnce = true
	}()
	s.Meta.Finished = time.Now().UTC().Format(time.RFC3339)
	switch {
	case runErr == nil:
		s.Meta.State = "complete"
		s.Meta.Error = ""
	case errors.Is(runErr, context.Canceled) || ctx.Err() != nil:
		s.Meta.State = "interrupted"
		s.Meta.Error = "interrupted; resume with: threadlab run --resume " + s.Dir
	default:
		s.Meta.State = "failed"
		s.Meta.Error = runErr.Error()
	}
}

func newState(m *experiments.Manifest, opt Options) (_ *State, err error) {
	s := &State{M: m, Opt: opt, Done: map[string]bool{}, ServiceProps: map[string]string{}, ServiceSubst: map[string]string{}}
	s.rep = replicate.New(s.Logf)
	defer func() {
		if err != nil {
			s.cleanup() // the run directory's lock
		}
	}()
	if opt.Resume != "" {
		return s, s.resume()
	}
	id, err := s.createDir(m, opt)
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(filepath.Join(s.Dir, record.LogsDir), 0o755); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	seed := m.Seed
	if seed == 0 {
		seed = time.Now().UnixNano() & 0x7fffffffffff
	}
	m.Seed = seed
	s.Jobs = replicate.Schedule(m, seed)
	host, _ := os.Hostname()
	s.Meta = record.Meta{
		ID: id, Experiment: m.Name, Title: m.Title, Question: strings.TrimSpace(m.Question), Source: m.Source,
		Profile: m.ProfileName(), Manifest: m.File, Seed: seed, Command: opt.Command,
		Started: time.Now().UTC().Format(time.RFC3339), State: "running", Trials: m.Forks.Min, Host: host,
		Measured: m.Load.Measure, Primary: m.Primary(), Version: Version(), Pinning: pinningText(m),
		TargetCmds: map[string][]string{},
	}
	for _, v := range m.Variants {
		s.Meta.Variants = append(s.Meta.Variants, v.Name)
	}
	for _, d := range m.Sweep {
		s.Meta.SweepKeys = append(s.Meta.SweepKeys, d.Name)
	}
	s.Meta.Groups = append(s.Meta.Groups, m.Load.Measure)
	for _, g := range m.Load.Groups {
		if g.Name != m.Load.Measure {
			s.Meta.Groups = append(s.Meta.Groups, g.Name)
		}
	}
	for _, j := range s.Jobs {
		s.Meta.Order = append(s.Meta.Order, j.Key())
	}
	manifest, err := experiments.Marshal(m)
	if err != nil {
		return nil, err
	}
	if err := record.WriteFile(s.Dir, record.ManifestFile, manifest); err != nil {
		return nil, err
	}
	return s, s.saveMeta()
}

// createDir makes the new run's directory exclusively and takes its lock
// (record.Lock), held until the run ends (a cleanup, run last). Two runs
// given one --run-id: the second finds the directory there and stops. Two
// runs started in the same second with the default id: the second takes
// the next free suffix (-2, -3, ...).
func (s *State) createDir(m *experiments.Manifest, opt Options) (string, error) {
	id := opt.RunID
	if id != "" {
		if err := record.CheckRunID(id); err != nil {
			return "", fmt.Errorf("--run-id: %w", err)
		}
	}
	parent := filepath.Join(opt.DataDir, m.Name)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("create run directory: %w", err)
	}
	base := time.Now().UTC().Format("20060102T150405Z")
	for n := 1; ; n++ {
		try := id
		if try == "" {
			try = base
			if n > 1 {
				try = fmt.Sprintf("%s-%d", base, n)
			}
		}
		s.Dir = filepath.Join(parent, try)
		err := os.Mkdir(s.Dir, 0o755)
		if err == nil {
			id = try
			break
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("create run directory: %w", err)
		}
		if id != "" || n >= 100 {
			return "", fmt.Errorf("run directory %s exists already (pick another run id, or resume it with --resume %s)", s.Dir, s.Dir)
		}
	}
	release, err := record.Lock(s.Dir)
	if err != nil {
		return "", err
	}
	s.OnCleanup(release)
	return id, nil
}

// resume continues a run directory: same manifest, same seed, same order;
// jobs already in trials.csv are skipped.
func (s *State) resume() error {
	s.Dir = s.Opt.Resume
	s.resumed = true
	if err := record.CheckDir(s.Dir); err != nil {
		return fmt.Errorf("resume %s: %w", s.Dir, err)
	}
	// One writer per run directory: a second resume (or the run itself,
	// still going) holds the lock, and this one stops before touching it.
	release, err := record.Lock(s.Dir)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	s.OnCleanup(release)
	if err := record.ReadJSON(s.Dir, record.RunFile, &s.Meta); err != nil {
		return fmt.Errorf("resume %s: %w (pass a data/<experiment>/<run-id> directory)", s.Dir, err)
	}
	m, err := experiments.Load(filepath.Join(s.Dir, record.ManifestFile), "")
	if err != nil {
		return fmt.Errorf("resume %s: %w", s.Dir, err)
	}
	if err := resumeVersion(s.Dir, Version(), s.Meta.Version); err != nil {
		return err
	}
	m.Profile = s.Meta.Profile
	s.M = m
	s.Jobs = replicate.Schedule(m, s.Meta.Seed)
	rep, err := record.Repair(s.Dir) // torn lines and rows of the trial a crash cut short
	if err != nil {
		return fmt.Errorf("resume %s: %w", s.Dir, err)
	}
	if msg := rep.String(); msg != "" {
		s.Logf("resume: %s", msg)
	}
	trials, err := record.ReadCSV[record.Trial](s.Dir, record.TrialsFile)
	if err != nil {
		return err
	}
	for _, t := range trials {
		s.Done[replicate.JobKey(t.Variant, t.Point, t.Fork)] = true
	}
	s.Meta.State = "running"
	s.Meta.Error = ""
	if s.Meta.TargetCmds == nil {
		s.Meta.TargetCmds = map[string][]string{}
	}
	host, _ := os.Hostname()
	s.noteResume(host)
	s.Logf("resuming %s: %d of %d trials already done", s.Dir, len(s.Done), len(s.Jobs))
	return s.saveMeta()
}

func pinningText(m *experiments.Manifest) string {
	p := m.Pinning
	if p.Target == "" && p.Generator == "" && p.Services == "" {
		return "none: target, services and load generator shared all cores"
	}
	return fmt.Sprintf("target CPUs %q, services CPUs %q, generator CPUs %q", p.Target, p.Services, p.Generator)
}
