package downstream

// The 10k test runs the server in a child process (this test binary started
// again with helperEnv set): the hard open-file limit on CI hosts is often
// 20,000, and 10,000 client sockets plus 10,000 server sockets would not fit
// in one process. The split also gives clean numbers for the server alone
// (goroutines, RSS) that the report quotes.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/threadlab/threadlab/internal/testenv"
)

const (
	helperEnv      = "THREADLAB_DOWNSTREAM_HELPER" // wait strategy: "timer" or "sleep"
	helperDelayEnv = "THREADLAB_DOWNSTREAM_HELPER_DELAY"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(serveHelper(mode, os.Getenv(helperDelayEnv)))
	}
	os.Exit(m.Run())
}

// helperReport is what the child process says about itself on request.
type helperReport struct {
	Stats          Stats
	PeakGoroutines int
	PeakRSSKB      int           // VmHWM: the resident high-water mark of the server process
	CPU            time.Duration // user + system CPU time of the server process so far
}

// cpuTime is the user + system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serveHelper is the child process: it serves, prints its port, answers each
// "report" line on stdin with a JSON helperReport, and exits on EOF.
func serveHelper(mode, delayText string) int {
	wait := map[string]waitFunc{"timer": waitTimer, "sleep": waitSleep}[mode]
	delay, err := time.ParseDuration(delayText)
	if wait == nil || err != nil {
		fmt.Fprintf(os.Stderr, "helper: bad mode %q or delay %q\n", mode, delayText)
		return 2
	}
	if err := raiseNoFile(); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	s, err := start(context.Background(), "127.0.0.1:0", delay, wait)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	defer s.Close()
	var peak atomic.Int64
	go func() {
		for {
			if n := int64(runtime.NumGoroutine()); n > peak.Load() {
				peak.Store(n)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	fmt.Printf("port %d\n", s.Port())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		rep := helperReport{Stats: s.Stats(), PeakGoroutines: int(peak.Load()), PeakRSSKB: vmHWM(), CPU: cpuTime()}
		b, _ := json.Marshal(rep)
		fmt.Printf("%s\n", b)
	}
	return 0
}

// vmHWM reads the peak resident set size of this process in KiB, 0 if unknown.
func vmHWM() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// raiseNoFile lifts the soft open-file limit to the hard one. Go already does
// this at start-up on Linux; doing it here keeps the test honest on runtimes
// or hosts where it did not happen.
func raiseNoFile() error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("read RLIMIT_NOFILE: %w", err)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("raise RLIMIT_NOFILE to %d: %w", lim.Max, err)
	}
	return nil
}

// needNoFile fails the test when the open-file limit cannot hold n sockets.
func needNoFile(tb testing.TB, n int) {
	tb.Helper()
	if err := raiseNoFile(); err != nil {
		tb.Fatal(err)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Fatal(err)
	}
	if lim.Cur < uint64(n) {
		tb.Fatalf("open-file limit %d is below the %d sockets this test needs: raise it with `ulimit -Hn %d` (as root) before `go test`", lim.Cur, n, n)
	}
}

// helper is a running child server process.
type helper struct {
	addr string
	in   io.WriteCloser
	out  *bufio.Scanner
}

func startHelper(tb testing.TB, mode string, delay time.Duration) *helper {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperDelayEnv+"="+delay.String())
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start server process: %v", err)
	}
	tb.Cleanup(func() {
		in.Close() // EOF tells the child to exit
		if err := cmd.Wait(); err != nil {
			tb.Errorf("server process: %v", err)
		}
	})
	out := bufio.NewScanner(outPipe)
	out.Buffer(nil, 1<<20)
	if !out.Scan() {
		tb.Fatalf("server process printed no port: %v", out.Err())
	}
	port, ok := strings.CutPrefix(out.Text(), "port ")
	if !ok {
		tb.Fatalf("server process said %q, want \"port N\"", out.Text())
	}
	return &helper{addr: net.JoinHostPort("127.0.0.1", port), in: in, out: out}
}

func (h *helper) report(tb testing.TB) helperReport {
	tb.Helper()
	if _, err := io.WriteString(h.in, "report\n"); err != nil {
		tb.Fatal(err)
	}
	if !h.out.Scan() {
		tb.Fatalf("server process gave no report: %v", h.out.Err())
	}
	var r helperReport
	if err := json.Unmarshal(h.out.Bytes(), &r); err != nil {
		tb.Fatalf("server report %q: %v", h.out.Text(), err)
	}
	return r
}

// client is one keep-alive connection with its pre-built request, so the
// measured round is only write, wait, read.
type client struct {
	conn net.Conn
	r    *bufio.Reader
	id   int
	req  []byte
}

