// Package downstream is the slow dependency the Spring targets call from
// /order-summary: GET /enrich/{id} answers after a fixed delay with a small
// JSON document, as seed 001's blocking HTTP call to a ~100 ms service does.
//
// The service exists to make the target wait, so it must never be what limits
// a measurement, and on a small shared machine every CPU-second it spends is
// taken from the target being measured. It therefore speaks a deliberately
// small HTTP/1.1 (see http1.go) on plain goroutine-per-connection code: a
// waiting request costs one parked goroutine and one runtime timer, no OS
// thread, and about a third of the CPU net/http spends per request
// (net/http starts a background-read goroutine and allocates a Request,
// Header map and context for every request). The package tests prove it at
// 10,000 concurrent keep-alive requests.
//
// Data flow: the pipeline (or `threadlab downstream`) calls Start, hands URL()
// to the target as a Spring property, and reads Stats() after a trial to show
// how many calls the target made and how many overlapped.
package downstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Stats counts what the service did since Start. MaxInFlight is the evidence
// that the service was not the bottleneck: with N clients all waiting on it,
// it reaches N.
type Stats struct {
	Requests     uint64 // answers sent, /enrich and /health, including errors
	Enriched     uint64 // /enrich answers sent after the full delay
	InFlight     int64  // /enrich requests waiting right now
	MaxInFlight  int64  // most /enrich requests waiting at the same time
	Conns        uint64 // TCP connections accepted; stays at the client's pool size when keep-alive works
	AcceptErrors uint64 // failed accepts, almost always the open-file limit: raise `ulimit -n`
}

// Server is a running downstream service. Its zero value is not usable; call
// Start.
type Server struct {
	delay time.Duration
	wait  waitFunc
	ln    net.Listener

	requests     atomic.Uint64
	enriched     atomic.Uint64
	inFlight     atomic.Int64
	maxInFlight  atomic.Int64
	conns        atomic.Uint64
	acceptErrors atomic.Uint64

	done      chan struct{} // closed by Close: waiting requests and the accept loop stop
	mu        sync.Mutex
	open      map[net.Conn]struct{} // live connections, closed by Close
	handlers  sync.WaitGroup        // the accept loop and every connection goroutine
	stopWatch func() bool           // detaches the ctx watcher
	closeOnce sync.Once
}

// waitFunc blocks for d, or until done is closed; it reports whether the full
// delay passed. It is a variable only so the benchmark can compare waiting
// strategies on the same server.
type waitFunc func(done <-chan struct{}, d time.Duration) bool

// waitTimer parks the goroutine on a runtime timer and gives up as soon as
// the server closes, so Close does not sit out thousands of delays.
func waitTimer(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}

