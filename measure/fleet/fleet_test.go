package fleet

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadlab/threadlab/measure/load"
)

// running fails the test if an agent has returned: it must live on.
func running(t *testing.T, why string, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		t.Errorf("%s: the agent returned (%v), want it alive for the next trial", why, err)
	default:
	}
}

// A Fleet's agents live for many Runs (issue 25): each Run's load reaches
// the target, the agents do not exit between Runs, and the hooks bracket
// the load: Release at the agreed instant (the merged start, give or take
// wake-up jitter), Done after the last answer, each once per Run. Close
// then stops every agent.
func TestFleetRunsMany(t *testing.T) {
	srv := newSleepy(t, 2*time.Millisecond)
	a, d1 := pipeAgent(t, "a", 0)
	b, d2 := pipeAgent(t, "b", 40*time.Millisecond) // a skewed clock must not move the instant
	f, offs, err := Open(context.Background(), []Agent{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(offs) != 2 || offs[0].Agent != "a" || offs[1].Agent != "b" || offs[0].RTTMs <= 0 {
		t.Errorf("Open's offsets %+v: want both agents measured", offs)
	}
	if got := f.Names(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("Names() = %v", got)
	}
	plan := load.Plan{Target: srv.URL, Groups: []load.Group{{Name: "g", Model: load.Closed, Users: 2, Duration: 300 * time.Millisecond, Requests: reqs()}}}
	for run := 1; run <= 3; run++ {
		var mu sync.Mutex
		var released, done []time.Time
		h := Hooks{
			Release: func() { mu.Lock(); released = append(released, time.Now()); mu.Unlock() },
			Done:    func() { mu.Lock(); done = append(done, time.Now()); mu.Unlock() },
		}
		before := srv.hits.Load()
		t0 := time.Now()
		res, roffs, err := f.Run(context.Background(), plan, h)
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		back := time.Now()
		if served := srv.hits.Load() - before; res.Groups[0].Requests != served || served == 0 {
			t.Errorf("run %d: merged %d requests, server served %d", run, res.Groups[0].Requests, served)
		}
		if len(roffs) != 2 || roffs[1].OffsetMs < 30 || roffs[1].OffsetMs > 50 {
			t.Errorf("run %d: offsets %+v, want b measured afresh about 40 ms ahead", run, roffs)
		}
		mu.Lock()
		if len(released) != 1 || len(done) != 1 {
			t.Fatalf("run %d: Release called %d times, Done %d times; want once each", run, len(released), len(done))
		}
		// The window opens at the release, not when Run is called: the
		// pings and the lead (250 ms and more) come before it.
		if d := released[0].Sub(res.Start).Abs(); d > 50*time.Millisecond {
			t.Errorf("run %d: Release at %v, the load started at %v (%v apart): want the agreed instant", run, released[0], res.Start, d)
		}
		if lead := released[0].Sub(t0); lead < 250*time.Millisecond {
			t.Errorf("run %d: Release %v after Run began, want after the 250 ms lead", run, lead)
		}
		if end := res.Start.Add(res.Wall); done[0].Before(end) || done[0].After(back) {
			t.Errorf("run %d: Done at %v; want after the load's end %v and before Run returned %v", run, done[0], end, back)
		}
		mu.Unlock()
		running(t, "after run", d1)
		running(t, "after run", d2)
	}
	if f.Err() != nil {
		t.Errorf("Err() = %v after good runs, want nil", f.Err())
	}
	f.Close()
	stopped(t, "a after Close", d1, 3*time.Second)
	stopped(t, "b after Close", d2, 3*time.Second)
	if _, _, err := f.Run(context.Background(), plan, Hooks{}); err == nil || !strings.Contains(err.Error(), "cannot run another load: the load agents were closed") {
		t.Errorf("Run after Close: %v, want a refusal", err)
	}
	f.Close() // twice: nothing
}

// A failed Run stops every agent (none is left running its share) and the
// Fleet refuses further Runs, naming the failure; Done follows Release
// even then, so a sampling window opened is always closed. A plan that
// cannot be split fails before anything is sent and leaves the agents.
func TestFleetRunFailure(t *testing.T) {
	srv := newSleepy(t, time.Millisecond)
	healthy, done := pipeAgent(t, "real", 0)
	bad := scripted(t, "fails", pong(`{"type":"error","error":"load: out of ports"}`+"\n"))
	f, _, err := Open(context.Background(), []Agent{healthy, bad})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = f.Run(context.Background(), load.Plan{Target: srv.URL, Groups: []load.Group{{Name: "g", Model: load.Burst, Burst: 1, Requests: reqs()}}}, Hooks{})
	if err == nil || !strings.Contains(err.Error(), "burst 1 cannot be split among 2 generators") || f.Err() != nil {
		t.Errorf("unsplittable plan: %v (Err %v), want the split error and the agents kept", err, f.Err())
	}
	running(t, "after a refused plan", done)
	var releases, dones int
	plan := load.Plan{Target: srv.URL, Groups: []load.Group{{Name: "g", Model: load.Closed, Users: 2, Duration: 30 * time.Second, Requests: reqs()}}}
	t0 := time.Now()
	_, _, err = f.Run(context.Background(), plan, Hooks{Release: func() { releases++ }, Done: func() { dones++ }})
	if err == nil || !strings.Contains(err.Error(), "load agent fails: load: out of ports") {
		t.Fatalf("Run: %v, want the agent's error", err)
	}
	if took := time.Since(t0); took > 5*time.Second {
		t.Errorf("a failed Run took %v", took)
	}
	stopped(t, "the healthy agent after the failure", done, 3*time.Second)
	if releases != dones {
		t.Errorf("Release called %d times, Done %d: a window opened must close", releases, dones)
	}
	if e := f.Err(); e == nil || !strings.Contains(e.Error(), "out of ports") {
		t.Errorf("Err() = %v, want the failure", e)
	}
	if _, _, err := f.Run(context.Background(), plan, Hooks{}); err == nil || !strings.Contains(err.Error(), "out of ports") {
		t.Errorf("Run after a failure: %v, want a refusal naming it", err)
	}
}

// Cancelling a Run (Ctrl-C) stops every agent at once; so does the end of
// Open's context while it waits for the handshake.
func TestFleetCancel(t *testing.T) {
	srv := newSleepy(t, 5*time.Millisecond)
	a, d1 := pipeAgent(t, "a", 0)
	b, d2 := pipeAgent(t, "b", 0)
	f, _, err := Open(context.Background(), []Agent{a, b})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitFor(t, "load to reach the server", func() bool { return srv.hits.Load() > 20 })
		cancel()
	}()
	t0 := time.Now()
	_, _, err = f.Run(ctx, load.Plan{Target: srv.URL, Groups: []load.Group{{Name: "g", Model: load.Closed, Users: 4, Duration: time.Minute, Requests: reqs()}}}, Hooks{})
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("cancelled Run: %v", err)
	}
	if took := time.Since(t0); took > 10*time.Second {
		t.Errorf("a cancelled Run returned after %v", took)
	}
	stopped(t, "a", d1, 3*time.Second)
	stopped(t, "b", d2, 3*time.Second)
	if f.Err() == nil {
		t.Error("Err() nil after a cancelled Run")
	}

	mute := scripted(t, "mute", func(string) string { return "" })
	c, d3 := pipeAgent(t, "c", 0)
	octx, ocancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer ocancel()
	if _, _, err := Open(octx, []Agent{c, mute}); err == nil || !strings.Contains(err.Error(), "waiting for mute") {
		t.Errorf("Open with a mute agent and a 300 ms context: %v", err)
	}
	stopped(t, "c after a failed Open", d3, 3*time.Second)
}

