package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/render/console"
	"github.com/threadlab/threadlab/store/record"
)

// inproc launches an in-process HTTP server per target: /io?ms=N sleeps N
// ms; a variant named "slow" takes twice as long. Each server counts its
// handler goroutines into X-Thread, like a pool of workers of size pool.
type inproc struct {
	mu       sync.Mutex
	launched int
	running  atomic.Int32
	// failOn makes the n-th launch (1-based) fail.
	failOn int
	// afterLaunch runs after every launch (to interrupt a run).
	afterLaunch func(n int)
}

type inprocTarget struct {
	srv   *http.Server
	port  int
	argv  []string
	once  sync.Once
	owner *inproc
}

func (t *inprocTarget) URL() string        { return "http://127.0.0.1:" + strconv.Itoa(t.port) }
func (t *inprocTarget) Pid() int           { return os.Getpid() }
func (t *inprocTarget) MetricsURL() string { return "" }
func (t *inprocTarget) Exited() error      { return nil }
func (t *inprocTarget) Argv() []string     { return t.argv }
func (t *inprocTarget) Stop() error {
	t.once.Do(func() {
		t.srv.Close()
		t.owner.running.Add(-1)
	})
	return nil
}

func (l *inproc) Launch(ctx context.Context, s trial.Spec) (trial.Target, error) {
	l.mu.Lock()
	l.launched++
	n := l.launched
	l.mu.Unlock()
	if n == l.failOn {
		return nil, errors.New("simulated start failure")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(s.Port))
	if err != nil {
		return nil, err
	}
	factor := 1
	if s.Name == "slow" {
		factor = 2
	}
	var worker atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/io", func(w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		w.Header().Set("X-Thread", fmt.Sprintf("worker-%d", worker.Add(1)%8))
		time.Sleep(time.Duration(ms*factor) * time.Millisecond)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	l.running.Add(1)
	t := &inprocTarget{srv: srv, port: s.Port, argv: s.Argv, owner: l}
	if l.afterLaunch != nil {
		l.afterLaunch(n)
	}
	return t, nil
}

const manifest = `name: inproc
title: In-process pipeline test
question: Does the pipeline run end to end?
variants:
  fast: {command: [inproc, "{port}"], ready: /health}
  slow: {command: [inproc, "{port}"], ready: /health}
load:
  model: burst
  burst: 40
  requests: [{path: "/io?ms=50"}]
  warmup: 50ms
trials: %d
seed: 42
cooldown: {max_busy_pct: 100, max_wait: 1ms, pause: 1ms}
# Other engineers share this machine: the in-trial noise gate is opened too.
noise: {max_outside_pct: 100000, max_steal_pct: 100000}
claims:
  - id: fast-wins
    says: fast finishes the burst in at most 0.8 of slow's time
    check: {metric: wall_ms, compare: [slow, fast], at_least: 1.25}
    decision: {when: always, pick: fast}
`

