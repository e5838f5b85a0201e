package load

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// errTimeout is what a request that outlived Group.Timeout fails with.
var errTimeout = errors.New("response timeout")

// longAgo is a deadline in the past: setting it wakes a blocked Read at once.
var longAgo = time.Unix(1, 0)

// worker is one client connection and the loop that drives it: a closed
// model user, a burst request, or an open model sender. It owns its read
// buffer, parser, request buffer and random source, so a keep-alive round
// trip allocates nothing.
//
// Response timeouts are not per-request deadlines (each would re-arm a
// runtime timer): the group's watchdog scans the in-flight start times and
// sets a past deadline on connections that overstay.
type worker struct {
	g     *groupRun
	id    int
	rng   *rand.Rand
	tally tally

	conn   *net.TCPConn
	raw    syscall.RawConn
	reused bool // the connection already carried a response
	// Raw reads (see fill): the callback and its results live here, so a
	// read allocates nothing.
	readFn  func(fd uintptr) bool
	out     []byte // request bytes the next fill writes first
	blocked bool   // the socket did not take all of out: finish with conn.Write
	rn      int
	rerr    error
	rbuf    []byte
	r, w    int
	p       respParser
	wbuf    []byte

	// Progress for ticks: the worker's own counters, summed by the ticker,
	// so progress is exact without touching shared memory per request.
	done, failed atomic.Int64

	// Shared with the watchdog.
	started atomic.Int64 // send time (ns since run start, +1) of the request in flight; 0 idle; -1 timed out
	// For the stall watchdog: when (ns since run start, +1) the last
	// response arrived and the last request failed without one.
	answered, failedAt atomic.Int64
	cur                atomic.Pointer[net.TCPConn]

	// open model: intended send times from the dispatcher
	jobs chan int64

	timer *time.Timer // think time, created on first use
}

func newWorker(g *groupRun, id int) *worker {
	w := &worker{
		g:   g,
		id:  id,
		rng: rand.New(rand.NewPCG(uint64(g.seed), uint64(g.idx)<<32|uint64(id))),
	}
	w.p.countHeader = g.countHeader
	w.tally.init(g.rec)
	return w
}

// do sends one request meant to start at intended (ns since run start),
// reads the answer and records the outcome. It reports false when the run
// was aborted, in which case nothing was recorded.
func (w *worker) do(intended int64) bool {
	g := w.g
	req := g.mix.pick(w.rng)
	sent := g.now()
	c := w.exchange(req, g)
	end := g.now()
	if g.aborted.Load() {
		w.closeConn()
		return false
	}
	w.tally.add(intended, min(intended, sent), end, c)
	w.done.Add(1)
	if c.failed() {
		w.failed.Add(1)
	}
	if c.answered() {
		w.answered.Store(end + 1)
	} else {
		w.failedAt.Store(end + 1)
	}
	if g.late != nil && sent-intended > lateNs {
		g.late.Add(1)
	}
	return true
}

// exchange performs one round trip, dialing first when needed. A reused
// keep-alive connection that the server closed while idle is redialed once,
// as browsers and net/http do, instead of counting a failure nobody caused.
func (w *worker) exchange(req *wire, g *groupRun) class {
	for attempt := 0; ; attempt++ {
		if w.conn == nil {
			if err := w.dial(); err != nil {
				return classify(err)
			}
		}
		reused := w.reused
		b := req.render(w.wbuf, w.rng)
		if req.whole == nil {
			w.wbuf = b
		}
		stamp := g.now() + 1
		w.started.Store(stamp)
		w.out = b // written by the first fill, see there
		err := w.read(req.head)
		if !w.started.CompareAndSwap(stamp, 0) {
			w.started.Store(0)
			w.closeConn()
			return classTimeout
		}
		if err != nil {
			idle := !w.p.started()
			w.closeConn()
			if reused && idle && attempt == 0 && classify(err) == classReset {
				continue
			}
			return classify(err)
		}
		if w.p.hasValue {
			w.tally.header(w.p.value)
		}
		if !w.p.keepAlive || g.noKeepAlive || w.r != w.w {
			// Bytes after the response were never asked for: the
			// connection's framing can no longer be trusted.
			w.closeConn()
		} else {
			w.reused = true
		}
		return statusClass(w.p.status)
	}
}