// dial opens n keep-alive connections, a few at a time so the burst of SYNs
// stays inside the listen backlog: the test is about concurrent requests,
// not about how the kernel handles an accept-queue overflow.
func dial(tb testing.TB, addr string, n int) []*client {
	tb.Helper()
	clients := make([]*client, n)
	errs := make(chan error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				c, err := net.DialTimeout("tcp", addr, 10*time.Second)
				if err != nil {
					errs <- fmt.Errorf("dial connection %d: %w", i, err)
					return
				}
				clients[i] = &client{conn: c, r: bufio.NewReaderSize(c, 512), id: i,
					req: fmt.Appendf(nil, "GET /enrich/%d HTTP/1.1\r\nHost: downstream\r\n\r\n", i)}
			}
		})
	}
	wg.Wait()
	close(errs)
	tb.Cleanup(func() {
		for _, c := range clients {
			if c != nil {
				c.conn.Close()
			}
		}
	})
	if err := <-errs; err != nil {
		tb.Fatal(err)
	}
	return clients
}

// round is the outcome of one request on every connection at once.
type round struct {
	wall     time.Duration   // release of the first request to the last response
	latency  []time.Duration // per request, write to last body byte
	failed   int
	firstErr error
}

// fire releases one request on every connection at the same moment.
func fire(clients []*client) round {
	gate := make(chan struct{})
	res := round{latency: make([]time.Duration, len(clients))}
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			<-gate
			t0 := time.Now()
			errs[i] = c.do()
			res.latency[i] = time.Since(t0)
		})
	}
	runtime.Gosched()
	t0 := time.Now()
	close(gate)
	wg.Wait()
	res.wall = time.Since(t0)
	for _, err := range errs {
		if err != nil {
			res.failed++
			if res.firstErr == nil {
				res.firstErr = err
			}
		}
	}
	return res
}

// do sends the request and checks the answer is the one for this id. It
// parses the answer by hand: http.ReadResponse would double the client's CPU,
// and on 2 cores the client's CPU is time the test charges to the server.
func (c *client) do() error {
	c.conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.conn.Write(c.req); err != nil {
		return fmt.Errorf("id %d: write: %w", c.id, err)
	}
	status, err := c.r.ReadSlice('\n')
	if err != nil {
		return fmt.Errorf("id %d: read status: %w", c.id, err)
	}
	if !bytes.HasPrefix(status, []byte("HTTP/1.1 200 ")) {
		return fmt.Errorf("id %d: status line %q, want 200", c.id, status)
	}
	length := -1
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return fmt.Errorf("id %d: read header: %w", c.id, err)
		}
		if len(line) <= 2 {
			break
		}
		if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
			length, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	if length < 0 || length > 256 {
		return fmt.Errorf("id %d: Content-Length %d, want a small body", c.id, length)
	}
	var body [256]byte
	if _, err := io.ReadFull(c.r, body[:length]); err != nil {
		return fmt.Errorf("id %d: body: %w", c.id, err)
	}
	if want := appendBody(nil, int64(c.id)); !bytes.Equal(body[:length], want) {
		return fmt.Errorf("id %d: body %s, want %s", c.id, body[:length], want)
	}
	return nil
}

