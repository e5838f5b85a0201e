package load

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadlab/threadlab/internal/testenv"
)

// run is Run for tests: a plan error fails the test.
func run(t *testing.T, target string, groups ...Group) *Result {
	t.Helper()
	res, err := Run(context.Background(), Plan{Target: target, Groups: groups, Seed: 1})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func get(path string) []Request { return []Request{{Path: path}} }

// threadServer answers every request with X-Thread set to one of n values
// (round robin), like a server pool with n threads.
func threadServer(t *testing.T, n int) *httptest.Server {
	var i atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Thread", fmt.Sprintf("exec-%d", i.Add(1)%int64(n)))
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestClosed(t *testing.T) {
	srv := threadServer(t, 4)
	res := run(t, srv.URL, Group{Model: Closed, Users: 8, Duration: 300 * time.Millisecond,
		Requests: get("/"), CountHeader: "X-Thread"})
	g := res.Groups[0]
	if g.Requests < 100 || g.Errors != 0 {
		t.Fatalf("requests=%d errors=%d (%v), want many requests and no errors", g.Requests, g.Errors, g.ErrorsByClass)
	}
	if g.Latency.TotalCount() != g.Requests {
		t.Errorf("histogram holds %d values for %d requests", g.Latency.TotalCount(), g.Requests)
	}
	if len(g.Headers) != 4 {
		t.Errorf("distinct X-Thread values = %v, want 4", g.Headers)
	}
	var sum int64
	for _, n := range g.Headers {
		sum += n
	}
	if sum != g.Requests {
		t.Errorf("header counts sum to %d, want one per request (%d)", sum, g.Requests)
	}
	if res.Self.Sockets != 8 {
		t.Errorf("sockets opened = %d, want 8: one keep-alive connection per user", res.Self.Sockets)
	}
	if g.Wall < 250*time.Millisecond || g.Wall > time.Second {
		t.Errorf("wall = %v, want about the 300ms duration", g.Wall)
	}
	var series int64
	for _, s := range g.Series {
		series += s.Requests
	}
	if series != g.Requests {
		t.Errorf("series counts %d requests, totals say %d", series, g.Requests)
	}
	if res.Self.CPUSeconds <= 0 || res.Self.Cores < 1 {
		t.Errorf("self-check %+v: want CPU time and cores measured", res.Self)
	}
}

func TestClosedThinkTime(t *testing.T) {
	// One user thinking 20-30 ms between fast requests over 300 ms sends
	// 300/(25+latency) ~ 10-12 requests; without think time it would send thousands.
	srv := threadServer(t, 1)
	g := run(t, srv.URL, Group{Model: Closed, Users: 1, Duration: 300 * time.Millisecond,
		ThinkMin: 20 * time.Millisecond, ThinkMax: 30 * time.Millisecond, Requests: get("/")}).Groups[0]
	if g.Requests < 8 || g.Requests > 16 {
		t.Errorf("requests = %d, want 8..16 for 300ms at ~25ms per request", g.Requests)
	}
}

func TestBurst(t *testing.T) {
	// The server holds every request until all 50 have arrived: the burst
	// finishes only if all of them were really in flight together.
	const n = 50
	var arrived atomic.Int64
	all := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrived.Add(1) == n {
			close(all)
		}
		select {
		case <-all:
		case <-time.After(5 * time.Second):
		}
		w.Header().Set("X-Thread", "t"+r.URL.Query().Get("k"))
	}))
	defer srv.Close()
	start := time.Now()
	res := run(t, srv.URL, Group{Model: Burst, Burst: n, CountHeader: "x-thread",
		Requests: []Request{{Path: "/?k=a", Weight: 1}, {Path: "/?k=b", Weight: 3}}})
	g := res.Groups[0]
	if time.Since(start) > 3*time.Second {
		t.Fatalf("burst took %v: requests were not released together", time.Since(start))
	}
	if g.Requests != n || g.Errors != 0 {
		t.Fatalf("requests=%d errors=%v, want %d ok", g.Requests, g.ErrorsByClass, n)
	}
	if g.Headers["ta"]+g.Headers["tb"] != n || g.Headers["tb"] < g.Headers["ta"] {
		t.Errorf("mix counts %v: want %d in all, weight 3 path more often than weight 1", g.Headers, n)
	}
	if g.Wall <= 0 || g.MaxMs() > float64(g.Wall.Microseconds())/1000+1 {
		t.Errorf("wall %v, max latency %.3fms: latencies are measured from the release, so none exceeds the wall", g.Wall, g.MaxMs())
	}
}

