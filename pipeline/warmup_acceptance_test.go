package pipeline

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// warming launches a fresh HTTP server per fork whose /io answers in 150
// ms for the first slow[variant] requests that process serves (a JIT
// warming up) and in 40 ms afterwards. Both variants are equally fast in
// steady state; only "late" warms up for longer than a fixed warm-up of
// one burst covers.
type warming struct{ slow map[string]int64 }

func (w warming) Launch(ctx context.Context, s trial.Spec) (trial.Target, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(s.Port))
	if err != nil {
		return nil, err
	}
	var served atomic.Int64
	slow := w.slow[s.Name]
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("/io", func(http.ResponseWriter, *http.Request) {
		d := 40 * time.Millisecond
		if served.Add(1) <= slow {
			d = 150 * time.Millisecond
		}
		time.Sleep(d)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	owner := &inproc{}
	owner.running.Add(1)
	return &inprocTarget{srv: srv, port: s.Port, argv: s.Argv, owner: owner}, nil
}

// warmingManifest: "late" needs 24 requests (6 bursts of 4) to warm up,
// "early" 4 (one burst). WARMUP is replaced per case.
const warmingManifest = `name: warming
title: a warm-up that outlasts the fixed warm-up in one variant
question: is the variant that warms up later reported slower?
variants:
  late: {command: [warming, "{port}"], ready: /health}
  early: {command: [warming, "{port}"], ready: /health}
load: {model: burst, burst: 4, requests: [{path: "/io"}], warmup: WARMUP}
forks: 4
iterations: 10
retries: 0
seed: 11
cooldown: {max_busy_pct: 100, max_wait: 1ms, pause: 1ms, iteration: 1ms}
# Other engineers share this machine: the in-trial noise gate is opened.
noise: {max_outside_pct: 100000, max_steal_pct: 100000}
claims:
  - id: early-is-faster
    says: the early variant finishes its burst at least 1.2x sooner
    check: {metric: wall_ms, compare: [late, early], at_least: 1.2}
  - id: same-speed
    says: both variants take the same time, within -20%/+25%
    check: {metric: wall_ms, compare: [late, early], at_least: 0.8, at_most: 1.25}
`

// TestWarmupOutlastsFixed is issue 20's acceptance test. A variant whose
// warm-up outlasts the manifest's fixed warm-up looks 3x slower in its
// first measured iterations. With the fixed warm-up, per-fork steady-state
// selection must keep "the other variant is faster" from being
// supported; with warmup: {until: steady} the two must come out equal.
func TestWarmupOutlastsFixed(t *testing.T) {
	run := func(t *testing.T, warmup string) (map[string]record.Verdict, *record.Run) {
		src := []byte(strings.Replace(warmingManifest, "WARMUP", warmup, 1))
		m, err := experiments.Parse("warming.yaml", src, "")
		if err != nil {
			t.Fatal(err)
		}
		o := opts(t, warming{slow: map[string]int64{"late": 24, "early": 4}})
		o.NoReport = true
		s, err := Run(context.Background(), m, o)
		if err != nil {
			t.Fatal(err)
		}
		r, err := record.Read(s.Dir)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := record.ReadVerdictsFile(s.Dir, record.VerdictsFile)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]record.Verdict{}
		for _, v := range vs {
			out[v.ID] = v
			t.Logf("warmup %s: %s %s (ratio %.3f, CI %.3f-%.3f) %s", warmup, v.ID, v.Status, v.Ratio, v.Low, v.High, v.Reason)
		}
		return out, r
	}

	t.Run("fixed warm-up of one burst", func(t *testing.T) {
		vs, r := run(t, "1ms")
		// The trap is real: over all iterations, late is far slower.
		raw := map[string][]float64{}
		for _, tr := range r.Trials {
			if tr.Valid && tr.Group == "main" {
				raw[tr.Variant] = append(raw[tr.Variant], tr.WallMs)
			}
		}
		if ratio := stats.Median(raw["late"][:20]) / stats.Median(raw["early"][:20]); ratio < 1.2 {
			t.Fatalf("late's first iterations are only %.2fx early's: the simulated warm-up did not outlast the fixed one", ratio)
		}
		if v := vs["early-is-faster"]; v.Status == stats.Supported {
			t.Errorf("early-is-faster is supported (ratio %v, %s): the warm-up of late was measured", v.Ratio, v.Reason)
		}
		st, ok, err := record.ReadSteady(r.Dir)
		if err != nil || !ok {
			t.Fatalf("steady.json: %v %v", ok, err)
		}
		for _, c := range st.Cells {
			if c.Variant != "late" {
				continue
			}
			for _, f := range c.Forks {
				if f.Excluded == 0 && !f.Dropped {
					t.Errorf("late fork %d: nothing left out although its first 5 iterations were slow: %+v", f.Fork, f)
				}
			}
		}
	})

	t.Run("until steady", func(t *testing.T) {
		vs, r := run(t, "{min: 1ms, max: 10s, until: steady}")
		if v := vs["early-is-faster"]; v.Status == stats.Supported {
			t.Errorf("early-is-faster is supported (ratio %v): the warm-up was not waited out", v.Ratio)
		}
		v := vs["same-speed"]
		if v.Ratio < 0.9 || v.Ratio > 1.1 {
			t.Errorf("same-speed: ratio %v, want the two variants equal within 10%%", v.Ratio)
		}
		if v.Status != stats.Supported {
			t.Errorf("same-speed is %s (%s), want supported: both variants measured in steady state", v.Status, v.Reason)
		}
		st, _, _ := record.ReadSteady(r.Dir)
		for _, c := range st.Cells {
			for _, f := range c.Forks {
				if f.WarmupStop != "steady" {
					t.Errorf("%s fork %d: warm-up stopped %q after %d rounds, want steady (%s)", c.Variant, f.Fork, f.WarmupStop, f.WarmupRounds, f.WarmupEvidence)
				}
				if c.Variant == "late" && f.WarmupRounds < 8 {
					t.Errorf("late fork %d: %d warm-up rounds, want at least the 6 slow ones and the rule's 8", f.Fork, f.WarmupRounds)
				}
			}
		}
	})
}

