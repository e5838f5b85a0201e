package load

// Simultaneous connects (seed 002's fixed-rate bursts): a group without
// keep-alive must present all of its connects to the server at once, not
// 256 at a time. Observed from the server's side: the kernel's accept queue
// of a listener that does not accept (TCP_INFO of a LISTEN socket reports
// the queue length in tcpi_unacked), and a tiny backlog that drops every
// SYN past it.

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// backlogListener listens on a loopback port with exactly this backlog
// (net.Listen always asks for somaxconn).
func backlogListener(t *testing.T, backlog int) *net.TCPListener {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	if err := unix.Listen(fd, backlog); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "listener")
	defer f.Close() // FileListener holds its own duplicate
	l, err := net.FileListener(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.(*net.TCPListener)
}

// acceptQueue is the number of connections the kernel has completed and
// queued on l that nobody has accepted yet (ss -lnt's Recv-Q).
func acceptQueue(t *testing.T, l *net.TCPListener) int {
	t.Helper()
	rc, err := l.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info *unix.TCPInfo
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		info, gerr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatalf("TCP_INFO of the listener: %v", gerr)
	}
	return int(info.Unacked)
}

func needDescriptors(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Max < n {
		t.Skipf("needs %d file descriptors, the hard limit is %d (ulimit -Hn)", n, lim.Max)
	}
}

// TestBurstConnectsTogether is issue 12's load test: 2,000 users without
// keep-alive are released together, and the server, which accepts nothing
// until then, sees all 2,000 completed connects waiting in its accept queue
// at the same moment. Then it serves them, and every request succeeds.
func TestBurstConnectsTogether(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 4,000 sockets; skipped with -short")
	}
	const n = 2000
	needDescriptors(t, 2*n+200)
	if data, err := os.ReadFile("/proc/sys/net/core/somaxconn"); err == nil {
		if max, _ := strconv.Atoi(strings.TrimSpace(string(data))); max < n {
			t.Skipf("net.core.somaxconn is %d: the accept queue cannot hold %d", max, n)
		}
	}
	l := backlogListener(t, n+100)
	addr := l.Addr().String()

	peak := make(chan int, 1)
	go func() {
		// Wait (up to 60 s on a loaded box) until the queue holds every
		// connect, then serve: nothing is answered before all are in.
		most := 0
		for deadline := time.Now().Add(60 * time.Second); most < n && time.Now().Before(deadline); {
			most = max(most, acceptQueue(t, l))
			time.Sleep(5 * time.Millisecond)
		}
		peak <- most
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serveOnce(c)
		}
	}()

	res := run(t, "http://"+addr, Group{Model: Burst, Burst: n, NoKeepAlive: true, Requests: get("/"),
		ConnectTimeout: 90 * time.Second, Timeout: 90 * time.Second})
	g := res.Groups[0]
	if most := <-peak; most != n {
		t.Errorf("the accept queue held at most %d connects at once, want all %d", most, n)
	}
	if g.Requests != n || g.Errors != 0 {
		t.Errorf("requests=%d errors=%d %v, want %d answered", g.Requests, g.Errors, g.ErrorsByClass, n)
	}
}

// serveOnce answers one request on c and closes it.
func serveOnce(c net.Conn) {
	defer c.Close()
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	io.Copy(io.Discard, req.Body)
	io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
}

// TestDialCap: against a listener with a backlog of 8 that never accepts,
// every SYN past the queue is dropped, so a connect that gets no slot in the
// queue fails only at the connect time-out (2 s here). With every connect
// presented at once, all 2,000 requests fail after about one time-out. With
// connects capped, the later ones start only when earlier ones have failed:
// with a cap of 1,000 the second thousand cannot fail before two time-outs.
func TestDialCap(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 2,000 sockets; skipped with -short")
	}
	const n = 2000
	const connect = 2 * time.Second
	needDescriptors(t, n+200)
	rows := []struct {
		name     string
		maxDials int
		waits    bool // the slowest request waited for a connect slot
		why      string
	}{
		{"default without keep-alive", 0, false, "each request connects: all 2,000 connects at once"},
		{"explicit cap", 1000, true, "MaxDials 1000: the second thousand waits for the first to fail"},
		{"cap above the group", 5000, false, "a cap above the connections is no cap"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			l := backlogListener(t, 8)
			g := run(t, "http://"+l.Addr().String(), Group{Model: Burst, Burst: n, NoKeepAlive: true,
				MaxDials: row.maxDials, Requests: get("/"), ConnectTimeout: connect, Timeout: connect}).Groups[0]
			if g.Requests != n || g.Errors != n {
				t.Fatalf("requests=%d errors=%d, want all %d to fail (nothing is accepted)", g.Requests, g.Errors, n)
			}
			// A request that waited for a slot cannot fail before two
			// time-outs (a hard bound); one that did not fails after one,
			// plus scheduling delay: 0.75 of a time-out (1.5 s) of slack
			// for a loaded machine.
			slowest := time.Duration(g.MaxMs() * float64(time.Millisecond))
			switch {
			case row.waits && slowest < 2*connect:
				t.Errorf("slowest failure after %v, want at least %v: a capped connect waits for a slot (%s)", slowest, 2*connect, row.why)
			case !row.waits && slowest >= connect*7/4:
				t.Errorf("slowest failure after %v, want about one connect time-out (%v): no connect waits for a slot (%s)", slowest, connect, row.why)
			}
			t.Logf("slowest of %d failures after %v", g.Errors, slowest)
		})
	}
}

