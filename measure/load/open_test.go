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

	"github.com/threadlab/threadlab/internal/testenv"
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
	probe := testenv.StartLagProbe(t)
	open := run(t, srv.URL, Group{Model: Open, Rate: 200, Duration: 2 * period, Requests: get("/")}).Groups[0]
	closed := run(t, srv.URL, Group{Model: Closed, Users: 10, Duration: 2 * period, Requests: get("/")}).Groups[0]
	t.Logf("open:   n=%d p50=%.2fms p90=%.1fms p99=%.1fms max=%.1fms late=%.2f%%",
		open.Requests, open.QuantileMs(50), open.QuantileMs(90), open.QuantileMs(99), open.MaxMs(), open.LatePct)
	t.Logf("closed: n=%d p50=%.2fms p90=%.1fms p99=%.1fms max=%.1fms",
		closed.Requests, closed.QuantileMs(50), closed.QuantileMs(90), closed.QuantileMs(99), closed.MaxMs())
	// A busy machine only adds latency, so the lower bounds hold at any load.
	if p := open.QuantileMs(99); p < 200 {
		t.Errorf("open p99 = %.1fms, want ~285ms: the freezes must show", p)
	}
	if p := open.QuantileMs(90); p < 80 {
		t.Errorf("open p90 = %.1fms, want ~150ms", p)
	}
	if open.Errors != 0 || closed.Errors != 0 {
		t.Errorf("errors: open %v closed %v", open.ErrorsByClass, closed.ErrorsByClass)
	}
	if closed.MaxMs() < 200 {
		t.Errorf("closed max %.1fms: the freeze should still show in the max", closed.MaxMs())
	}
	// At any load the closed model hides part of the freezes: at load 12
	// its p99 was 195 ms against open's 315 ms.
	if closed.QuantileMs(99) >= open.QuantileMs(99) {
		t.Errorf("closed p99 %.1fms vs open %.1fms: the closed model must show a lower p99 on the same freezes", closed.QuantileMs(99), open.QuantileMs(99))
	}
	// Scheduling lag lifts the closed model's p99 (6-14 ms at a lag of
	// 220-250 µs, 46 ms at 418 µs, 195 ms at load 12), hiding the order
	// of magnitude checked here.
	probe.SkipIfBusy(t, 350*time.Microsecond, "the upper bounds and the closed model's low p99")
	if p := open.QuantileMs(99); p > 320 {
		t.Errorf("open p99 = %.1fms, want ~285ms", p)
	}
	if p := open.QuantileMs(90); p > 220 {
		t.Errorf("open p90 = %.1fms, want ~150ms", p)
	}
	// The bias: same server, same freezes, p99 an order of magnitude lower.
	if closed.QuantileMs(99) > open.QuantileMs(99)/10 {
		t.Errorf("closed p99 %.1fms vs open %.1fms: expected the closed model to hide the freezes", closed.QuantileMs(99), open.QuantileMs(99))
	}
}

// TestAccuracy: the server sleeps exactly 50 ms (a nanosleep on its own
// thread; a Go timer could oversleep by up to a millisecond when the
// process is idle), so p50 must be 50 ms within 1 ms on a quiet machine.
//
// On a busy one every wake-up in a request's path comes late, so the bound
// is widened by the scheduling lag measured during the run: 4 x its mean,
// one per wake-up on the open model's path (dispatcher, worker, server,
// answer). Measured on this 2-core VM: quiet, lag ~0.09 ms and p50 50.3 to
// 50.8 ms; with 3 busy processes per core, lag 0.5-0.8 ms and p50 up to
// 51.0 ms; with 6 (load 12), lag 1.2-2.4 ms and an open p50 of 54-60 ms,
// past any bound worth asserting, so above 0.5 ms of lag the p50 bound is
// skipped with the measurement. What holds at any load is checked first:
// no latency below the server's 50 ms (it is timed from the intended
// send, which is never after the real one), no errors, and, for the closed
// users, Little's law: n requests of mean latency L fit in users x wall.
func TestAccuracy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts := unix.NsecToTimespec(int64(50 * time.Millisecond))
		for unix.Nanosleep(&ts, &ts) == unix.EINTR {
		}
	}))
	defer srv.Close()
	const users = 5
	probe := testenv.StartLagProbe(t)
	res := run(t, srv.URL,
		Group{Name: "closed", Model: Closed, Users: users, Duration: time.Second, Requests: get("/")},
		Group{Name: "open", Model: Open, Rate: 100, Duration: time.Second, Requests: get("/")})
	for _, g := range res.Groups {
		t.Logf("%s: n=%d min=%.3fms p50=%.3fms p99=%.3fms late=%.0f%%", g.Name, g.Requests,
			float64(g.Latency.Min())/1000, g.QuantileMs(50), g.QuantileMs(99), g.LatePct)
		if g.Requests == 0 || g.Errors != 0 {
			t.Fatalf("%s: requests=%d errors=%v, want answers and no errors", g.Name, g.Requests, g.ErrorsByClass)
		}
		// Min is the top of the lowest bucket, so it is >= the true minimum.
		if m := g.Latency.Min(); m < 50000 {
			t.Errorf("%s: a latency of %dus, below the server's 50ms sleep", g.Name, m)
		}
	}
	closed, open := res.Groups[0], res.Groups[1]
	// Little's law with 1% for the histogram's rounding of the mean.
	if busy := float64(closed.Requests) * closed.Latency.Mean(); busy > 1.01*users*float64(closed.Wall.Microseconds()) {
		t.Errorf("closed: %d requests x mean %.3fms = %.0fms of waiting, more than %d users x wall %v hold",
			closed.Requests, closed.Latency.Mean()/1000, busy/1000, users, closed.Wall)
	}
	// 100/s for 1 s: 100 sends are due, and nothing caps them in flight.
	if open.Requests < 95 || open.Missed != 0 {
		t.Errorf("open: %d requests, %d missed, want the 100 due at 100/s", open.Requests, open.Missed)
	}

	probe.SkipIfBusy(t, 500*time.Microsecond, "p50 within 1ms of 50ms (plus 4x the lag)")
	limit := 51 + 4*float64(probe.Mean())/1e6
	for _, g := range res.Groups {
		if p50 := g.QuantileMs(50); p50 > limit {
			t.Errorf("%s: p50 = %.3fms, want 50..%.3fms", g.Name, p50, limit)
		}
	}
	// At 5 users x 1 s / 50 ms, a quiet machine answers ~100.
	if closed.Requests < 80 {
		t.Errorf("closed: only %d requests", closed.Requests)
	}
}