// waitSleep is the naive strategy, kept for the benchmark that shows it costs
// about the same at 10k requests; it cannot be interrupted by Close.
func waitSleep(_ <-chan struct{}, d time.Duration) bool {
	time.Sleep(d)
	return true
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves until
// Close is called or ctx is done, whichever comes first, so a pipeline that
// cancels its context never leaks the service.
//
// The listen backlog is the kernel's maximum: Go's listener asks for
// net.core.somaxconn, which is also the ceiling the kernel enforces, so a
// connection burst is limited by the host setting the host check reports,
// not by this package.
func Start(ctx context.Context, addr string, delay time.Duration) (*Server, error) {
	return start(ctx, addr, delay, waitTimer)
}

func start(ctx context.Context, addr string, delay time.Duration, wait waitFunc) (*Server, error) {
	if delay < 0 {
		return nil, fmt.Errorf("downstream delay %v is negative: use 0 or a positive duration such as 100ms", delay)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("downstream service not started: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("downstream service: listen on %s: %w (choose a free port, or port 0 for any free one)", addr, err)
	}
	s := &Server{delay: delay, wait: wait, ln: ln, done: make(chan struct{}), open: map[net.Conn]struct{}{}}
	s.handlers.Add(1)
	go s.accept()
	s.stopWatch = context.AfterFunc(ctx, s.shutdown)
	return s, nil
}

// accept runs until the listener is closed. Accept errors other than the
// close are retried with a growing pause, as net/http does: running out of
// file descriptors for a moment must not stop the service.
func (s *Server) accept() {
	defer s.handlers.Done()
	var pause time.Duration
	for {
		c, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.done:
				return
			default:
			}
			s.acceptErrors.Add(1)
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			select {
			case <-time.After(pause):
			case <-s.done:
				return
			}
			continue
		}
		pause = 0
		s.conns.Add(1)
		s.mu.Lock()
		select {
		case <-s.done: // closed between Accept and here
			s.mu.Unlock()
			c.Close()
			return
		default:
		}
		s.open[c] = struct{}{}
		s.handlers.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

// serve answers requests on one connection in order until the client closes
// it, asks for close, or sends something this server does not speak.
func (s *Server) serve(c net.Conn) {
	defer func() {
		s.mu.Lock()
		delete(s.open, c)
		s.mu.Unlock()
		c.Close()
		s.handlers.Done()
	}()
	r := bufio.NewReaderSize(c, 4096)
	var out, path []byte
	for {
		req, err := readRequest(r, path)
		if err != nil {
			var perr *protocolError
			if errors.As(err, &perr) {
				s.requests.Add(1)
				c.Write(appendResponse(out[:0], perr.status, perr.msg, request{close: true}))
			}
			return
		}
		path = req.path
		status, body, ok := s.route(req)
		if !ok {
			return // server closed while the request waited
		}
		out = appendResponse(out[:0], status, body, req)
		// Counted before the write so a client that has its answer always
		// sees it counted in Stats.
		s.requests.Add(1)
		if _, err := c.Write(out); err != nil {
			return
		}
		if req.close {
			return
		}
	}
}

// route picks the answer for a parsed request; ok is false when the server
// closed during the delay and nothing should be written.
func (s *Server) route(req request) (status int, body []byte, ok bool) {
	path := req.path
	switch {
	case string(path) == "/health":
		if !req.get {
			return 405, errMethod, true
		}
		return 200, bodyHealth, true
	case len(path) > len("/enrich/") && string(path[:len("/enrich/")]) == "/enrich/":
		if !req.get {
			return 405, errMethod, true
		}
		id, err := strconv.ParseInt(string(path[len("/enrich/"):]), 10, 64)
		if err != nil {
			return 400, errID, true
		}
		if !s.enrich() {
			return 0, nil, false
		}
		return 200, appendBody(make([]byte, 0, 64), id), true
	default:
		return 404, errNotFound, true
	}
}

// enrich waits out the delay and keeps the in-flight counters.
func (s *Server) enrich() bool {
	n := s.inFlight.Add(1)
	for {
		m := s.maxInFlight.Load()
		if n <= m || s.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	full := s.delay == 0 || s.wait(s.done, s.delay)
	s.inFlight.Add(-1)
	if full {
		s.enriched.Add(1)
	}
	return full
}

var (
	bodyHealth  = []byte(`{"status":"UP"}`)
	errID       = []byte(`{"error":"id must be an integer, as in /enrich/42"}`)
	errMethod   = []byte(`{"error":"method not allowed: use GET"}`)
	errNotFound = []byte(`{"error":"not found: the service has GET /enrich/{id} and GET /health"}`)
)

// appendBody writes {"customerId":id,"tier":"gold","score":N} without
// reflection; the body is on the hot path of every target request.
func appendBody(b []byte, id int64) []byte {
	b = append(b, `{"customerId":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"tier":"gold","score":`...)
	b = strconv.AppendUint(b, score(id), 10)
	return append(b, '}')
}

// score maps an id to 0..999 with a multiplicative hash, so neighbouring ids
// get different scores but every run gets the same ones.
func score(id int64) uint64 {
	return (uint64(id) * 2654435761) % 1000
}

// URL is the base URL targets call, without a trailing slash. An unspecified
// listen address (":0") is reported as 127.0.0.1 so the URL is dialable.
func (s *Server) URL() string {
	a := s.ln.Addr().(*net.TCPAddr)
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(a.Port))
}

// Port is the TCP port the service listens on.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Delay is the delay every /enrich request waits.
func (s *Server) Delay() time.Duration { return s.delay }

// Stats is a snapshot of the counters; it may be called at any time,
// including after Close.
func (s *Server) Stats() Stats {
	return Stats{
		Requests:     s.requests.Load(),
		Enriched:     s.enriched.Load(),
		InFlight:     s.inFlight.Load(),
		MaxInFlight:  s.maxInFlight.Load(),
		Conns:        s.conns.Load(),
		AcceptErrors: s.acceptErrors.Load(),
	}
}

// Close stops listening, ends waiting requests without an answer and closes
// every connection. It returns once every goroutine of the server has
// exited, so a caller can check for leaks, and is safe to call more than
// once. The error is always nil; it is there so a Server is an io.Closer.
func (s *Server) Close() error {
	s.stopWatch()
	s.shutdown()
	return nil
}

// shutdown is Close without detaching the ctx watcher, which calls it.
func (s *Server) shutdown() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		close(s.done)
		for c := range s.open {
			c.Close()
		}
		s.mu.Unlock()
		s.ln.Close()
	})
	s.handlers.Wait()
}
