package bounds

import (
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/threadlab/threadlab/measure/load"
)

func TestWait(t *testing.T) {
	get := func(paths ...string) []load.Request {
		var out []load.Request
		for _, p := range paths {
			out = append(out, load.Request{Path: p})
		}
		return out
	}
	for _, c := range []struct {
		why  string
		reqs []load.Request
		want time.Duration
		ok   bool
	}{
		{"one /io request: its ms", get("/io?ms=300"), 300 * time.Millisecond, true},
		{"no ms: the endpoint's default 300", get("/io"), 300 * time.Millisecond, true},
		{"a mix: the least wait bounds every request", get("/io?ms=300", "/io?ms=200"), 200 * time.Millisecond, true},
		{"ms=0 is a known wait of nothing", get("/io?ms=0"), 0, true},
		{"another endpoint: its time is unknown", get("/io?ms=300", "/cpu"), 0, false},
		{"a template: the wait is drawn, unknown here", get("/io?ms={random 1..300}"), 0, false},
		{"not a number", get("/io?ms=abc"), 0, false},
		{"an empty ms is a 400, not a wait", get("/io?ms="), 0, false},
		{"negative", get("/io?ms=-5"), 0, false},
		{"/io-blocking is not /io", get("/io-blocking?ms=300"), 0, false},
		{"a POST is not the endpoint", []load.Request{{Method: "POST", Path: "/io?ms=300"}}, 0, false},
		{"no requests", nil, 0, false},
	} {
		got, ok := Wait(c.reqs)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: Wait = %v, %v; want %v, %v", c.why, got, ok, c.want, c.ok)
		}
	}
}

func TestFloor(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, c := range []struct {
		why  string
		d    Design
		n    int
		want time.Duration
	}{
		{"io-bound platform: ceil(600/200) = 3 waves x 300 ms", Design{Wait: ms(300), Parallel: 200}, 600, ms(900)},
		{"smoke profile: ceil(300/200) = 2 waves x 200 ms", Design{Wait: ms(200), Parallel: 200}, 300, ms(400)},
		{"one request over: ceil(201/200) = 2 waves", Design{Wait: ms(300), Parallel: 200}, 201, ms(600)},
		{"unbounded parallelism: one wave", Design{Wait: ms(300)}, 600, ms(300)},
		{"a stated floor above the arithmetic wins", Design{Wait: ms(300), Wall: ms(1000)}, 600, ms(1000)},
		{"the arithmetic above a stated floor wins", Design{Wait: ms(300), Parallel: 100, Wall: ms(1000)}, 600, ms(1800)},
		{"a stated floor alone", Design{Wall: ms(900)}, 600, ms(900)},
		{"no wait known, no floor stated: none", Design{Parallel: 200}, 600, 0},
	} {
		got, why := c.d.Floor(c.n)
		if got != c.want {
			t.Errorf("%s: Floor(%d) = %v (%s), want %v", c.why, c.n, got, why, c.want)
		}
		if (got > 0) != (why != "") {
			t.Errorf("%s: Floor(%d) = %v with explanation %q: a floor needs its reason, and only a floor", c.why, c.n, got, why)
		}
	}
}

// result is a burst's result: every latency in ms, the wall, errors.
func result(wall time.Duration, errs int64, lat ...int64) load.GroupResult {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for _, l := range lat {
		h.RecordValue(l * 1000)
	}
	return load.GroupResult{Name: "burst", Model: load.Burst, Requests: int64(len(lat)), Errors: errs, Wall: wall, Latency: h}
}

func TestCheck(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	burst := load.Group{Name: "burst", Model: load.Burst, Burst: 600}
	platform := Design{Wait: ms(300), Parallel: 200}
	split := func(r load.GroupResult, at ...time.Duration) load.GroupResult {
		r.Releases = at
		r.Release = at[0]
		for _, a := range at {
			r.Release = min(r.Release, a)
			r.ReleaseSpread = max(r.ReleaseSpread, a-r.Release)
		}
		return r
	}
	for _, c := range []struct {
		why    string
		r      load.GroupResult
		d      Design
		spread time.Duration
		want   []string // substrings, one per reason; none when possible
	}{
		{"the published impossible trial: 626 ms for 3 waves of 300", result(ms(626), 0, 307, 626), platform, ms(5),
			[]string{"wall 626ms is below the 900ms floor of the design (600 requests, at most 200 in service at once (floor.parallel): 3 waves of 300ms)"}},
		{"at the floor exactly: possible", result(ms(900), 0, 300, 900), platform, ms(5), nil},
		{"a stated floor", result(ms(850), 0, 300, 850), Design{Wall: ms(900)}, ms(5), []string{"below the 900ms floor of the design (floor.wall)"}},
		{"an answer faster than the wait", result(ms(950), 0, 12, 950), platform, ms(5),
			[]string{"the fastest answer took 12ms, below the 300ms every request waits"}},
		{"histogram rounding (3 digits) is no violation", result(ms(950), 0, 300, 950), Design{Wait: ms(300)}, ms(5), nil},
		{"failed requests end at once: no floor judged", result(ms(20), 3, 5, 20), platform, ms(5), nil},
		{"no wait known, no floor stated: nothing to judge", result(ms(10), 0, 1, 10), Design{}, ms(5), nil},
		{"a share 100 ms late", split(result(ms(1000), 0, 300, 1000), ms(500), ms(600)), platform, ms(5),
			[]string{"the burst left its generators 100ms apart (releases at generator 1 +500ms, generator 2 +600ms; noise.max_release_spread 5ms)"}},
		{"shares 2 ms apart: within the bound", split(result(ms(1000), 0, 300, 1000), ms(500), ms(502)), platform, ms(5), nil},
		{"a late share and a wall below the floor: both reasons", split(result(ms(626), 0, 307, 626), ms(500), ms(820)), platform, ms(5),
			[]string{"320ms apart", "wall 626ms is below the 900ms floor"}},
		{"no bound: the spread is not judged", split(result(ms(1000), 0, 300, 1000), ms(500), ms(600)), platform, 0, nil},
	} {
		got := Check(burst, c.r, c.d, c.spread)
		if len(got) != len(c.want) {
			t.Errorf("%s: %d reasons %q, want %d", c.why, len(got), got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: reason %d = %q, want it to say %q", c.why, i+1, got[i], w)
			}
		}
	}
}