func TestDialCapDefaults(t *testing.T) {
	rows := []struct {
		g    Group
		want int
		why  string
	}{
		{Group{Model: Closed, Users: 20000, NoKeepAlive: true}, 20000, "seed 002's users connect together"},
		{Group{Model: Burst, Burst: 2000, NoKeepAlive: true}, 2000, "a burst without keep-alive presents every connect"},
		{Group{Model: Closed, Users: 2000}, defaultMaxDials, "keep-alive connections are set up once, gently"},
		{Group{Model: Burst, Burst: 600}, defaultMaxDials, "a keep-alive burst connects before its release"},
		{Group{Model: Closed, Users: 10}, 10, "never more slots than connections"},
		{Group{Model: Open, MaxInFlight: 5000, NoKeepAlive: true}, 5000, "open: one connect per request in flight"},
		{Group{Model: Closed, Users: 2000, MaxDials: 64}, 64, "an explicit cap wins"},
		{Group{Model: Ramp, Stages: []Stage{{Users: 10}, {Users: 300}}, NoKeepAlive: true}, 300, "a users ramp: its peak"},
	}
	for _, row := range rows {
		if got := dialCap(row.g); got != row.want {
			t.Errorf("dialCap(%+v) = %d, want %d (%s)", row.g, got, row.want, row.why)
		}
	}
	if err := (Group{Model: Closed, Users: 1, Duration: time.Second, MaxDials: -1, Requests: get("/")}).validate(); err == nil ||
		!strings.Contains(err.Error(), "max_dials") {
		t.Errorf("a negative MaxDials: error %v, want one naming max_dials", err)
	}
}

// TestSlowConnect: a SYN that finds the listen queue full is dropped, and
// the client sends it again after Linux's initial retransmission time-out
// of 1 s; once the server accepts, the connect succeeds, having taken at
// least that second. Those connects are counted as slow (the signature of
// seed 002's overflowing Tomcat acceptor), the others are not, and every
// connect is counted once. Keep-alive connects once per connection.
func TestSlowConnect(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a SYN retransmission; skipped with -short")
	}
	const n, backlog = 40, 4
	l := backlogListener(t, backlog)
	go func() {
		// Accept nothing until the first SYNs past the queue have been
		// dropped, then serve everything.
		time.Sleep(300 * time.Millisecond)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serveOnce(c)
		}
	}()
	g := run(t, "http://"+l.Addr().String(), Group{Model: Burst, Burst: n, NoKeepAlive: true, Requests: get("/"),
		ConnectTimeout: 10 * time.Second, Timeout: 10 * time.Second}).Groups[0]
	t.Logf("%d requests, %d errors %v; %d connects, %d slow, p50 %.1f ms, max %.1f ms", g.Requests, g.Errors, g.ErrorsByClass,
		g.Connects(), g.SlowConnects, g.ConnectMs(50), g.ConnectMs(100))
	// A connect whose final ACK found the accept queue full completes on
	// the client and its request waits on the server's SYN-ACK retries
	// (tcp_abort_on_overflow 0); after repeated overflows the kernel may
	// answer with SYN cookies. Either way some requests may time out after
	// a fast connect, so the count is bounded, not exact.
	if g.Requests != n || g.Connects() < n-g.Errors || g.Connects() > n {
		t.Fatalf("requests=%d errors=%d connects=%d: want %d requests, one connect each (the failed ones may not have connected)", g.Requests, g.Errors, g.Connects(), n)
	}
	// The queue holds backlog+1 completed connects; the rest were dropped
	// and sent again at 1 s (some twice, at 3 s, on a slow machine).
	if g.SlowConnects < n/4 || g.SlowConnects > g.Connects()-backlog-1 {
		t.Errorf("%d slow connects of %d, want between %d and %d: the SYNs past a queue of %d wait for a retransmission",
			g.SlowConnects, g.Connects(), n/4, g.Connects()-backlog-1, backlog)
	}
	if top := g.ConnectMs(100); top < float64(SlowConnect.Milliseconds()) {
		t.Errorf("slowest connect %.0f ms, want at least 1 s", top)
	}
	if p := g.ConnectMs(1); p >= float64(SlowConnect.Milliseconds()) {
		t.Errorf("fastest connect %.0f ms: the connects the queue took should not wait", p)
	}
}