func TestKeepAliveOff(t *testing.T) {
	var closeHdr atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Close {
			closeHdr.Add(1)
		}
	}))
	defer srv.Close()
	res := run(t, srv.URL, Group{Model: Closed, Users: 2, Duration: 200 * time.Millisecond, NoKeepAlive: true, Requests: get("/")})
	g := res.Groups[0]
	if g.Errors != 0 || g.Requests < 10 {
		t.Fatalf("requests=%d errors=%v", g.Requests, g.ErrorsByClass)
	}
	if res.Self.Sockets != g.Requests {
		t.Errorf("sockets=%d requests=%d: without keep-alive every request opens a connection", res.Self.Sockets, g.Requests)
	}
	if g.Connects() != g.Requests || g.SlowConnects != 0 {
		t.Errorf("connects=%d (slow %d) requests=%d: without keep-alive every request connects, and loopback never drops a SYN here", g.Connects(), g.SlowConnects, g.Requests)
	}
	if p50, top := g.ConnectMs(50), g.ConnectMs(100); !(p50 > 0 && p50 <= top && top < float64(SlowConnect.Milliseconds())) {
		t.Errorf("connect p50 %.3f ms, max %.3f ms: want 0 < p50 <= max < 1 s on loopback", p50, top)
	}
	if closeHdr.Load() != g.Requests {
		t.Errorf("%d of %d requests said Connection: close", closeHdr.Load(), g.Requests)
	}
}

// TestFraming checks the client against net/http's server for every way a
// response body can be framed; a framing bug shows as errors or as a
// keep-alive connection that gets out of step.
func TestFraming(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	mux := http.NewServeMux()
	mux.HandleFunc("/length", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) })
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 5; i++ {
			io.WriteString(w, big[:1000*i+1])
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		// No length, no chunking: HTTP/1.0-style body ended by closing.
		c, buf, _ := w.(http.Hijacker).Hijack()
		buf.WriteString("HTTP/1.1 200 OK\r\nX-Thread: closer\r\n\r\n" + big[:5000])
		buf.Flush()
		c.Close()
	})
	mux.HandleFunc("/continue", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(103)
		io.WriteString(w, "after early hints")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, tc := range []struct {
		path, method string
		why          string
		sockets      func(requests int64) bool
	}{
		{"/length", "GET", "Content-Length body over many reads keeps the connection", func(n int64) bool { return n > 0 }},
		{"/length", "HEAD", "HEAD has no body despite Content-Length", func(int64) bool { return true }},
		{"/chunked", "GET", "chunked body with many chunks keeps the connection", func(int64) bool { return true }},
		{"/empty", "GET", "204 has no body", func(int64) bool { return true }},
		{"/continue", "GET", "a 1xx before the final answer is skipped", func(int64) bool { return true }},
	} {
		res := run(t, srv.URL, Group{Model: Closed, Users: 2, Duration: 100 * time.Millisecond,
			Requests: []Request{{Method: tc.method, Path: tc.path}}})
		g := res.Groups[0]
		if g.Errors != 0 || g.Requests < 2 {
			t.Errorf("%s %s: requests=%d errors=%v (%s)", tc.method, tc.path, g.Requests, g.ErrorsByClass, tc.why)
		}
		if res.Self.Sockets != 2 {
			t.Errorf("%s %s: %d sockets for 2 users: the connection was not reused (%s)", tc.method, tc.path, res.Self.Sockets, tc.why)
		}
	}
	res := run(t, srv.URL, Group{Model: Closed, Users: 2, Duration: 100 * time.Millisecond, CountHeader: "X-Thread", Requests: get("/close")})
	g := res.Groups[0]
	if g.Errors != 0 || g.Requests < 2 || res.Self.Sockets != g.Requests || g.Headers["closer"] != g.Requests {
		t.Errorf("close-delimited: requests=%d errors=%v sockets=%d headers=%v: want every body read to EOF and a new connection each",
			g.Requests, g.ErrorsByClass, res.Self.Sockets, g.Headers)
	}
}

