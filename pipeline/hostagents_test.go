package pipeline

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadlab/threadlab/env/remote"
	"github.com/threadlab/threadlab/measure/fleet"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/store/record"
)

// inprocAgents stands in for the load hosts: spawn starts an agent
// (fleet.Serve) in this process behind pipes, as ssh would connect one,
// and counts the starts and the stops.
type inprocAgents struct {
	mu              sync.Mutex
	started, exited int
}

func (a *inprocAgents) spawn(i int) (spawned, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := fleet.Serve(context.Background(), inR, outW)
		outW.Close()
		inR.Close()
		done <- err
	}()
	a.mu.Lock()
	a.started++
	a.mu.Unlock()
	return spawned{
		agent: fleet.Agent{Name: fmt.Sprintf("load%d", i), Stdin: inW, Stdout: outR},
		close: func() error {
			inW.Close()
			outR.Close()
			select {
			case err := <-done:
				a.mu.Lock()
				a.exited++
				a.mu.Unlock()
				return err
			case <-time.After(5 * time.Second):
				return fmt.Errorf("the agent did not exit 5 s after its stdin closed")
			}
		},
	}, nil
}

func (a *inprocAgents) counts() (started, exited int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.started, a.exited
}

// fakeWindow records when a trial's host window opens and closes.
type fakeWindow struct {
	mu           sync.Mutex
	begins, ends []time.Time
	onBegin      func() // called at begin, when set
}

func (w *fakeWindow) begin() {
	w.mu.Lock()
	w.begins = append(w.begins, time.Now())
	w.mu.Unlock()
	if w.onBegin != nil {
		w.onBegin()
	}
}
func (w *fakeWindow) end() { w.mu.Lock(); w.ends = append(w.ends, time.Now()); w.mu.Unlock() }

// A multi-host run starts its load generators once and keeps them for
// every load (issue 25): none starts or exits inside a trial. Each
// trial's host window opens at the agents' release (the merged result's
// start, not before the handshake) and closes at the last answer. A failed
// load stops them all and the next load starts new ones; the run's end
// (hostRun.close) stops the last ones.
func TestHostAgentsLiveForTheRun(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		time.Sleep(2 * time.Millisecond)
	}))
	defer srv.Close()
	ag := &inprocAgents{}
	hr := &hostRun{rec: &record.Hosts{}, load: make([]*remote.Host, 2), spawn: ag.spawn, warned: map[string]bool{}}
	s := &State{M: parse(t, 1)}
	plan := load.Plan{Target: srv.URL, Groups: []load.Group{{Name: "g", Model: load.Closed, Users: 2, Duration: 300 * time.Millisecond, Requests: []load.Request{{Path: "/"}}}}}

	for trial := 1; trial <= 3; trial++ {
		w := &fakeWindow{}
		t0 := time.Now()
		res, err := hr.drive(context.Background(), s, plan, w)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if res.Groups[0].Requests == 0 {
			t.Errorf("trial %d: no requests", trial)
		}
		if started, exited := ag.counts(); started != 2 || exited != 0 {
			t.Errorf("trial %d: %d agents started, %d exited; want 2 started for the run and none exited", trial, started, exited)
		}
		if len(w.begins) != 1 || len(w.ends) != 1 {
			t.Fatalf("trial %d: window opened %d times, closed %d; want once each", trial, len(w.begins), len(w.ends))
		}
		if d := w.begins[0].Sub(res.Start).Abs(); d > 50*time.Millisecond {
			t.Errorf("trial %d: window opened %v from the load's start", trial, d)
		}
		if w.begins[0].Sub(t0) < 250*time.Millisecond {
			t.Errorf("trial %d: window opened %v after the load was asked for: before the agents' release", trial, w.begins[0].Sub(t0))
		}
		if w.ends[0].Before(res.Start.Add(res.Wall)) {
			t.Errorf("trial %d: window closed before the load's end", trial)
		}
	}
	if n := len(hr.rec.Offsets); n != 6 {
		t.Errorf("%d clock offsets recorded, want 2 agents x 3 loads", n)
	}

	// A plan the agents cannot share is refused before anything is sent:
	// the agents stay.
	one := load.Plan{Target: srv.URL, Groups: []load.Group{{Name: "b", Model: load.Burst, Burst: 1, Requests: []load.Request{{Path: "/"}}}}}
	if _, err := hr.drive(context.Background(), s, one, nil); err == nil || !strings.Contains(err.Error(), "cannot be split among 2 generators") {
		t.Errorf("a burst of 1 on 2 agents: %v, want it refused", err)
	}
	if started, exited := ag.counts(); started != 2 || exited != 0 {
		t.Errorf("after a refused plan: %d agents started, %d exited; want the 2 kept", started, exited)
	}

	// A cancelled load (Ctrl-C) stops the agents; the next load starts new ones.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for hits.Load() < 10000 && ctx.Err() == nil {
			if hits.Load() > 0 {
				time.Sleep(100 * time.Millisecond)
				cancel()
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	long := plan
	long.Groups = []load.Group{plan.Groups[0]}
	long.Groups[0].Duration = time.Minute
	t0 := time.Now()
	if _, err := hr.drive(ctx, s, long, nil); err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Errorf("cancelled load: %v", err)
	}
	if took := time.Since(t0); took > 10*time.Second {
		t.Errorf("a cancelled load returned after %v", took)
	}
	if started, exited := ag.counts(); exited != started {
		t.Errorf("after a cancelled load: %d agents started, %d exited; want all stopped", started, exited)
	}
	if _, err := hr.drive(context.Background(), s, plan, nil); err != nil {
		t.Fatalf("the load after a cancelled one: %v", err)
	}
	if started, exited := ag.counts(); started != 4 || exited != 2 {
		t.Errorf("after restarting: %d started, %d exited; want 4 and 2", started, exited)
	}
	hr.close()
	if started, exited := ag.counts(); exited != started {
		t.Errorf("after the run's end: %d agents started, %d exited", started, exited)
	}
}

