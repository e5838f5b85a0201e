package load

import (
	"errors"
	"io"
	"math"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// class is the outcome of one request.
type class uint8

const (
	classOK class = iota
	classRefused
	classReset
	classTimeout
	class4xx
	class5xx
	classOther
	classUnknown // a status outside 100..599: not a 5xx, and not a success either
	// classNot2xx is a final answer below 400 that is not 2xx (a redirect,
	// a final 1xx): not a failure, so not in Errors, but not a 2xx either,
	// so not in GroupResult.OK (seed 002's requests_ok counts 2xx only).
	classNot2xx
	nClasses
)

// classNames are the keys of GroupResult.ErrorsByClass (failures only).
var classNames = [nClasses]string{"", "refused", "reset", "timeout", "http_4xx", "http_5xx", "other", "http_unknown", "not_2xx"}

// answered reports whether the server sent a response, good or bad: the
// stall watchdog counts those as signs of life.
func (c class) answered() bool {
	return c == classOK || c == class4xx || c == class5xx || c == classUnknown || c == classNot2xx
}

// failed reports whether the request counts as an error: no answer, or a
// status of 400 and above.
func (c class) failed() bool { return c != classOK && c != classNot2xx }

// classify maps a transport error to its class. A connection the server
// closed before the response was complete counts as reset: to the client it
// is the same failure.
func classify(err error) class {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return classRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNABORTED):
		return classReset
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, errTimeout),
		errors.As(err, &ne) && ne.Timeout():
		return classTimeout
	}
	return classOther
}

func statusClass(status int) class {
	switch {
	case status >= 600:
		// RFC 9110 15 defines classes 1xx..5xx only; 999 is neither a
		// server error nor a success, so it is counted on its own.
		return classUnknown
	case status >= 500:
		return class5xx
	case status >= 400:
		return class4xx
	case status >= 300 || status < 200:
		return classNot2xx
	}
	return classOK
}

// Histogram bounds required by the record: 1 µs .. 60 s, 3 significant digits.
const (
	histMin    = 1
	histMax    = 60_000_000
	histDigits = 3
	// Per-second histograms only feed p50/p99 of one second; 2 digits keep
	// them at 20 KB instead of 140 KB each.
	secDigits = 2
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histDigits) }

// sample is one finished request, as a worker hands it to the recorder.
type sample struct {
	us    int64 // latency in microseconds, from the intended send time
	sec   int32 // completion second since the run start
	class class
}

// recorder accumulates one group's results. Workers do not touch it per
// request: they batch samples in a tally and flush under the lock, so a
// histogram is shared by thousands of connections without contention.
type recorder struct {
	mu   sync.Mutex
	hist *hdrhistogram.Histogram
	// connect holds the durations of the TCP connects that succeeded, µs
	// (nil until one did); slow counts those of SlowConnect or more.
	connect *hdrhistogram.Histogram
	slow    int64
	seconds []second
	classes [nClasses]int64
	headers map[string]int64
	first   int64 // earliest send, ns since the run start; MaxInt64 when none
	last    int64 // latest answer, ns since the run start
}

type second struct {
	requests, errors int64
	hist             *hdrhistogram.Histogram
}

func newRecorder() *recorder {
	return &recorder{hist: newHist(), first: math.MaxInt64}
}

// tally is a worker's private batch of samples.
type tally struct {
	rec     *recorder
	n       int
	oldest  int64 // ns since run start of the first sample in the batch
	first   int64
	last    int64
	headers map[string]*int64
	buf     [64]sample
	dials   [16]int64 // connect durations, µs, not yet flushed
	nd      int
}

// flushAge bounds how stale progress ticks can be.
const flushAge = 250e6 // ns

func (t *tally) init(r *recorder) {
	t.rec = r
	t.first = math.MaxInt64
}

// add records one request that was meant to start at intended and ended at
// end (both ns since the run start), sent at sent.
func (t *tally) add(intended, sent, end int64, c class) {
	if sent < t.first {
		t.first = sent
	}
	if end > t.last {
		t.last = end
	}
	us := (end - intended) / 1000
	if us < histMin {
		us = histMin
	}
	if us > histMax {
		us = histMax
	}
	if t.n == 0 {
		t.oldest = end
	}
	t.buf[t.n] = sample{us: us, sec: int32(end / 1e9), class: c}
	t.n++
	if t.n == len(t.buf) || end-t.oldest > flushAge {
		t.flush()
	}
}