// rawServer accepts connections and hands each to handle.
func rawServer(t *testing.T, handle func(c net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return "http://" + ln.Addr().String()
}

// readRequest consumes one request head.
func readRequest(r *bufio.Reader) error {
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if line == "\r\n" {
			return nil
		}
	}
}

func TestErrorClasses(t *testing.T) {
	refusedLn, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := "http://" + refusedLn.Addr().String()
	refusedLn.Close()

	status := func(code int) string {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) })).URL
	}
	reset := rawServer(t, func(c net.Conn) {
		readRequest(bufio.NewReader(c))
		c.(*net.TCPConn).SetLinger(0) // close with RST
		c.Close()
	})
	slow := rawServer(t, func(c net.Conn) {
		readRequest(bufio.NewReader(c))
		time.Sleep(time.Second)
		c.Close()
	})
	garbage := rawServer(t, func(c net.Conn) {
		readRequest(bufio.NewReader(c))
		io.WriteString(c, "SSH-2.0-OpenSSH\r\n\r\n")
		c.Close()
	})
	for _, tc := range []struct {
		url, class, why string
	}{
		{refused, "refused", "nothing listens on the port"},
		{reset, "reset", "the server resets the connection before answering"},
		{slow, "timeout", "the server answers after the 100ms response timeout"},
		{status(404), "http_4xx", "client errors are failures too"},
		{status(503), "http_5xx", "server errors"},
		{garbage, "other", "the answer is not HTTP"},
	} {
		res := run(t, tc.url, Group{Model: Burst, Burst: 3, Timeout: 100 * time.Millisecond, Requests: get("/")})
		g := res.Groups[0]
		if g.Requests != 3 || g.Errors != 3 || g.ErrorsByClass[tc.class] != 3 {
			t.Errorf("%s: requests=%d errors=%d by class %v, want 3 %s (%s)", tc.class, g.Requests, g.Errors, g.ErrorsByClass, tc.class, tc.why)
		}
		if g.Latency.TotalCount() != 3 {
			t.Errorf("%s: %d latencies recorded, want failed requests in the record too", tc.class, g.Latency.TotalCount())
		}
		if tc.class == "timeout" && (g.QuantileMs(50) < 95 || g.QuantileMs(50) > 300) {
			t.Errorf("timeout: p50 %.1fms, want about the 100ms timeout", g.QuantileMs(50))
		}
	}
}

func TestIdleCloseIsRetried(t *testing.T) {
	// A server that closes each keep-alive connection after its first
	// answer without saying so: the client must notice the close on the
	// next send and redial, not report an error the server did not make.
	url := rawServer(t, func(c net.Conn) {
		defer c.Close()
		if readRequest(bufio.NewReader(c)) == nil {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
			time.Sleep(5 * time.Millisecond)
		}
	})
	res := run(t, url, Group{Model: Closed, Users: 1, Duration: 100 * time.Millisecond, Requests: get("/")})
	g := res.Groups[0]
	if g.Errors != 0 || g.Requests < 3 {
		t.Errorf("requests=%d errors=%v, want a redial after each silent close", g.Requests, g.ErrorsByClass)
	}
}