// arrivals records when requests reach the server, relative to its start,
// and how many were in the server at each arrival (itself included).
type arrivals struct {
	mu       sync.Mutex
	start    time.Time
	at       []time.Duration
	inside   []int
	inflight int
}

// window returns how many requests arrived between from and to, and the
// most in the server at once that one of them saw.
func (a *arrivals) window(from, to time.Duration) (n, peak int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, d := range a.at {
		if d >= from && d < to {
			n, peak = n+1, max(peak, a.inside[i])
		}
	}
	return n, peak
}

func arrivalServer(t *testing.T, delay time.Duration) (*httptest.Server, *arrivals) {
	a := &arrivals{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		if a.start.IsZero() {
			a.start = time.Now()
		}
		a.inflight++
		a.at = append(a.at, time.Since(a.start))
		a.inside = append(a.inside, a.inflight)
		a.mu.Unlock()
		time.Sleep(delay)
		a.mu.Lock()
		a.inflight--
		a.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv, a
}

// TestRampUsers: 1 user then 5 users, 300 ms each, 10 ms per request.
// At any load the server sees at most 1 request at a time in the first
// stage and 5 at some point in the second: that is what a users level
// is. The arrival counts, ~30 then ~150, depend on every request taking
// about 10 ms; a busy machine stretches the lone user's requests by its
// scheduling lag (arrivals 13 then 110 at load 12), so the ratio is
// checked only when the measured lag is small.
func TestRampUsers(t *testing.T) {
	srv, a := arrivalServer(t, 10*time.Millisecond)
	probe := testenv.StartLagProbe(t)
	g := run(t, srv.URL, Group{Model: Ramp, Requests: get("/"), Stages: []Stage{
		{Duration: 300 * time.Millisecond, Users: 1}, {Duration: 300 * time.Millisecond, Users: 5}}}).Groups[0]
	first, one := a.window(0, 280*time.Millisecond)
	second, five := a.window(320*time.Millisecond, 600*time.Millisecond)
	t.Logf("arrivals %d then %d, at most %d then %d in the server at once", first, second, one, five)
	if one != 1 || five != 5 || g.Errors != 0 {
		t.Errorf("%d then %d requests in the server at once, errors %d: want 1 user, then 5", one, five, g.Errors)
	}
	probe.SkipIfBusy(t, 500*time.Microsecond, "the ~5x ratio of arrivals")
	// Compared as a ratio, which does not depend on machine speed.
	ratio := float64(second) / float64(max(first, 1))
	if ratio < 3.5 || ratio > 6 {
		t.Errorf("arrivals %d then %d (x%.1f): want about 5x more with 5 users", first, second, ratio)
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
	if h, _ := a.window(0, 500*time.Millisecond); h < 40 || h > 60 {
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

// TestGatePark: an inactive user's wait, in each order the level and the
// user can meet. The row "after the end" is spike 20261202T043733Z's hang:
// a user that passed the end check just before follow set the level to -1
// took the fresh channel, and -1 read as a level below it, so it waited
// on a channel no one would close; the generator waited for it for 7
// minutes until killed.
func TestGatePark(t *testing.T) {
	tests := []struct {
		why    string
		before func(gt *gate)                     // what happened before the user parks
		during func(gt *gate, done chan struct{}) // what wakes it, if it blocks
		stop   bool
	}{
		{"after the end: the level is -1 before the user parks; it stops at once", func(gt *gate) { gt.set(3); gt.set(-1) }, nil, true},
		{"the level rose above the user before it parked: it goes on at once", func(gt *gate) { gt.set(10) }, nil, false},
		{"parked, then the level rises above it: it goes on", func(gt *gate) { gt.set(3) }, func(gt *gate, _ chan struct{}) { gt.set(10) }, false},
		{"parked, then the group's time is up: it stops", func(gt *gate) { gt.set(3) }, func(gt *gate, _ chan struct{}) { gt.set(-1) }, true},
		{"parked, then the run is cancelled: it stops", func(gt *gate) { gt.set(3) }, func(_ *gate, done chan struct{}) { close(done) }, true},
	}
	for _, tt := range tests {
		gt, done := newGate(10), make(chan struct{})
		tt.before(gt)
		got := make(chan bool, 1)
		go func() { got <- gt.park(5, done) }()
		if tt.during != nil {
			select {
			case stop := <-got:
				t.Fatalf("%s: park returned %v before anything woke it", tt.why, stop)
			case <-time.After(20 * time.Millisecond):
			}
			tt.during(gt, done)
		}
		select {
		case stop := <-got:
			if stop != tt.stop {
				t.Errorf("%s: stop = %v, want %v", tt.why, stop, tt.stop)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: park still blocked after 5 s", tt.why)
		}
	}
}
