package pipeline

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/store/record"
)

// phased launches a real HTTP server per fork whose /io answers in 1 s
// or 100 ms by how many requests that process has served: variant "warms"
// is slow for its first `phase` requests (a JIT warming up), variant
// "slows" is fast for its first `phase` and slow afterwards (a leak).
type phased struct{ phase int64 }

func (p phased) Launch(ctx context.Context, s trial.Spec) (trial.Target, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(s.Port))
	if err != nil {
		return nil, err
	}
	var served atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/io", func(w http.ResponseWriter, r *http.Request) {
		early := served.Add(1) <= p.phase
		slow := early == (s.Name == "warms")
		// The two levels are far apart (10x), and the fast one long enough
		// (100 ms) that a loaded CI host's scheduling jitter of a few ms
		// stays under the classifier's 5% minimum shift. With a 4 ms fast
		// level, jitter split it into segments: "slowdown" or "no steady
		// state" for the warming server (fresh-clone CI, 2026-12-01).
		d := 100 * time.Millisecond
		if slow {
			d = time.Second
		}
		time.Sleep(d)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	owner := &inproc{}
	owner.running.Add(1)
	return &inprocTarget{srv: srv, port: s.Port, argv: s.Argv, owner: owner}, nil
}

const phasedManifest = `name: phased
title: steady state end to end
question: are a warming and a slowing server classified as such?
variants:
  warms: {command: [phased, "{port}"], ready: /health}
  slows: {command: [phased, "{port}"], ready: /health}
load: {model: burst, burst: 4, requests: [{path: "/io?ms=1"}], warmup: 1ms}
forks: 1
iterations: 12
retries: 0
seed: 5
order: sequential
cooldown: {max_busy_pct: 100, max_wait: 1ms, pause: 1ms, iteration: 1ms}
# Other engineers share this machine: the in-trial noise gate is opened.
noise: {max_outside_pct: 100000, max_steal_pct: 100000}
`

// TestRunClassifiesPhases runs the pipeline against servers that warm up
// or slow down after a number of requests and checks steady.json: the
// classes, and that the warming server's slow iterations left its median.
func TestRunClassifiesPhases(t *testing.T) {
	m, err := experiments.Parse("phased.yaml", []byte(phasedManifest), "")
	if err != nil {
		t.Fatal(err)
	}
	o := opts(t, phased{phase: 24})
	o.NoReport = true
	s, err := Run(context.Background(), m, o)
	if err != nil {
		t.Fatal(err)
	}
	st, ok, err := record.ReadSteady(s.Dir)
	if err != nil || !ok {
		t.Fatalf("steady.json: ok %v, err %v", ok, err)
	}
	want := map[string]string{"warms": "warmup", "slows": "slowdown"}
	for _, c := range st.Cells {
		if len(c.Forks) != 1 {
			t.Fatalf("%s: %d forks classified, want 1", c.Variant, len(c.Forks))
		}
		f := c.Forks[0]
		if f.Class != want[c.Variant] {
			t.Errorf("%s: class %q (from %d of %d iterations), want %s", c.Variant, f.Class, f.SteadyFrom, f.Iterations, want[c.Variant])
		}
		if c.Variant == "warms" && f.Excluded == 0 {
			t.Errorf("warms: no iteration excluded although its first ones were slow: %+v", f)
		}
	}
	r, err := record.Read(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range r.Summary {
		// 4 requests of 100 ms in parallel: a steady burst takes well under
		// the 1 s of a slow one, so a median near 1 s would mean the
		// warm-up iterations were kept.
		if x.Variant == "warms" && x.Metric == "wall_ms" && x.Median >= 500 {
			t.Errorf("warms: median wall_ms %.1f, want the steady (fast) level below 500 ms", x.Median)
		}
	}
}
