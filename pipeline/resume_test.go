package pipeline

import (
	"context"
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
