package load

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync/atomic"
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
	reused bool // the connection already carried a response
	rbuf   []byte
	r, w   int
	p      respParser
	wbuf   []byte

	// Shared with the watchdog.
	started atomic.Int64 // send time (ns since run start, +1) of the request in flight; 0 idle; -1 timed out
	cur     atomic.Pointer[net.TCPConn]

	// open model: intended send times from the dispatcher
	jobs chan int64
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
		_, err := w.conn.Write(b)
		if err == nil {
			err = w.read(req.head)
		}
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
	c, err := g.dialer.DialContext(g.ctx, "tcp", g.addr)
	<-g.dialSem
	if err != nil {
		return err
	}
	g.sockets.Add(1)
	w.conn = c.(*net.TCPConn)
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
		n, err := w.conn.Read(w.rbuf[w.w:])
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

// finish closes the connection and hands the last samples to the recorder.
func (w *worker) finish() {
	w.closeConn()
	w.tally.flush()
}
