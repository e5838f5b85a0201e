package load

import (
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestOpenRate(t *testing.T) {
	srv := threadServer(t, 1)
	g := run(t, srv.URL, Group{Model: Open, Rate: 500, Duration: time.Second, Requests: get("/")}).Groups[0]
	// 500/s for 1 s: 500 sends, the first at 0 and the last at 998 ms.
	if g.Requests < 495 || g.Requests > 501 || g.Errors != 0 {
		t.Errorf("requests=%d errors=%d, want 500 sent at 500/s for 1s", g.Requests, g.Errors)
	}
	if math.Abs(g.AskedRate-500) > 0.5 || math.Abs(g.AchievedRate-500) > 5 {
		t.Errorf("asked %.1f achieved %.1f, want both 500", g.AskedRate, g.AchievedRate)
	}
	if g.Missed != 0 {
		t.Errorf("missed = %d against a fast server", g.Missed)
	}
	t.Logf("late sends: %.2f%% (schedule lag; noisy on a shared machine)", g.LatePct)
}

func TestOpenMissed(t *testing.T) {
	// A server that holds every request 500 ms, and at most 10 in flight:
	// of the 60 sends due in 300 ms at 200/s, 10 go out and 50 are missed.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(500 * time.Millisecond) }))
	defer srv.Close()
	g := run(t, srv.URL, Group{Model: Open, Rate: 200, MaxInFlight: 10, Duration: 300 * time.Millisecond, Requests: get("/")}).Groups[0]
	if g.Requests != 10 || g.Missed != 50 || g.Errors != 0 {
		t.Errorf("requests=%d missed=%d errors=%d, want 10 sent and 50 missed", g.Requests, g.Missed, g.Errors)
	}
	if g.QuantileMs(50) < 500 {
		t.Errorf("p50 %.1fms, want the server's 500ms", g.QuantileMs(50))
	}
}

// freezer answers in about 1 ms but stops answering for freeze out of
// every period, like a server in a stop-the-world GC pause.
func freezer(t *testing.T, period, freeze time.Duration) *httptest.Server {
	start := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		phase := time.Since(start) % period
		if phase >= period-freeze {
			time.Sleep(period - phase) // until the freeze ends
		}
		time.Sleep(time.Millisecond)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestCoordinatedOmission shows why the open model exists. The server
// freezes 300 ms every 1.5 s (a scaled-down "1 s every 5 s"; the freeze is
// the same 20% of the time).
//
// Open model at 200/s: 20% of the sends are due during a freeze and wait
// for its end, so their latencies spread evenly over 1..301 ms. The top 1%
// of all requests is the top 5% of those: p99 ~ 300 - 0.05*300 = 285 ms;
// p90 is the frozen ones' median, ~150 ms.
//
// Closed model, 10 users: during a freeze each user is stuck on one
// request and sends nothing else, so the freeze costs 10 slow samples
// against ~10 users x 1.2 s / ~1.1 ms = ~11,000 fast ones per cycle: p99
// stays near 1 ms. That is the closed model's known bias (coordinated
// omission): the stall is real for anyone arriving during it, but the
// generator stopped arriving. It is asserted here so nobody mistakes a
// closed p99 for what users would see.
func TestCoordinatedOmission(t *testing.T) {
	if testing.Short() {
		t.Skip("6s of freezes")
	}
	const period, freeze = 1500 * time.Millisecond, 300 * time.Millisecond
	srv := freezer(t, period, freeze)
	open := run(t, srv.URL, Group{Model: Open, Rate: 200, Duration: 2 * period, Requests: get("/")}).Groups[0]
	closed := run(t, srv.URL, Group{Model: Closed, Users: 10, Duration: 2 * period, Requests: get("/")}).Groups[0]
	t.Logf("open:   n=%d p50=%.2fms p90=%.1fms p99=%.1fms max=%.1fms late=%.2f%%",
		open.Requests, open.QuantileMs(50), open.QuantileMs(90), open.QuantileMs(99), open.MaxMs(), open.LatePct)
	t.Logf("closed: n=%d p50=%.2fms p90=%.1fms p99=%.1fms max=%.1fms",
		closed.Requests, closed.QuantileMs(50), closed.QuantileMs(90), closed.QuantileMs(99), closed.MaxMs())
	if p := open.QuantileMs(99); p < 200 || p > 320 {
		t.Errorf("open p99 = %.1fms, want ~285ms: the freezes must show", p)
	}
	if p := open.QuantileMs(90); p < 80 || p > 220 {
		t.Errorf("open p90 = %.1fms, want ~150ms", p)
	}
	if open.Errors != 0 || closed.Errors != 0 {
		t.Errorf("errors: open %v closed %v", open.ErrorsByClass, closed.ErrorsByClass)
	}
	// The bias: same server, same freezes, p99 an order of magnitude lower.
	if closed.QuantileMs(99) > open.QuantileMs(99)/10 {
		t.Errorf("closed p99 %.1fms vs open %.1fms: expected the closed model to hide the freezes", closed.QuantileMs(99), open.QuantileMs(99))
	}
	if closed.MaxMs() < 200 {
		t.Errorf("closed max %.1fms: the freeze should still show in the max", closed.MaxMs())
	}
}

// TestAccuracy: the server sleeps exactly 50 ms (a nanosleep on its own
// thread; a Go timer could oversleep by up to a millisecond when the
// process is idle), so p50 must be 50 ms within 1 ms at moderate load.
func TestAccuracy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts := unix.NsecToTimespec(int64(50 * time.Millisecond))
		for unix.Nanosleep(&ts, &ts) == unix.EINTR {
		}
	}))
	defer srv.Close()
	res := run(t, srv.URL,
		Group{Name: "closed", Model: Closed, Users: 5, Duration: time.Second, Requests: get("/")},
		Group{Name: "open", Model: Open, Rate: 100, Duration: time.Second, Requests: get("/")})
	for _, g := range res.Groups {
		p50 := g.QuantileMs(50)
		t.Logf("%s: n=%d p50=%.3fms p99=%.3fms", g.Name, g.Requests, p50, g.QuantileMs(99))
		if p50 < 50 || p50 > 51 {
			t.Errorf("%s: p50 = %.3fms, want 50..51ms", g.Name, p50)
		}
		if g.Requests < 80 {
			t.Errorf("%s: only %d requests", g.Name, g.Requests)
		}
	}
}