func TestCancel(t *testing.T) {
	// A hung server and a long run: cancelling must return at once with
	// what was measured and ctx.Err().
	url := rawServer(t, func(c net.Conn) { time.Sleep(10 * time.Second); c.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	res, err := Run(ctx, Plan{Target: url, Groups: []Group{
		{Model: Closed, Users: 20, Duration: time.Minute, Requests: get("/")},
		{Model: Open, Rate: 100, Duration: time.Minute, Requests: get("/")},
		{Model: Closed, Users: 1, Duration: time.Minute, Start: 30 * time.Second, Requests: get("/")},
	}})
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Run returned %v after cancel, want promptly", took-200*time.Millisecond)
	}
	if err != context.Canceled || res == nil || len(res.Groups) != 3 {
		t.Fatalf("Run = %v, %v; want a partial result and context.Canceled", res, err)
	}
}

func TestGroups(t *testing.T) {
	// Seed 000's shape: background load, then a measured group that starts
	// later; each is measured on its own.
	var mu sync.Mutex
	firstIO := time.Time{}
	mux := http.NewServeMux()
	mux.HandleFunc("/cpu", func(w http.ResponseWriter, r *http.Request) { time.Sleep(2 * time.Millisecond) })
	mux.HandleFunc("/io", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if firstIO.IsZero() {
			firstIO = time.Now()
		}
		mu.Unlock()
		w.WriteHeader(500)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	start := time.Now()
	res := run(t, srv.URL,
		Group{Name: "background", Model: Closed, Users: 15, Duration: 400 * time.Millisecond, Requests: get("/cpu")},
		Group{Name: "measured", Model: Burst, Burst: 20, Start: 200 * time.Millisecond, Requests: get("/io")})
	bg, m := res.Groups[0], res.Groups[1]
	if bg.Name != "background" || bg.Errors != 0 || bg.Requests < 100 {
		t.Errorf("background: %s requests=%d errors=%d", bg.Name, bg.Requests, bg.Errors)
	}
	if m.Name != "measured" || m.Requests != 20 || m.ErrorsByClass["http_5xx"] != 20 {
		t.Errorf("measured: %s requests=%d errors=%v, want its own 20 5xx", m.Name, m.Requests, m.ErrorsByClass)
	}
	if d := firstIO.Sub(start); d < 190*time.Millisecond {
		t.Errorf("measured group started %v into the run, want after its 200ms offset", d)
	}
	if res.Wall < 390*time.Millisecond {
		t.Errorf("run wall %v, want at least the background's 400ms", res.Wall)
	}
}

func TestTemplateSeeded(t *testing.T) {
	// Same seed, same paths: template draws come from a per-worker source.
	paths := func(seed int64) []string {
		var got []string
		var mu sync.Mutex
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got = append(got, r.URL.Path)
			mu.Unlock()
		}))
		defer srv.Close()
		_, err := Run(context.Background(), Plan{Target: srv.URL, Seed: seed, Groups: []Group{{
			Model: Closed, Users: 1, Duration: 50 * time.Millisecond, Requests: get("/item/{random 1..1000}/x")}}})
		if err != nil {
			t.Fatal(err)
		}
		return got[:10]
	}
	a, b, c := paths(7), paths(7), paths(8)
	if strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("seed 7 gave %v then %v", a, b)
	}
	if strings.Join(a, " ") == strings.Join(c, " ") {
		t.Errorf("seeds 7 and 8 both gave %v", a)
	}
	if !strings.HasPrefix(a[0], "/item/") || !strings.HasSuffix(a[0], "/x") {
		t.Errorf("path %q does not follow the template", a[0])
	}
}

func TestFileLimit(t *testing.T) {
	limit, err := raiseFileLimit()
	if err != nil {
		t.Fatal(err)
	}
	// More users than descriptors: Run refuses up front and says how to fix it.
	_, err = Run(context.Background(), Plan{Target: "http://127.0.0.1:1", Groups: []Group{
		{Model: Closed, Users: int(limit), Duration: time.Second, Requests: get("/")}}})
	if err == nil || !strings.Contains(err.Error(), "ulimit -Hn") {
		t.Errorf("Run with %d users = %v, want an error naming the limit", limit, err)
	}
	// An open group's in-flight cap is lowered to what is left, and reported.
	srv := threadServer(t, 1)
	g := run(t, srv.URL, Group{Model: Open, Rate: 10, Duration: 100 * time.Millisecond, MaxInFlight: int(limit) * 2, Requests: get("/")}).Groups[0]
	if g.MaxInFlight <= 0 || uint64(g.MaxInFlight) > limit {
		t.Errorf("cap in force %d with RLIMIT_NOFILE %d", g.MaxInFlight, limit)
	}
}