// TestMeasureColdRun: a variant with measure: cold gets no warm-up rounds
// and keeps its slow first iterations (its start is the measurement),
// while the other variant of the same run is warmed up until steady.
func TestMeasureColdRun(t *testing.T) {
	src := strings.Replace(warmingManifest, "WARMUP", "{min: 1ms, max: 5s, until: steady}", 1)
	src = strings.Replace(src, `late: {command: [warming, "{port}"], ready: /health}`, `late: {command: [warming, "{port}"], ready: /health, measure: cold}`, 1)
	src = strings.Replace(src, "forks: 4", "forks: 1", 1)
	m, err := experiments.Parse("warming.yaml", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	o := opts(t, warming{slow: map[string]int64{"late": 24, "early": 4}})
	o.NoReport = true
	s, err := Run(context.Background(), m, o)
	if err != nil {
		t.Fatal(err)
	}
	warm, err := record.ReadCSV[record.Trial](s.Dir, record.WarmupFile)
	if err != nil {
		t.Fatal(err)
	}
	rounds := map[string]int{}
	for _, w := range warm {
		rounds[w.Variant]++
	}
	if rounds["late"] != 0 || rounds["early"] < 8 {
		t.Errorf("warm-up rounds %v: want none for the cold variant and at least the rule's 8 for the other", rounds)
	}
	st, _, err := record.ReadSteady(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Cells {
		if c.Variant == "late" && (!c.Cold || c.Excluded != 0 || len(c.Forks) != 1 || c.Forks[0].Basis != "cold") {
			t.Errorf("cold cell %+v: want marked cold with nothing excluded", c)
		}
	}
	summary, err := record.ReadCSV[record.Summary](s.Dir, record.SummaryFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range summary {
		// 5 of the cold variant's 10 bursts took 150 ms and 5 took 40: its
		// median keeps the start, far above the warm variant's 40-odd ms.
		if x.Variant == "late" && x.Metric == "wall_ms" && x.Median < 80 {
			t.Errorf("cold variant's median wall_ms %.1f: its slow start was dropped", x.Median)
		}
	}
}