// arrivals records when requests reach the server, relative to its start.
type arrivals struct {
	mu    sync.Mutex
	start time.Time
	at    []time.Duration
}

func (a *arrivals) count(from, to time.Duration) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, d := range a.at {
		if d >= from && d < to {
			n++
		}
	}
	return n
}

func arrivalServer(t *testing.T, delay time.Duration) (*httptest.Server, *arrivals) {
	a := &arrivals{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		if a.start.IsZero() {
			a.start = time.Now()
		}
		a.at = append(a.at, time.Since(a.start))
		a.mu.Unlock()
		time.Sleep(delay)
	}))
	t.Cleanup(srv.Close)
	return srv, a
}

func TestRampUsers(t *testing.T) {
	// 1 user then 5 users, 300 ms each, 10 ms per request: ~30 then ~150
	// arrivals. Compared as a ratio, which does not depend on machine speed.
	srv, a := arrivalServer(t, 10*time.Millisecond)
	g := run(t, srv.URL, Group{Model: Ramp, Requests: get("/"), Stages: []Stage{
		{Duration: 300 * time.Millisecond, Users: 1}, {Duration: 300 * time.Millisecond, Users: 5}}}).Groups[0]
	first, second := a.count(0, 280*time.Millisecond), a.count(320*time.Millisecond, 600*time.Millisecond)
	ratio := float64(second) / float64(max(first, 1))
	if ratio < 3.5 || ratio > 6 || g.Errors != 0 {
		t.Errorf("arrivals %d then %d (x%.1f), errors %d: want about 5x more with 5 users", first, second, ratio, g.Errors)
	}
}

func TestRampRateSmooth(t *testing.T) {
	// Rate moving smoothly from 0 to 400/s over 1 s: the area is 200
	// requests, 50 of them in the first half (a quarter of the triangle)
	// and 150 in the second.
	srv, a := arrivalServer(t, 0)
	a.mu.Lock()
	a.start = time.Now() // count from the run start, not from the first arrival
	a.mu.Unlock()
	g := run(t, srv.URL, Group{Model: Ramp, Smooth: true, Requests: get("/"), Stages: []Stage{
		{Duration: time.Second, Rate: 400}}}).Groups[0]
	if g.Requests < 195 || g.Requests > 201 || math.Abs(g.AskedRate-200) > 1 {
		t.Errorf("requests=%d asked=%.1f, want 200 and a mean asked rate of 200/s", g.Requests, g.AskedRate)
	}
	if h := a.count(0, 500*time.Millisecond); h < 40 || h > 60 {
		t.Errorf("%d arrivals in the first half, want ~50", h)
	}
}

