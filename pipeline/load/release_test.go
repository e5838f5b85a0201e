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
