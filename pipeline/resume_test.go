package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/store/record"
)

// TestResumeAfterTornFiles: a run stops after two trials, and the third
// crashed midway: its warm-up, series and latency rows are on disk, its
// trials.csv row is torn in the middle. The resume must redo that trial
// without duplicating or gluing any row, and aggregation, verdicts and the
// report must work on the result.
func TestResumeAfterTornFiles(t *testing.T) {
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
	j := s.Jobs[2] // the trial the crash cut short
	v, p := j.Cell.Variant.Name, j.Cell.PointString()
	crash := []struct {
		file string
		rows any
	}{
		{record.WarmupFile, []record.Trial{{Variant: v, Point: p, Group: "main", Trial: j.Fork, Fork: j.Fork, Seq: 3, Reason: "warm-up round 1"}}},
		{record.SeriesFile, []record.Sample{{Variant: v, Point: p, Group: "main", Trial: j.Fork, Fork: j.Fork, T: 0, Requests: 40}}},
		{record.LatencyFile, []record.Quantile{{Variant: v, Point: p, Group: "main", Trial: j.Fork, Fork: j.Fork, Percentile: 50, Ms: 50}}},
	}
	for _, c := range crash {
		var err error
		switch rows := c.rows.(type) {
		case []record.Trial:
			err = record.AppendCSV(s.Dir, c.file, rows)
		case []record.Sample:
			err = record.AppendCSV(s.Dir, c.file, rows)
		case []record.Quantile:
			err = record.AppendCSV(s.Dir, c.file, rows)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, record.TrialsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(v + "," + p + ",main,") // power lost mid-row
	f.Close()

	o2 := o
	o2.Resume = s.Dir
	o2.RunID = ""
	var log strings.Builder
	o2.Log = &log
	s2, err := Run(context.Background(), nil, o2)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if !strings.Contains(log.String(), "dropped 1 rows of unfinished trials from series.csv") {
		t.Errorf("resume log does not say what it repaired:\n%s", log.String())
	}
	r, err := record.Read(s2.Dir)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	if r.Meta.State != "complete" || len(r.Trials) != 4 {
		t.Fatalf("after resume: state %s, %d trials; want complete with 4", r.Meta.State, len(r.Trials))
	}
	type key struct {
		v, p  string
		trial int
	}
	trials, series, warm := map[key]int{}, map[key]int{}, map[key]int{}
	for _, x := range r.Trials {
		trials[key{x.Variant, x.Point, x.Trial}]++
	}
	for _, x := range r.Series {
		if x.T == 0 {
			series[key{x.Variant, x.Point, x.Trial}]++
		}
	}
	w, err := record.ReadCSV[record.Trial](s2.Dir, record.WarmupFile)
	if err != nil {
		t.Fatalf("warmup.csv: %v", err)
	}
	for _, x := range w {
		if x.Reason == "warm-up round 1" {
			warm[key{x.Variant, x.Point, x.Trial}]++
		}
	}
	for k, n := range trials {
		if n != 1 || series[k] != 1 || warm[k] != 1 {
			t.Errorf("trial %v: %d trials rows, %d series rows for second 0, %d first warm-up rounds; want 1 each", k, n, series[k], warm[k])
		}
	}
	if len(r.Summary) == 0 || len(r.Verdicts) == 0 {
		t.Errorf("aggregation did not run on the repaired files: %d summary rows, verdicts %q", len(r.Summary), r.Verdicts)
	}
}

// TestTargetLogAppends: a resumed run starts a trial's target again with
// the same log file; the crashed attempt's output must survive.
func TestTargetLogAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "001-a-t1.log")
	for _, word := range []string{"first-attempt", "second-attempt"} {
		tg, err := trial.Processes{}.Launch(context.Background(), trial.Spec{Name: "a", Argv: []string{"sh", "-c", "echo " + word}, LogPath: path})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for tg.Exited() == nil && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		tg.Stop()
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "first-attempt") || !strings.Contains(string(b), "second-attempt") {
		t.Errorf("log after two launches:\n%s\nwant both attempts' output", b)
	}
}