// A local run's window opens at the load's release and closes at its
// end: for a burst, once its connections are up and before any request
// arrives (the target's CPU-seconds then leave out accepting them, as a
// multi-host run's window does); a trial without host samplers (a nil
// *hostSampling) passes through.
func TestLocalWindow(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	s := &State{M: parse(t, 1)}
	plan := load.Plan{Target: srv.URL, Groups: []load.Group{{Name: "g", Model: load.Burst, Burst: 2, Requests: []load.Request{{Path: "/"}}}}}
	w := &fakeWindow{}
	atBegin := int64(-1)
	w.onBegin = func() { atBegin = hits.Load() }
	res, err := s.runLoadIn(context.Background(), plan, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.begins) != 1 || len(w.ends) != 1 || w.begins[0].Before(res.Start) || w.ends[0].Before(res.Start.Add(res.Wall)) {
		t.Errorf("window %v..%v, load %v for %v: want the window from the release to the end of the load", w.begins, w.ends, res.Start, res.Wall)
	}
	if release := res.Start.Add(res.Groups[0].Release); len(w.begins) == 1 && (atBegin != 0 || w.begins[0].After(release)) {
		t.Errorf("the window opened at %v with %d requests served, the burst left at %v; want it opened at the release (after the connects), before any request",
			w.begins[0].Sub(res.Start), atBegin, release.Sub(res.Start))
	}
	var none *hostSampling
	if _, err := s.runLoadIn(context.Background(), plan, none); err != nil {
		t.Fatal(err)
	}
}

// A target log that comes back from a remote host is redacted when the
// target stops, as a local one is (issue 23): a password property on the
// command line (the log's first line) and one the program printed.
func TestRemoteTargetLogRedacted(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "target.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	logf.WriteString("# threadlab: on host tl-target (tl-target): java -Dspring.datasource.password=hunter2 -jar app.jar\n")
	p := &fakeProc{done: make(chan struct{}), onStop: func() {
		// the last output arrives as the session ends
		logf.WriteString("spring.datasource.url=jdbc:postgresql://app:s3cret@10.0.0.3/db\nStarted in 1.2 s\n")
	}}
	rt := &remoteTarget{spec: trial.Spec{LogPath: logPath}, host: "tl-target", proc: p, log: logf}
	rt.Stop()
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, secret := range []string{"hunter2", "s3cret"} {
		if strings.Contains(got, secret) {
			t.Errorf("the fetched log still holds %q:\n%s", secret, got)
		}
	}
	for _, want := range []string{"password=[redacted] -jar app.jar", "://app:[redacted]@10.0.0.3/db", "Started in 1.2 s"} {
		if !strings.Contains(got, want) {
			t.Errorf("the fetched log lacks %q:\n%s", want, got)
		}
	}
	rt.Stop() // twice: nothing more
}

type fakeProc struct {
	done   chan struct{}
	onStop func()
	once   sync.Once
}

func (p *fakeProc) Stop() error {
	p.once.Do(func() { p.onStop(); close(p.done) })
	return nil
}
func (p *fakeProc) Done() <-chan struct{} { return p.done }
func (p *fakeProc) Err() error            { return nil }

// TestRemoteTargetActuator: a Spring target on the target host answers its
// actuator (readiness, metrics) on its own management server when it has
// one, as on one machine (trial.ActuatorPort), and on the app's port
// otherwise.
func TestRemoteTargetActuator(t *testing.T) {
	for _, c := range []struct {
		why              string
		spec             trial.Spec
		actuator, metric string
	}{
		{"own management server: scrapes leave the app's pool alone",
			trial.Spec{Port: 8080, ActuatorPort: 9090, Metrics: "/actuator/prometheus"},
			"http://10.77.0.2:9090", "http://10.77.0.2:9090/actuator/prometheus"},
		{"no management port (a manifest's management.server.port: -1): the app's port",
			trial.Spec{Port: 8080, Metrics: "/actuator/prometheus"},
			"http://10.77.0.2:8080", "http://10.77.0.2:8080/actuator/prometheus"},
		{"a command target without metrics",
			trial.Spec{Port: 8080},
			"http://10.77.0.2:8080", ""},
	} {
		rt := &remoteTarget{spec: c.spec, addr: "10.77.0.2"}
		if got := rt.ActuatorURL(); got != c.actuator {
			t.Errorf("%s: ActuatorURL %q, want %q", c.why, got, c.actuator)
		}
		if got := rt.MetricsURL(); got != c.metric {
			t.Errorf("%s: MetricsURL %q, want %q", c.why, got, c.metric)
		}
	}
}
