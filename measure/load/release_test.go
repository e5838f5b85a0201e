package load

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// ReleaseAt holds a burst until that offset from the run start, once its
// connections are up, and Release records when it left; the latencies and
// the wall are measured from the release, so the wait is in none of them.
// Without ReleaseAt the burst leaves as soon as it is connected.
func TestBurstReleaseAt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	const at = 300 * time.Millisecond
	for _, c := range []struct {
		why       string
		releaseAt time.Duration
		lo, hi    time.Duration
	}{
		{"held until 300 ms", at, at, at + 100*time.Millisecond},
		{"released when connected", 0, 1, at},
	} {
		res := run(t, srv.URL, Group{Model: Burst, Burst: 10, ReleaseAt: c.releaseAt, Requests: []Request{{Path: "/"}}})
		g := res.Groups[0]
		if g.Release < c.lo || g.Release > c.hi {
			t.Errorf("%s: released %v after the start, want %v to %v", c.why, g.Release, c.lo, c.hi)
		}
		if g.Requests != 10 || g.Errors != 0 {
			t.Errorf("%s: %d requests, %d errors, want 10 ok", c.why, g.Requests, g.Errors)
		}
		if g.Wall >= at {
			t.Errorf("%s: wall %v: measured from the release, the wait before it is not in it", c.why, g.Wall)
		}
	}
}

// Plan.OnRelease is called once per plan, when its first request may
// leave: a burst held by ReleaseAt calls it at its release, not at the
// start; a closed group starting first calls it at its start, and a later
// burst does not call it again.
func TestOnRelease(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	const at = 200 * time.Millisecond
	for _, c := range []struct {
		why    string
		groups []Group
		lo, hi time.Duration
	}{
		{"a burst held until 200 ms", []Group{{Model: Burst, Burst: 5, ReleaseAt: at, Requests: []Request{{Path: "/"}}}}, at, at + 100*time.Millisecond},
		{"a closed group first, a burst at 200 ms", []Group{
			{Name: "c", Model: Closed, Users: 1, Duration: 50 * time.Millisecond, Requests: []Request{{Path: "/"}}},
			{Name: "b", Model: Burst, Burst: 5, Start: at, Requests: []Request{{Path: "/"}}},
		}, 0, at / 2},
	} {
		var calls []time.Time
		p := Plan{Target: srv.URL, Groups: c.groups, OnRelease: func() { calls = append(calls, time.Now()) }}
		res, err := Run(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(calls) != 1 {
			t.Errorf("%s: OnRelease called %d times, want once", c.why, len(calls))
			continue
		}
		if d := calls[0].Sub(res.Start); d < c.lo || d > c.hi {
			t.Errorf("%s: OnRelease at %v after the start, want %v to %v", c.why, d, c.lo, c.hi)
		}
	}
}