// TestStalledTrialIsInvalid: a target that stops answering mid-run (here a
// handler that hangs for 100 s, standing in for a frozen JVM) used to give
// a valid trial full of timeouts; the load generator's stall watchdog now
// ends it early and the trial is invalid with the reason.
func TestStalledTrialIsInvalid(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the 5s default stall limit")
	}
	m, err := experiments.Parse("stall.yaml", []byte(`name: stall
title: A target that stops answering
question: Is a frozen target's trial invalid?
variants:
  frozen: {command: [inproc, "{port}"], ready: /health}
load:
  model: closed
  users: 2
  duration: 60s
  timeout: 200ms
  requests: [{path: "/io?ms=100000"}]
trials: 1
retries: 0 # the stalled window must stay the only row, not be re-run
cooldown: {max_busy_pct: 100, max_wait: 1ms, pause: 1ms}
`), "")
	if err != nil {
		t.Fatal(err)
	}
	o := opts(t, &inproc{})
	o.NoReport = true
	start := time.Now()
	s, err := Run(context.Background(), m, o)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 40*time.Second {
		t.Errorf("run took %v: the stalled trial should end long before its 60s duration", took)
	}
	r, err := record.Read(s.Dir)
	if err != nil || len(r.Trials) != 1 {
		t.Fatalf("read back: %d trials, %v", len(r.Trials), err)
	}
	if tr := r.Trials[0]; tr.Valid || !strings.Contains(tr.Reason, "stalled") || !strings.Contains(tr.Reason, "no response for") {
		t.Errorf("trial valid=%v reason %q: want invalid because the target stalled", tr.Valid, tr.Reason)
	}
}