// SlowConnect is the connect time that marks a SYN sent again: Linux
// retransmits an unanswered SYN after its initial RTO of 1 s (RFC 6298
// 2.1, TCP_TIMEOUT_INIT), so a connect of 1 s or more waited for the
// server's listen queue, not for the network (seed 002's Tomcat refused
// connections outright from 20k users: its acceptor fell behind).
const SlowConnect = time.Second

// dialed records one successful TCP connect that took us microseconds.
func (t *tally) dialed(us int64) {
	t.dials[t.nd] = min(max(us, histMin), histMax)
	t.nd++
	if t.nd == len(t.dials) {
		t.flush()
	}
}

// MaxHeaderValues bounds the distinct values of the counted header kept per
// group: a target answering a unique value per request (count_header:
// X-Request-Id) would otherwise grow memory, and an agent's result line,
// by one key per request. Values past it are counted under HeaderOverflow,
// so the counts still add up and the distinct count is a lower bound.
const MaxHeaderValues = 100_000

// HeaderOverflow is the key that counts the values past MaxHeaderValues.
const HeaderOverflow = "(more distinct values than threadlab keeps)"

// header counts one value of the counted header.
func (t *tally) header(v []byte) {
	if t.headers == nil {
		t.headers = make(map[string]*int64)
	}
	if p, ok := t.headers[string(v)]; ok { // no allocation on lookup
		*p++
		return
	}
	key := string(v)
	if len(t.headers) >= MaxHeaderValues {
		key = HeaderOverflow
		if p, ok := t.headers[key]; ok {
			*p++
			return
		}
	}
	one := int64(1)
	t.headers[key] = &one
}

func (t *tally) flush() {
	r := t.rec
	r.mu.Lock()
	for _, s := range t.buf[:t.n] {
		_ = r.hist.RecordValue(s.us)
		for int(s.sec) >= len(r.seconds) {
			r.seconds = append(r.seconds, second{})
		}
		sec := &r.seconds[s.sec]
		if sec.hist == nil {
			sec.hist = hdrhistogram.New(histMin, histMax, secDigits)
		}
		_ = sec.hist.RecordValue(s.us)
		sec.requests++
		if s.class.failed() {
			sec.errors++
		}
		r.classes[s.class]++
	}
	if t.nd > 0 && r.connect == nil {
		r.connect = newHist()
	}
	for _, us := range t.dials[:t.nd] {
		_ = r.connect.RecordValue(us)
		if us >= SlowConnect.Microseconds() {
			r.slow++
		}
	}
	t.nd = 0
	if t.first < r.first {
		r.first = t.first
	}
	if t.last > r.last {
		r.last = t.last
	}
	if r.headers == nil && len(t.headers) > 0 {
		r.headers = make(map[string]int64)
	}
	for k, p := range t.headers {
		if _, ok := r.headers[k]; !ok && len(r.headers) >= MaxHeaderValues {
			k = HeaderOverflow
		}
		r.headers[k] += *p
		*p = 0
	}
	r.mu.Unlock()
	t.n = 0
}

// result fills the recorded parts of a GroupResult.
func (r *recorder) result(g *GroupResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g.Latency = r.hist
	g.Connect, g.SlowConnects = r.connect, r.slow
	g.ErrorsByClass = map[string]int64{}
	for c := classRefused; c < nClasses; c++ {
		if c.failed() {
			g.ErrorsByClass[classNames[c]] = r.classes[c]
			g.Errors += r.classes[c]
		}
	}
	for _, n := range r.classes {
		g.Requests += n
	}
	g.OK = r.classes[classOK]
	g.Headers = map[string]int64{}
	for k, v := range r.headers {
		if v > 0 {
			g.Headers[k] = v
		}
	}
	if r.first != math.MaxInt64 && r.last > r.first {
		g.Wall = durationNs(r.last - r.first)
		g.RPS = float64(g.Requests) / g.Wall.Seconds()
	}
	// The series starts at the group's first second (a group with a Start
	// offset carries no leading empty buckets), but T stays relative to the
	// run start so that the groups' series line up.
	startSec := 0
	if r.first != math.MaxInt64 {
		startSec = int(r.first / 1e9)
	}
	for i := startSec; i < len(r.seconds); i++ {
		s := r.seconds[i]
		sec := Second{T: i, Requests: s.requests, Errors: s.errors}
		if s.hist != nil {
			sec.Latency = s.hist
			sec.P50Ms = float64(s.hist.ValueAtQuantile(50)) / 1000
			sec.P99Ms = float64(s.hist.ValueAtQuantile(99)) / 1000
		}
		g.Series = append(g.Series, sec)
	}
}