func (w *worker) dial() error {
	g := w.g
	g.dialSem <- struct{}{}
	t0 := g.now() // after the wait for a dial slot: that wait is ours, not the server's
	c, err := g.dialer.DialContext(g.ctx, "tcp", g.addr)
	took := g.now() - t0
	<-g.dialSem
	if err != nil {
		return err
	}
	w.tally.dialed(took / 1000)
	g.sockets.Add(1)
	w.conn = c.(*net.TCPConn)
	if w.raw, err = w.conn.SyscallConn(); err != nil {
		w.closeConn()
		return err
	}
	if w.readFn == nil {
		w.readFn = w.rawRead
	}
	w.cur.Store(w.conn)
	w.reused = false
	w.r, w.w = 0, 0
	if w.rbuf == nil {
		w.rbuf = make([]byte, g.bufSize)
	}
	return nil
}

func (w *worker) closeConn() {
	if w.conn != nil {
		w.conn.Close()
		w.conn = nil
		w.cur.Store(nil)
	}
	w.r, w.w = 0, 0
}

// read parses one response from the connection.
func (w *worker) read(head bool) error {
	p := &w.p
	p.reset(head)
	for {
		if w.r < w.w {
			n, done, err := p.feed(w.rbuf[w.r:w.w])
			w.r += n
			if err != nil {
				return err
			}
			if done {
				if w.r == w.w {
					w.r, w.w = 0, 0
				}
				return nil
			}
		}
		switch {
		case w.r == w.w:
			w.r, w.w = 0, 0
		case w.w == len(w.rbuf):
			if w.r > 0 {
				w.w = copy(w.rbuf, w.rbuf[w.r:w.w])
				w.r = 0
			} else {
				// A line longer than the buffer: grow (rare; the parser caps lines).
				nb := make([]byte, 2*len(w.rbuf))
				copy(nb, w.rbuf[:w.w])
				w.rbuf = nb
			}
		}
		n, err := w.fill()
		w.w += n
		if err != nil {
			if n > 0 {
				continue
			}
			if err == io.EOF {
				if p.eof() {
					return nil
				}
				if p.started() {
					return io.ErrUnexpectedEOF
				}
			}
			return err
		}
	}
}

// fill reads what the connection has into rbuf[w:], first writing the
// pending request (out) if there is one. Both happen inside one raw read:
// the runtime resets the connection's readiness when a read starts, so a
// request written before that could be answered before the reset and the
// answer's wake-up lost; written inside, the answer's wake-up always
// counts. Doing so lets the first read of an answer wait for the poller
// instead of paying for a read that only says EAGAIN: a keep-alive round
// trip costs two syscalls (write, read) plus its share of epoll_wait.
func (w *worker) fill() (int, error) {
	w.rn, w.rerr = 0, nil
	if err := w.raw.Read(w.readFn); err != nil {
		w.out = nil
		return 0, err
	}
	if w.blocked {
		// A request larger than the socket buffer: send the rest the
		// ordinary way, then read the ordinary way.
		rest := w.out
		w.out, w.blocked = nil, false
		if _, err := w.conn.Write(rest); err != nil {
			return 0, err
		}
		return w.fill()
	}
	if w.rerr != nil {
		return 0, w.rerr
	}
	if w.rn == 0 {
		return 0, io.EOF
	}
	return w.rn, nil
}

func (w *worker) rawRead(fd uintptr) bool {
	if w.out != nil {
		b := w.out
		for len(b) > 0 {
			n, err := syscall.Write(int(fd), b)
			switch err {
			case nil:
				b = b[n:]
			case syscall.EINTR:
			case syscall.EAGAIN:
				w.out, w.blocked = b, true
				return true
			default:
				w.out, w.rerr = nil, os.NewSyscallError("write", err)
				return true
			}
		}
		w.out = nil
		return false // now wait for the answer
	}
	for {
		n, err := syscall.Read(int(fd), w.rbuf[w.w:])
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case nil:
			w.rn = n
		default:
			w.rerr = os.NewSyscallError("read", err)
		}
		return true
	}
}

// finish closes the connection and hands the last samples to the recorder.
func (w *worker) finish() {
	w.closeConn()
	w.tally.flush()
}
