package downstream

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func startServer(t *testing.T, delay time.Duration) *Server {
	t.Helper()
	s, err := Start(t.Context(), "127.0.0.1:0", delay)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func TestBody(t *testing.T) {
	tests := []struct {
		id     int64
		want   string
		reason string
	}{
		// 42 * 2654435761 = 111486301962, mod 1000 = 962
		{42, `{"customerId":42,"tier":"gold","score":962}`, "the documented shape, score from the hash"},
		// 43 * 2654435761 = 114140737723, mod 1000 = 723
		{43, `{"customerId":43,"tier":"gold","score":723}`, "neighbouring ids get different scores"},
		{0, `{"customerId":0,"tier":"gold","score":0}`, "zero id is valid"},
		// uint64(-1) * 2654435761 wraps to 2^64 - 2654435761 = 18446744071055115855, mod 1000 = 855
		{-1, `{"customerId":-1,"tier":"gold","score":855}`, "a negative id still gets a score in 0..999"},
	}
	for _, tt := range tests {
		if got := string(appendBody(nil, tt.id)); got != tt.want {
			t.Errorf("appendBody(%d) = %s, want %s (%s)", tt.id, got, tt.want, tt.reason)
		}
	}
}

func TestEndpoints(t *testing.T) {
	const delay = 50 * time.Millisecond
	s := startServer(t, delay)
	tests := []struct {
		method, path string
		status       int
		body         string
		delayed      bool
		reason       string
	}{
		{"GET", "/enrich/42", 200, `{"customerId":42,"tier":"gold","score":962}`, true, "the call the targets make"},
		{"GET", "/enrich/42?trace=1", 200, `{"customerId":42,"tier":"gold","score":962}`, true, "a query string is ignored"},
		{"HEAD", "/enrich/42", 200, "", true, "HEAD waits like GET but sends no body"},
		{"GET", "/enrich/abc", 400, `{"error":"id must be an integer, as in /enrich/42"}`, false, "a bad id is refused at once"},
		{"GET", "/enrich/1/2", 400, `{"error":"id must be an integer, as in /enrich/42"}`, false, "an extra path segment is not an id"},
		{"GET", "/enrich/", 404, errNotFoundText, false, "an empty id is no route"},
		{"POST", "/enrich/42", 405, `{"error":"method not allowed: use GET"}`, false, "only GET and HEAD are served"},
		{"GET", "/health", 200, `{"status":"UP"}`, false, "readiness answers without the delay"},
		{"GET", "/nope", 404, errNotFoundText, false, "unknown paths name the real ones"},
	}
	for _, tt := range tests {
		req, err := http.NewRequestWithContext(t.Context(), tt.method, s.URL()+tt.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v (%s)", tt.method, tt.path, err, tt.reason)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(t0)
		if err != nil {
			t.Fatalf("%s %s: body: %v", tt.method, tt.path, err)
		}
		if resp.StatusCode != tt.status || string(body) != tt.body {
			t.Errorf("%s %s = %d %s, want %d %s (%s)", tt.method, tt.path, resp.StatusCode, body, tt.status, tt.body, tt.reason)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q, want application/json", tt.method, tt.path, ct)
		}
		if tt.delayed && took < delay {
			t.Errorf("%s %s answered in %v, before the %v delay (%s)", tt.method, tt.path, took, delay, tt.reason)
		}
		if !tt.delayed && took >= delay {
			t.Errorf("%s %s took %v, want an answer before the %v delay (%s)", tt.method, tt.path, took, delay, tt.reason)
		}
	}
	st := s.Stats()
	if st.Requests != uint64(len(tests)) || st.Enriched != 3 || st.MaxInFlight != 1 || st.InFlight != 0 {
		t.Errorf("stats %+v, want %d requests, 3 enriched, max in flight 1 (sequential calls), none in flight", st, len(tests))
	}
}

const errNotFoundText = `{"error":"not found: the service has GET /enrich/{id} and GET /health"}`

// TestWire sends raw bytes, as the targets' various HTTP clients would, and
// checks the answers and whether the connection stays open.
func TestWire(t *testing.T) {
	s := startServer(t, 0)
	tests := []struct {
		name   string
		send   string
		status []int // answers expected, in order
		conn   string
		closed bool // the server closes the connection after the answers
		reason string
	}{
		{"pipelined", "GET /enrich/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /enrich/2 HTTP/1.1\r\nHost: x\r\n\r\n",
			[]int{200, 200}, "", false, "pipelined requests are answered in order"},
		{"http10", "GET /health HTTP/1.0\r\n\r\n",
			[]int{200}, "close", true, "HTTP/1.0 closes by default"},
		{"http10-keepalive", "GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /health HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
			[]int{200, 200}, "keep-alive", false, "an HTTP/1.0 keep-alive request is honoured and acknowledged"},
		{"close", "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n",
			[]int{200}, "close", true, "Connection: close is honoured"},
		{"body", "GET /health HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET /health HTTP/1.1\r\n\r\n",
			[]int{200, 200}, "", false, "a GET body is skipped, not parsed as the next request"},
		{"h2c", "GET /health HTTP/1.1\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA\r\n\r\n",
			[]int{200}, "", false, "the JDK client's h2c offer is declined by answering in HTTP/1.1"},
		{"leading-crlf", "\r\nGET /health HTTP/1.1\r\n\r\n",
			[]int{200}, "", false, "RFC 9112: an empty line before the request is ignored"},
		{"chunked", "POST /enrich/1 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
			[]int{501}, "close", true, "chunked bodies are refused, never misparsed"},
		{"http2-preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
			[]int{505}, "close", true, "prior-knowledge HTTP/2 is refused clearly"},
		{"garbage", "hello\r\n\r\n",
			[]int{400}, "close", true, "a malformed request line closes the connection"},
		{"no-colon", "GET /health HTTP/1.1\r\nbroken header\r\n\r\n",
			[]int{400}, "close", true, "a malformed header closes the connection"},
		{"long-header", "GET /health HTTP/1.1\r\nX-Big: " + strings.Repeat("a", 5000) + "\r\n\r\n",
			[]int{431}, "close", true, "a header line beyond the read buffer is refused"},
		{"huge-body", "GET /health HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n",
			[]int{413}, "close", true, "a body over 1 MiB is refused, not read"},
		{"two-lengths", "GET /health HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
			[]int{400}, "close", true, "conflicting lengths are a smuggling risk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", s.URL()[len("http://"):])
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := io.WriteString(c, tt.send); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(c)
			for i, want := range tt.status {
				resp, err := http.ReadResponse(r, nil)
				if err != nil {
					t.Fatalf("answer %d: %v (%s)", i+1, err, tt.reason)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				// ReadResponse turns "Connection: close" into resp.Close.
				conn := resp.Header.Get("Connection")
				if resp.Close {
					conn = "close"
				}
				if resp.StatusCode != want || conn != tt.conn {
					t.Errorf("answer %d: %d Connection %q, want %d %q (%s)", i+1, resp.StatusCode, conn, want, tt.conn, tt.reason)
				}
			}
			// A closed connection reads EOF at once; an open one times out.
			c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			_, err = r.ReadByte()
			var nerr net.Error
			open := errors.As(err, &nerr) && nerr.Timeout()
			if open == tt.closed {
				t.Errorf("after the answers: read error %v, want closed=%v (%s)", err, tt.closed, tt.reason)
			}
		})
	}
}

func TestKeepAliveReusesOneConnection(t *testing.T) {
	s := startServer(t, time.Millisecond)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	for i := range 20 {
		resp, err := client.Get(s.URL() + "/enrich/" + strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if st := s.Stats(); st.Conns != 1 || st.Enriched != 20 {
		t.Errorf("stats %+v, want 20 enriched over 1 connection", st)
	}
}

func TestZeroDelayAnswersAtOnce(t *testing.T) {
	s := startServer(t, 0)
	t0 := time.Now()
	resp, err := http.Get(s.URL() + "/enrich/42")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if took := time.Since(t0); resp.StatusCode != 200 || took > time.Second {
		t.Errorf("delay 0: status %d after %v, want 200 at once", resp.StatusCode, took)
	}
}

// TestCloseEndsWaitingRequests checks that Close does not sit out the delay
// of requests in flight, and that it can be called twice.
func TestCloseEndsWaitingRequests(t *testing.T) {
	s, err := Start(t.Context(), "127.0.0.1:0", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		resp, err := http.Get(s.URL() + "/enrich/1")
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	waitFor(t, "a request in flight", func() bool { return s.Stats().InFlight == 1 })
	t0 := time.Now()
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if took := time.Since(t0); took > time.Second {
		t.Errorf("close took %v with a request waiting an hour, want it to end the wait", took)
	}
	if err := <-errc; err == nil {
		t.Error("the waiting request got an answer, want the connection closed without one")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second close: %v, want nil", err)
	}
	if st := s.Stats(); st.InFlight != 0 || st.Enriched != 0 || st.MaxInFlight != 1 {
		t.Errorf("stats after close %+v, want none in flight, none enriched, max 1", st)
	}
}

func TestContextCancelStopsServer(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s, err := Start(ctx, "127.0.0.1:0", time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	addr := s.URL()[len("http://"):]
	cancel()
	waitFor(t, "the listener to close after cancel", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	if err := s.Close(); err != nil {
		t.Errorf("close after cancel: %v, want nil", err)
	}
}

func TestStartErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		ctx    context.Context
		addr   string
		delay  time.Duration
		want   string
		reason string
	}{
		{t.Context(), "127.0.0.1:0", -time.Second, "use 0 or a positive duration", "a negative delay is a mistake, not zero"},
		{t.Context(), busy.Addr().String(), time.Millisecond, "choose a free port", "a taken port says how to fix it"},
		{cancelled, "127.0.0.1:0", time.Millisecond, "not started", "a cancelled context starts nothing"},
	}
	for _, tt := range tests {
		s, err := Start(tt.ctx, tt.addr, tt.delay)
		if err == nil {
			s.Close()
			t.Errorf("Start(%s, %v) succeeded, want an error (%s)", tt.addr, tt.delay, tt.reason)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Start(%s, %v) = %v, want it to mention %q (%s)", tt.addr, tt.delay, err, tt.want, tt.reason)
		}
	}
}

func TestURLAndPort(t *testing.T) {
	s := startServer(t, 0)
	if want := "http://127.0.0.1:" + strconv.Itoa(s.Port()); s.URL() != want || s.Port() == 0 {
		t.Errorf("URL %q port %d, want %q and a real port", s.URL(), s.Port(), want)
	}
	if s.Delay() != 0 {
		t.Errorf("Delay() = %v, want 0", s.Delay())
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