// TestTenThousandConcurrentKeepAlive is the "never the bottleneck" proof: 10k
// connections each send one request at the same moment and every answer
// arrives within the delay plus a margin that is small next to what one more
// delay per queued batch would cost. The first round warms up (connection
// goroutines grow their stacks); then up to five rounds are measured and the
// best one must meet the bound: noise from other processes only ever adds
// time, so the best round is the fair estimate of what the service can do.
func TestTenThousandConcurrentKeepAlive(t *testing.T) {
	const (
		n     = 10_000
		delay = 100 * time.Millisecond
		// The margin is the CPU time of pushing 10k requests and answers
		// through 2 shared cores, client and server together (about 200 ms
		// idle, measured). A server that made requests wait for each other
		// would instead take a multiple of the delay: one with 200 workers,
		// Tomcat's default, would need 10000/200 x 100 ms = 5 s.
		margin = 500 * time.Millisecond
		tries  = 5
	)
	needNoFile(t, n+100)
	h := startHelper(t, "timer", delay)
	clients := dial(t, h.addr, n)
	// The lag is probed before and after the rounds, not during them:
	// 10k requests on 2 cores are load of their own.
	before := testenv.LagFor(t, 300*time.Millisecond)

	rounds, best := 0, time.Duration(1<<62)
	for r := 0; r <= tries && (r < 2 || best > delay+margin); r++ {
		srv0, cli0 := h.report(t).CPU, cpuTime()
		res := fire(clients)
		srvCPU, cliCPU := h.report(t).CPU-srv0, cpuTime()-cli0
		rounds++
		if res.failed > 0 {
			t.Fatalf("round %d: %d of %d requests failed, first: %v", r, res.failed, n, res.firstErr)
		}
		slices.Sort(res.latency)
		t.Logf("round %d: wall %v for %d requests with delay %v; latency min %v p50 %v p99 %v max %v; CPU server %v (%v/request) client %v",
			r, res.wall.Round(time.Millisecond), n, delay, res.latency[0].Round(time.Millisecond),
			res.latency[n/2].Round(time.Millisecond), res.latency[n*99/100].Round(time.Millisecond),
			res.latency[n-1].Round(time.Millisecond), srvCPU.Round(time.Millisecond), srvCPU/n, cliCPU.Round(time.Millisecond))
		if res.latency[0] < delay {
			t.Errorf("round %d: fastest answer took %v, shorter than the %v delay", r, res.latency[0], delay)
		}
		if r > 0 {
			best = min(best, res.wall)
		}
	}
	after := testenv.LagFor(t, 300*time.Millisecond)
	rep := h.report(t)
	t.Logf("server: %+v, peak goroutines %d, peak RSS %d MiB", rep.Stats, rep.PeakGoroutines, rep.PeakRSSKB>>10)
	want := Stats{Requests: uint64(rounds * n), Enriched: uint64(rounds * n), InFlight: 0, MaxInFlight: rep.Stats.MaxInFlight, Conns: n, AcceptErrors: 0}
	if rep.Stats != want {
		t.Errorf("server stats %+v, want %+v: every request answered, every connection reused", rep.Stats, want)
	}
	if raceEnabled { // under -race timings measure the detector
		return
	}
	// At any load (load 13-15 on 2 cores: best round 1.3 s, 4,013 waiting
	// at once): half the time and five times the overlap of a server with
	// a 200-worker pool, which needs 10000/200 x 100 ms = 5 s and never
	// has more than 200 waiting.
	if best > 2500*time.Millisecond {
		t.Errorf("%d concurrent requests took at best %v in %d rounds, want under 2.5 s even on a busy host (a 200-worker pool takes 5 s): the service is a bottleneck", n, best, rounds)
	}
	if rep.Stats.MaxInFlight < 1000 {
		t.Errorf("at most %d requests waited at once, want at least 1000 even on a busy host (a 200-worker pool shows 200): requests were not concurrent", rep.Stats.MaxInFlight)
	}
	unchecked := fmt.Sprintf("the best round within delay %v + margin %v and half of %d waiting at once", delay, margin, n)
	before.SkipIfBusy(t, 150*time.Microsecond, unchecked+" (lag before the rounds)")
	after.SkipIfBusy(t, 150*time.Microsecond, unchecked+" (lag after the rounds)")
	if best > delay+margin {
		t.Errorf("%d concurrent requests took at best %v in %d rounds, want at most delay %v + margin %v: the service is a bottleneck (or the host was busy: see the CPU lines)",
			n, best, rounds, delay, margin)
	}
	// All n wait together only if the last arrives before the first is
	// answered, which the CPU cost of sending 10k requests on 2 cores does
	// not always allow; half of them proves the waits overlap (a server
	// with a 200-worker pool would show 200).
	if rep.Stats.MaxInFlight < n/2 {
		t.Errorf("at most %d requests waited at once, want at least %d of %d: requests were not concurrent", rep.Stats.MaxInFlight, n/2, n)
	}
}

// BenchmarkConcurrent10k compares the two ways to wait at 10k concurrent
// keep-alive requests: one op is one round of 10k. Metrics: overhead-ms is
// wall time beyond the delay; server-cpu-us/req is the server's CPU per
// request; server-goroutines and server-MiB are the server process's peaks.
func BenchmarkConcurrent10k(b *testing.B) {
	const n, delay = 10_000, 100 * time.Millisecond
	for _, mode := range []string{"timer", "sleep"} {
		b.Run(mode, func(b *testing.B) {
			needNoFile(b, n+100)
			h := startHelper(b, mode, delay)
			clients := dial(b, h.addr, n)
			cpu0 := h.report(b).CPU
			b.ResetTimer()
			var over time.Duration
			for b.Loop() {
				res := fire(clients)
				if res.failed > 0 {
					b.Fatalf("%d of %d requests failed, first: %v", res.failed, n, res.firstErr)
				}
				over += res.wall - delay
			}
			b.StopTimer()
			rep := h.report(b)
			b.ReportMetric(float64(over.Milliseconds())/float64(b.N), "overhead-ms")
			b.ReportMetric(float64((rep.CPU-cpu0).Microseconds())/float64(b.N*n), "server-cpu-us/req")
			b.ReportMetric(float64(rep.PeakGoroutines), "server-goroutines")
			b.ReportMetric(float64(rep.PeakRSSKB)/1024, "server-MiB")
		})
	}
}