// TestResumeVersion: a run's trials all come from the version run.json
// names; another binary is refused with how to get the right one.
func TestResumeVersion(t *testing.T) {
	cases := []struct {
		name, have, started string
		want                []string // substrings of the error; nil: accepted
	}{
		{"same commit: the run goes on", "ce87397", "ce87397", nil},
		{"a later commit: refused, with the worktree that rebuilds the start's", "a1b2c3d", "ce87397",
			[]string{"threadlab a1b2c3d", "started by threadlab ce87397", "git worktree add /tmp/threadlab-ce87397 ce87397"}},
		{"started -dirty: cannot be rebuilt, so a new run", "ce87397", "ce87397-dirty",
			[]string{"started by threadlab ce87397-dirty", "start a new run from a committed tree"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := resumeVersion("data/x/r1", c.have, c.started)
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// interruptAfter runs the inproc manifest and interrupts it after n
// launches; the run directory is left as Ctrl-C leaves it.
func interruptAfter(t *testing.T, n int) (Options, *State) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := &inproc{afterLaunch: func(k int) {
		if k == n {
			cancel()
		}
	}}
	o := opts(t, l)
	// A manifest on disk, so that the fingerprint (which hashes it) is taken.
	file := filepath.Join(t.TempDir(), "inproc.yaml")
	text := fmt.Sprintf(manifest, 2)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := experiments.Parse(file, []byte(text), "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Run(ctx, m, o)
	if err == nil {
		t.Fatal("interrupted run returned no error")
	}
	o.Resume, o.RunID = s.Dir, ""
	return o, s
}

// TestResumeKeepsStartFingerprint: a resume on the same machine is
// recorded in run.json and keeps the start's fingerprint file.
func TestResumeKeepsStartFingerprint(t *testing.T) {
	o, s := interruptAfter(t, 2)
	fp := filepath.Join(s.Dir, record.FingerprintFile)
	before, err := os.ReadFile(fp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), nil, o); err != nil {
		t.Fatalf("resume: %v", err)
	}
	r, err := record.Read(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.State != "complete" || len(r.Meta.Resumes) != 1 {
		t.Fatalf("state %s, resumes %+v; want complete with one resume", r.Meta.State, r.Meta.Resumes)
	}
	if rs := r.Meta.Resumes[0]; rs.Of != 4 || rs.Done < 1 || rs.Done >= 4 || rs.At == "" {
		t.Errorf("resume record %+v: want the forks done of 4 and a time", rs)
	}
	after, _ := os.ReadFile(fp)
	if string(after) != string(before) {
		t.Error("the resume replaced the start's fingerprint")
	}
}

// TestResumeRefusesAnotherMachine: a run started on another CPU model is
// not continued here; the error names the field, the start's fingerprint
// stays, and no resume is recorded.
func TestResumeRefusesAnotherMachine(t *testing.T) {
	o, s := interruptAfter(t, 2)
	var fp map[string]any
	if err := record.ReadJSON(s.Dir, record.FingerprintFile, &fp); err != nil {
		t.Fatal(err)
	}
	fp["cpu"].(map[string]any)["model"] = "Some Other CPU @ 9.99GHz"
	if err := record.WriteJSON(s.Dir, record.FingerprintFile, fp); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(s.Dir, record.FingerprintFile))
	_, err := Run(context.Background(), nil, o)
	if err == nil || !strings.Contains(err.Error(), "cpu.model") || !strings.Contains(err.Error(), "Some Other CPU") {
		t.Fatalf("resume on another machine: %v; want a refusal naming cpu.model", err)
	}
	r, rerr := record.Read(s.Dir)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if len(r.Meta.Resumes) != 0 {
		t.Errorf("a refused resume was recorded: %+v", r.Meta.Resumes)
	}
	after, _ := os.ReadFile(filepath.Join(s.Dir, record.FingerprintFile))
	if string(after) != string(before) {
		t.Error("the refused resume overwrote the start's fingerprint")
	}
	n := 0
	for _, tr := range r.Trials {
		if tr.Group == "main" {
			n++
		}
	}
	if n >= 4 {
		t.Errorf("%d trials after a refused resume: it measured on the other machine", n)
	}
}

// TestFrozenTargetEndsItsFork: once a window stalls, the fork's target is
// frozen (call-depth's platform Tomcat deadlocked on its own nested calls
// and never answered again), so the fork ends there instead of waiting out
// the stall limit in each of its remaining windows; a replacement fork
// follows within the retry budget.
func TestFrozenTargetEndsItsFork(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the 5s default stall limit twice")
	}
	m, err := experiments.Parse("frozen.yaml", []byte(`name: frozen
title: A target that freezes for good
question: Does a frozen target's fork end at its first stalled window?
variants:
  frozen: {command: [inproc, "{port}"], ready: /health}
load:
  model: closed
  users: 2
  duration: 60s
  timeout: 200ms
  requests: [{path: "/io?ms=100000"}]
forks: 1
iterations: 4
retries: 1
cooldown: {max_busy_pct: 100, max_wait: 1ms, pause: 1ms, iteration: 1ms}
`), "")
	if err != nil {
		t.Fatal(err)
	}
	o := opts(t, &inproc{})
	o.NoReport = true
	var log strings.Builder
	o.Log = &log
	s, err := Run(context.Background(), m, o)
	if err != nil {
		t.Fatal(err)
	}
	r, err := record.Read(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	// Fork 1's first window stalls: the fork is lost; replacement fork 2
	// (retries: 1) stalls too; then the cell gives up. Without the rule:
	// 4 stalled windows of fork 1 and a re-run, 5 rows.
	if len(r.Trials) != 2 {
		t.Fatalf("%d rows, want 2 (one stalled window per fork)", len(r.Trials))
	}
	for i, tr := range r.Trials {
		if tr.Valid || tr.Fork != i+1 || tr.Iteration != 1 || !strings.Contains(tr.Reason, "stalled") {
			t.Errorf("row %d: fork %d iteration %d valid=%v %q; want fork %d's only window, invalid for a stall", i, tr.Fork, tr.Iteration, tr.Valid, tr.Reason, i+1)
		}
	}
	if !strings.Contains(log.String(), "fork 1 lost: the target froze: group main stalled") {
		t.Errorf("the log does not say why fork 1 was lost:\n%s", log.String())
	}
}