func TestOnTick(t *testing.T) {
	srv := threadServer(t, 1)
	var ticks []Tick
	probe := testenv.StartLagProbe(t)
	res, err := Run(context.Background(), Plan{Target: srv.URL, OnTick: func(tk Tick) { ticks = append(ticks, tk) },
		Groups: []Group{{Model: Open, Rate: 200, Duration: 2500 * time.Millisecond, Requests: get("/")}}})
	if err != nil {
		t.Fatal(err)
	}
	total := res.Groups[0].Requests
	// 2.5 s: ticks at 1 s and 2 s (a third if a busy host stretches the
	// run past 3 s). At any load: a tick is never early, counts only go up,
	// no tick sees more than the schedule has sent by then (200/s, plus the
	// send at 0) or more than the run's total, and each tick's RPS is its
	// own difference over the time since the previous tick.
	if len(ticks) < 2 || len(ticks) > 3 {
		t.Fatalf("%d ticks in a 2.5 s run, want 2 (3 if the run overran): %+v", len(ticks), ticks)
	}
	var prev Tick
	for i, tk := range ticks {
		if tk.Elapsed < time.Duration(i+1)*time.Second {
			t.Errorf("tick %d at %v: earlier than %d s", i+1, tk.Elapsed, i+1)
		}
		if tk.Requests < prev.Requests || tk.Requests > total || float64(tk.Requests) > 200*tk.Elapsed.Seconds()+1 {
			t.Errorf("tick %d = %+v: want between the previous tick's %d and min(run total %d, 200/s x elapsed + 1)", i+1, tk, prev.Requests, total)
		}
		if want := float64(tk.Requests-prev.Requests) / (tk.Elapsed - prev.Elapsed).Seconds(); math.Abs(tk.RPS-want) > 0.01*want+1e-9 {
			t.Errorf("tick %d RPS = %.1f, want %.1f (its requests over the time since the previous tick)", i+1, tk.RPS, want)
		}
		prev = tk
	}
	// On a quiet host the 200 sends due in each second are answered within
	// a millisecond or so, so a tick sees at least 75% of the schedule;
	// on a busy one answers lag it by tens of milliseconds and more.
	probe.SkipIfBusy(t, 500*time.Microsecond, "that each tick saw >= 75% of the scheduled requests")
	for i, tk := range ticks[:2] {
		if tk.Requests < int64(i+1)*150 || tk.RPS < 100 {
			t.Errorf("tick %d = %+v, want ~%d requests at ~200/s", i+1, tk, (i+1)*200)
		}
	}
}

func TestRequestsAsNetHTTPSeesThem(t *testing.T) {
	// net/http's server must read our pre-built requests exactly as meant:
	// method, path under the target's prefix, headers, body and Host.
	type seen struct{ method, path, ua, hdr, body, host string }
	got := make(chan seen, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		select {
		case got <- seen{r.Method, r.URL.RequestURI(), r.UserAgent(), r.Header.Get("X-Trace"), string(b), r.Host}:
		default:
		}
	}))
	defer srv.Close()
	res := run(t, srv.URL+"/api/", Group{Model: Burst, Burst: 2, Requests: []Request{
		{Method: "POST", Path: "/orders?x=1", Headers: map[string]string{"X-Trace": "abc", "Content-Type": "application/json"}, Body: `{"id":1}`}}})
	if g := res.Groups[0]; g.Errors != 0 {
		t.Fatalf("errors %v", g.ErrorsByClass)
	}
	s := <-got
	want := seen{"POST", "/api/orders?x=1", "threadlab", "abc", `{"id":1}`, strings.TrimPrefix(srv.URL, "http://")}
	if s != want {
		t.Errorf("server saw %+v, want %+v", s, want)
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	// The pipeline calls Run once per warm-up and trial: nothing may outlive it.
	srv := threadServer(t, 1)
	before := runtime.NumGoroutine()
	run(t, srv.URL,
		Group{Name: "c", Model: Closed, Users: 5, Duration: 100 * time.Millisecond, ThinkMax: time.Millisecond, Requests: get("/")},
		Group{Name: "o", Model: Open, Rate: 500, Duration: 100 * time.Millisecond, Requests: get("/")},
		Group{Name: "r", Model: Ramp, Smooth: true, Stages: []Stage{{Duration: 100 * time.Millisecond, Users: 5}}, Requests: get("/")},
		Group{Name: "b", Model: Burst, Burst: 5, Requests: get("/")})
	srv.CloseClientConnections() // the server's side of our connections
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Run, %d before", n, before)
	}
}