func TestProfile(t *testing.T) {
	const ms = int64(time.Millisecond)
	// 1000/s for 10 ms, nothing for 10 ms, then 2000/s.
	steps := rampProfile([]Stage{{Duration: 10 * time.Millisecond, Rate: 1000}, {Duration: 10 * time.Millisecond},
		{Duration: 80 * time.Millisecond, Rate: 2000}}, false)
	// 0 -> 1000/s over 1 s: rate r(t) = 1000 t (t in s).
	slope := rampProfile([]Stage{{Duration: time.Second, Rate: 1000}}, true)
	// A triangle: 0 -> 1000/s over 1 s (Smooth starts the first stage at 0), then back to 0.
	down := rampProfile([]Stage{{Duration: time.Second, Rate: 1000}, {Duration: time.Second, Rate: 0}}, true)
	for _, tc := range []struct {
		why  string
		p    profile
		t    int64
		want int64
	}{
		{"the first send goes out at once", steps, -1, 0},
		{"1000/s: one every 1 ms", steps, 3 * ms, 4 * ms},
		{"0.5 ms of area is left at 9.5 ms; the rest (0.5 request) comes at 2000/s after the gap: 20 + 0.25 ms",
			steps, 9*ms + ms/2, 20*ms + ms/4},
		{"area 1000 t^2/2 reaches 1 at t = sqrt(2/1000) s = 44.721 ms", slope, -1, 44721360},
		{"from 100 ms: 500 (t2^2 - 0.1^2) = 1 gives t2 = sqrt(0.012) = 109.545 ms", slope, 100 * ms, 109544512},
		{"falling from 1000/s at 1 s: 1000 h - 500 h^2 = 1 gives h = 1.0005 ms", down, 1000 * ms, 1000*ms + 1000500},
		{"no send is left in the last sliver of a ramp to 0", down, 1999 * ms, 2000 * ms},
	} {
		if got := tc.p.next(tc.t); got-tc.want < -1000 || got-tc.want > 1000 {
			t.Errorf("%s: next(%d) = %.6fms, want %.6fms", tc.why, tc.t, float64(got)/1e6, float64(tc.want)/1e6)
		}
	}
	// Mean rate: the triangle's area is 2 s x 1000/s / 2 = 1000 requests over 2 s: 500/s.
	if m := down.mean(); m != 500 {
		t.Errorf("mean of the 0 -> 1000/s -> 0 triangle over 2 s = %v, want 500", m)
	}
}

func TestTimeoutWatchdog(t *testing.T) {
	// Keep-alive connections stuck mid-response fail as timeouts near
	// Timeout, and the user goes on with a fresh connection.
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%5 == 0 {
			time.Sleep(300 * time.Millisecond)
		}
	}))
	defer srv.Close()
	g := run(t, srv.URL, Group{Model: Closed, Users: 2, Duration: 400 * time.Millisecond, Timeout: 50 * time.Millisecond, Requests: get("/")}).Groups[0]
	if g.ErrorsByClass["timeout"] == 0 || g.Errors != g.ErrorsByClass["timeout"] || g.Requests-g.Errors < 8 {
		t.Errorf("requests=%d errors=%v, want some timeouts and work going on between them", g.Requests, g.ErrorsByClass)
	}
	// The stuck answers come after 300 ms: a maximum well under that shows
	// the watchdog cut them. 250, not ~60: a loaded host (load 10 on 2
	// cores) delays the watchdog's own wake-up by tens of milliseconds.
	if g.MaxMs() > 250 {
		t.Errorf("max latency %.1fms with a 50ms timeout and 300ms stalls: the watchdog did not cut them", g.MaxMs())
	}
}

func TestRampIdleUsersAreFree(t *testing.T) {
	// A users ramp starts a worker for its highest level. Here 1,980 of
	// 2,000 users are idle for 600 ms: they must wait for free, not poll
	// (polling every 5 ms would be ~400,000 wake-ups a second). The run
	// costs about as much CPU as 20 users alone.
	srv, _ := arrivalServer(t, 2*time.Millisecond)
	plain := run(t, srv.URL, Group{Model: Closed, Users: 20, Duration: 600 * time.Millisecond, Requests: get("/")})
	ramp := run(t, srv.URL, Group{Model: Ramp, Requests: get("/"), Stages: []Stage{
		{Duration: 600 * time.Millisecond, Users: 20}, {Duration: time.Millisecond, Users: 2000}}})
	g := ramp.Groups[0]
	if g.Errors != 0 || g.Requests < plain.Groups[0].Requests/2 {
		t.Errorf("ramp: requests=%d errors=%v; 20 users alone made %d", g.Requests, g.ErrorsByClass, plain.Groups[0].Requests)
	}
	t.Logf("CPU: 20 users %.3fs, 20 active + 1980 idle %.3fs", plain.Self.CPUSeconds, ramp.Self.CPUSeconds)
	if ramp.Self.CPUSeconds > 2*plain.Self.CPUSeconds+0.15 {
		t.Errorf("idle users cost %.3fs of CPU over 20 users' %.3fs", ramp.Self.CPUSeconds, plain.Self.CPUSeconds)
	}
}

func TestGate(t *testing.T) {
	gt := newGate(1)
	ch := gt.wait()
	gt.set(1) // same level: nobody is woken
	select {
	case <-ch:
		t.Fatal("setting the same level woke the waiters")
	default:
	}
	gt.set(5)
	select {
	case <-ch:
	default:
		t.Fatal("a new level did not wake the waiters")
	}
	if gt.n.Load() != 5 || gt.wait() == ch {
		t.Errorf("after set(5): n=%d, channel replaced=%v", gt.n.Load(), gt.wait() != ch)
	}
}