func parse(t *testing.T, trials int) *experiments.Manifest {
	t.Helper()
	m, err := experiments.Parse("inproc.yaml", []byte(fmt.Sprintf(manifest, trials)), "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func opts(t *testing.T, l trial.Launcher) Options {
	dir := t.TempDir()
	return Options{DataDir: filepath.Join(dir, "data"), ReportsDir: filepath.Join(dir, "reports"), Launcher: l, RunID: "r1"}
}

func TestRunEndToEnd(t *testing.T) {
	l := &inproc{}
	o := opts(t, l)
	s, err := Run(context.Background(), parse(t, 6), o)
	if err != nil {
		t.Fatal(err)
	}
	r, err := record.Read(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.State != "complete" || len(r.Trials) != 12 {
		t.Fatalf("state %s, %d trial rows; want complete with 2 variants x 6 trials", r.Meta.State, len(r.Trials))
	}
	if l.launched != 12 || l.running.Load() != 0 {
		t.Errorf("launched %d targets (want one fresh target per trial: 12), %d still running", l.launched, l.running.Load())
	}
	// Interleaved: every variant's trial k runs before any trial k+1.
	for _, tr := range r.Trials {
		if tr.Seq > 2*tr.Trial || tr.Seq <= 2*(tr.Trial-1) {
			t.Errorf("trial %d of %s ran at position %d: not interleaved", tr.Trial, tr.Variant, tr.Seq)
		}
		if !tr.Valid || tr.Requests != 40 || tr.Errors != 0 || tr.DistinctThreads == 0 {
			t.Errorf("trial row %+v: want a valid burst of 40 with threads counted", tr)
		}
		if tr.HostSpinNs <= 0 {
			t.Errorf("trial %d of %s: host_spin_ns %v, want the host speed probe taken before the window", tr.Trial, tr.Variant, tr.HostSpinNs)
		}
	}
	var fastWall, slowWall float64
	for _, sm := range r.Summary {
		if sm.Metric == "wall_ms" && sm.Variant == "fast" {
			fastWall = sm.Median
		}
		if sm.Metric == "wall_ms" && sm.Variant == "slow" {
			slowWall = sm.Median
		}
	}
	if !(fastWall >= 50 && slowWall >= 100 && slowWall > 1.5*fastWall) {
		t.Errorf("wall medians fast %.1f slow %.1f: want slow (100 ms sleeps) well above fast (50 ms)", fastWall, slowWall)
	}
	vs, err := r.ReadVerdicts()
	if err != nil || len(vs) != 1 || vs[0].Status != "supported" || vs[0].Decision == nil {
		t.Errorf("verdicts %+v (%v): want fast-wins supported with its decision", vs, err)
	}
	for _, f := range []string{record.ManifestFile, record.SeriesFile, record.LatencyFile, record.ComparisonsFile, "warmup.csv"} {
		if _, err := os.Stat(filepath.Join(s.Dir, f)); err != nil {
			t.Errorf("run directory lacks %s", f)
		}
	}
	if s.ReportPath == "" {
		t.Error("no report rendered")
	}
	var sum strings.Builder
	if err := console.Summary(&sum, s.Dir); err != nil || !strings.Contains(sum.String(), "supported") {
		t.Errorf("summary: %v\n%s", err, sum.String())
	}
}

// TestInterruptAndResume cancels a run after its third target starts: the
// finished trials stay on disk, the run says it was interrupted, and a
// resume completes it without repeating any trial.
func TestInterruptAndResume(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := &inproc{afterLaunch: func(n int) {
		if n == 3 {
			cancel()
		}
	}}
	o := opts(t, l)
	s, err := Run(ctx, parse(t, 2), o)
	if err == nil {
		t.Fatal("interrupted run returned no error")
	}
	r, rerr := record.Read(s.Dir)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if r.Meta.State != "interrupted" || len(r.Trials) != 2 {
		t.Fatalf("state %s with %d trials: want interrupted with the 2 finished trials kept", r.Meta.State, len(r.Trials))
	}
	if l.running.Load() != 0 {
		t.Errorf("%d targets left running after the interruption", l.running.Load())
	}
	o2 := o
	o2.Resume = s.Dir
	o2.RunID = ""
	s2, err := Run(context.Background(), nil, o2)
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := record.Read(s2.Dir)
	seen := map[string]bool{}
	for _, tr := range r2.Trials {
		k := replicate.JobKey(tr.Variant, tr.Point, tr.Trial)
		if seen[k] {
			t.Errorf("trial %s recorded twice after resume", k)
		}
		seen[k] = true
	}
	if r2.Meta.State != "complete" || len(r2.Trials) != 4 {
		t.Errorf("after resume: state %s, %d trials; want complete with 4", r2.Meta.State, len(r2.Trials))
	}
}

func TestStartupFailureStops(t *testing.T) {
	l := &inproc{failOn: 2}
	s, err := Run(context.Background(), parse(t, 2), opts(t, l))
	if err == nil || !strings.Contains(err.Error(), "simulated start failure") {
		t.Fatalf("want the start failure reported, got %v", err)
	}
	r, _ := record.Read(s.Dir)
	if r.Meta.State != "failed" || len(r.Trials) != 1 {
		t.Errorf("state %s with %d trials: want failed, keeping the 1 finished trial", r.Meta.State, len(r.Trials))
	}
}