func TestFirstRelease(t *testing.T) {
	burst := func(start, release time.Duration) load.Group {
		return load.Group{Model: load.Burst, Start: start, ReleaseAt: release}
	}
	closed := func(start time.Duration) load.Group { return load.Group{Model: load.Closed, Start: start} }
	for _, tc := range []struct {
		why   string
		plans []load.Plan
		want  time.Duration
	}{
		{"a split burst leaves at its release instant, not at the start", []load.Plan{{Groups: []load.Group{burst(0, ReleaseLead)}}, {Groups: []load.Group{burst(0, ReleaseLead)}}}, ReleaseLead},
		{"a burst on one agent (no ReleaseAt) leaves once connected", []load.Plan{{Groups: []load.Group{burst(0, 0)}}}, 0},
		{"a burst starting later, unsplit, leaves at its start", []load.Plan{{Groups: []load.Group{burst(time.Second, 0)}}}, time.Second},
		{"a closed group from the start opens the window at once", []load.Plan{{Groups: []load.Group{burst(0, ReleaseLead), closed(0)}}}, 0},
		{"the earliest share of a staggered open group", []load.Plan{{Groups: []load.Group{{Model: load.Open, Start: 300 * time.Millisecond}}}, {Groups: []load.Group{{Model: load.Open, Start: 200 * time.Millisecond}}}}, 200 * time.Millisecond},
		{"no groups: the start", nil, 0},
	} {
		if got := firstRelease(tc.plans); got != tc.want {
			t.Errorf("%s: firstRelease = %v, want %v", tc.why, got, tc.want)
		}
	}
}

// A burst split between two agents: the window opens at the shares'
// release (ReleaseLead after the agreed start, once both have connected),
// not at the start, so the target's idle wait is not in it.
func TestFleetReleaseHookAtBurstRelease(t *testing.T) {
	srv := newSleepy(t, 20*time.Millisecond)
	a, _ := pipeAgent(t, "a", 0)
	b, _ := pipeAgent(t, "b", 0)
	f, _, err := Open(context.Background(), []Agent{a, b})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mu sync.Mutex
	var released time.Time
	res, _, err := f.Run(context.Background(), load.Plan{Target: srv.URL, Groups: []load.Group{{Name: "b", Model: load.Burst, Burst: 20, Requests: reqs()}}},
		Hooks{Release: func() { mu.Lock(); released = time.Now(); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	leave := res.Start.Add(res.Groups[0].Release)
	if d := released.Sub(leave).Abs(); d > 50*time.Millisecond {
		t.Errorf("Release hook at %v, the burst left at %v (%v apart): want the release instant", released, leave, d)
	}
	if res.Groups[0].Release < ReleaseLead-50*time.Millisecond {
		t.Errorf("merged release %v after the start, want about ReleaseLead %v (is the burst still split?)", res.Groups[0].Release, ReleaseLead)
	}
}
