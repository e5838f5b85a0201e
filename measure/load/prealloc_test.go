package load

// Seed 002's fixed rate is k6's constant arrival rate with preAllocatedVUs
// = N: all N connections are open from the first second, whatever the
// rate needs. Observed from the server: a listener that accepts nothing
// until its accept queue holds the preallocated connections (or two
// seconds pass) sees all of them queued, while a group without
// preallocation presents only the connections its sends needed.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestPreallocate(t *testing.T) {
	const n = 200
	needDescriptors(t, 2*n+200)
	rows := []struct {
		name      string
		pre       int
		keepAlive bool
		most      func(int) bool
		want      string
		why       string
	}{
		{"preallocated", n, true, func(q int) bool { return q == n }, "all 200",
			"every preallocated connection is open before the first send"},
		{"on demand", 0, true, func(q int) bool { return q <= 3 }, "at most 3",
			"3 sends at 10/s, each unanswered until the server starts: one connection each"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			l := backlogListener(t, n+100)
			peak := make(chan int, 1)
			go func() {
				most := 0
				for deadline := time.Now().Add(2 * time.Second); most < n && time.Now().Before(deadline); {
					most = max(most, acceptQueue(t, l))
					time.Sleep(5 * time.Millisecond)
				}
				peak <- most
				http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
			}()
			res := run(t, "http://"+l.Addr().String(), Group{Model: Open, Rate: 10, Duration: 250 * time.Millisecond,
				Preallocate: row.pre, NoKeepAlive: !row.keepAlive, Requests: get("/"), Timeout: 30 * time.Second})
			g := res.Groups[0]
			if most := <-peak; !row.most(most) {
				t.Errorf("the accept queue held at most %d connections, want %s (%s)", most, row.want, row.why)
			}
			if g.Requests != 3 || g.Errors != 0 || g.Missed != 0 {
				t.Errorf("requests=%d errors=%d missed=%d, want the 3 sends of 250 ms at 10/s answered", g.Requests, g.Errors, g.Missed)
			}
			if row.pre > 0 && res.Self.Sockets != int64(row.pre) {
				t.Errorf("%d sockets opened, want the %d preallocated and no more (they carry the sends)", res.Self.Sockets, row.pre)
			}
		})
	}
}

func TestPreallocateValidation(t *testing.T) {
	rows := []struct {
		g    Group
		want string
		why  string
	}{
		{Group{Model: Closed, Users: 2, Duration: time.Second, Preallocate: 5, Requests: get("/")}, "applies to the open model",
			"a closed group holds one connection per user already"},
		{Group{Model: Open, Rate: 10, Duration: time.Second, Preallocate: -1, Requests: get("/")}, "must be >= 0", "negative"},
		{Group{Model: Open, Rate: 10, Duration: time.Second, Preallocate: 50, MaxInFlight: 10, Requests: get("/")}, "below preallocate",
			"k6 refuses maxVUs below preAllocatedVUs"},
		{Group{Model: Ramp, Stages: []Stage{{Duration: time.Second, Rate: 5}}, Preallocate: 50, Requests: get("/")}, "",
			"a ramp of rates is an open model"},
	}
	for _, row := range rows {
		err := row.g.validate()
		switch {
		case row.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", row.why, err)
		case row.want != "" && (err == nil || !strings.Contains(err.Error(), row.want)):
			t.Errorf("%s: error %v, want one saying %q", row.why, err, row.want)
		}
	}
	if g := normalize(0, Group{Model: Open, Preallocate: 70}); g.MaxInFlight != 70 || dialCap(g) != 70 {
		t.Errorf("MaxInFlight %d, dial cap %d: want both 70 (maxVUs defaults to preAllocatedVUs, all connect at once)", g.MaxInFlight, dialCap(g))
	}
}

// TestOKCountsOnly2xx: seed 002's requests_ok is the 2xx answers; a
// redirect is neither a success nor an error, a 4xx or 5xx an error.
func TestOKCountsOnly2xx(t *testing.T) {
	rows := []struct {
		status     int
		ok, errors int64
		why        string
	}{
		{200, 3, 0, "a 200 is a success"},
		{204, 3, 0, "so is any 2xx"},
		{302, 0, 0, "a redirect is answered but not successful"},
		{503, 0, 3, "a 5xx is an error"},
	}
	for _, row := range rows {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if row.status == 302 {
				w.Header().Set("Location", "/elsewhere")
			}
			w.WriteHeader(row.status)
		}))
		g := run(t, srv.URL, Group{Model: Burst, Burst: 3, Requests: get("/")}).Groups[0]
		srv.Close()
		if g.Requests != 3 || g.OK != row.ok || g.Errors != row.errors {
			t.Errorf("status %d: requests=%d ok=%d errors=%d %v, want 3, %d, %d (%s)", row.status, g.Requests, g.OK, g.Errors, g.ErrorsByClass, row.ok, row.errors, row.why)
		}
		if _, ok := g.ErrorsByClass["not_2xx"]; ok {
			t.Errorf("status %d: ErrorsByClass %v lists not_2xx, which is no error", row.status, g.ErrorsByClass)
		}
	}
}
