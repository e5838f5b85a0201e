package load

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for zero-valued Group fields.
const (
	defaultMaxInFlight    = 10000
	defaultConnectTimeout = 5 * time.Second
	defaultTimeout        = 60 * time.Second
	lateNs                = int64(time.Millisecond) // open model: a send this late counts in LatePct
	defaultMaxDials       = 256                     // concurrent dials of a keep-alive group: stay under the listen backlog
)

// groupRun is one group while it runs.
type groupRun struct {
	Group
	idx         int
	seed        int64
	t0          time.Time
	ctx         context.Context
	cancel      context.CancelFunc // ends this group only (the stall watchdog)
	stall       stallState
	mix         *mix
	addr        string
	dialer      net.Dialer
	dialSem     chan struct{}
	bufSize     int
	countHeader []byte
	noKeepAlive bool
	rec         *recorder
	sockets     *atomic.Int64
	aborted     atomic.Bool // ctx was cancelled: drop what is in flight

	mu      sync.Mutex
	workers []*worker // every worker ever started, for the watchdog

	// open and ramp-open models
	late      *atomic.Int64
	sent      atomic.Int64
	missed    atomic.Int64
	askedRate float64

	release  int64  // burst: when the burst was released, ns since the run start
	released func() // Plan.OnRelease, once for the whole plan; never nil
}

// now is the time since the run start in ns, on the monotonic clock.
func (g *groupRun) now() int64 { return int64(time.Since(g.t0)) }

func durationNs(ns int64) time.Duration { return time.Duration(ns) }

func (g *groupRun) addWorker(id int) *worker {
	w := newWorker(g, id)
	g.mu.Lock()
	g.workers = append(g.workers, w)
	g.mu.Unlock()
	return w
}

// Run drives the plan's groups against the target and returns what they
// measured. It returns an error only when nothing could run (a bad plan, a
// target that is not a URL, too few file descriptors); refused connections,
// timeouts and HTTP errors are results. When ctx is cancelled, Run stops
// promptly and returns what was measured so far together with ctx.Err().
func Run(ctx context.Context, p Plan) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	t, err := parseTarget(p.Target)
	if err != nil {
		return nil, err
	}
	limit, err := raiseFileLimit()
	if err != nil {
		return nil, err
	}
	need, open := 0, 0
	for _, g := range p.Groups {
		need += heldConns(g)
		if heldConns(g) == 0 {
			open++
		}
	}
	if uint64(need+FDReserve) > limit {
		return nil, fmt.Errorf("plan holds %d connections at once but RLIMIT_NOFILE is %d: raise the hard limit (ulimit -Hn) or lower users/burst", need, limit)
	}
	// Open groups dial on demand up to MaxInFlight; what the descriptor
	// limit leaves is shared among them, and GroupResult.MaxInFlight says
	// which cap was in force.
	openBudget := 0
	if open > 0 {
		openBudget = (int(limit) - FDReserve - need) / open
	}

	groups := make([]*groupRun, len(p.Groups))
	var sockets atomic.Int64
	for i, g := range p.Groups {
		g = normalize(i, g)
		if heldConns(g) == 0 {
			g.MaxInFlight = max(1, min(g.MaxInFlight, openBudget))
		}
		gr, err := newGroupRun(i, g, t, p.Seed, &sockets)
		if err != nil {
			return nil, fmt.Errorf("group %q: %w", p.Groups[i].Name, err)
		}
		groups[i] = gr
	}

	var once sync.Once
	released := func() {
		if p.OnRelease != nil {
			once.Do(p.OnRelease)
		}
	}
	cpu0 := cpuTime()
	start := time.Now()
	for _, g := range groups {
		g.t0, g.released = start, released
		g.ctx, g.cancel = context.WithCancel(ctx)
		defer g.cancel()
	}

	var wg sync.WaitGroup
	for _, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.run()
		}()
	}
	stopTicks := make(chan struct{})
	ticksDone := make(chan struct{})
	go ticks(p.OnTick, groups, start, stopTicks, ticksDone)
	stopWatch := make(chan struct{})
	watchDone := make(chan struct{})
	go watch(ctx, groups, stopWatch, watchDone)

	wg.Wait()
	close(stopTicks)
	close(stopWatch)
	<-ticksDone
	<-watchDone
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0

	res := &Result{Start: start}
	first, last := int64(-1), int64(0)
	for _, g := range groups {
		gr := g.result()
		res.Groups = append(res.Groups, gr)
		g.rec.mu.Lock()
		if g.rec.last > 0 {
			if first < 0 || g.rec.first < first {
				first = g.rec.first
			}
			last = max(last, g.rec.last)
		}
		g.rec.mu.Unlock()
	}
	if first >= 0 {
		res.Wall = durationNs(last - first)
	}
	res.Self = selfCheck(cpu, elapsed, sockets.Load(), res.Groups)
	res.Stalled = stallReasons(res.Groups)
	return res, ctx.Err()
}

// heldConns is how many connections a closed, burst or users-ramp group
// holds open at once; 0 for open models, which dial as needed.
func heldConns(g Group) int {
	switch g.Model {
	case Closed:
		return g.Users
	case Burst:
		return g.Burst
	case Ramp:
		return maxUsers(g.Stages)
	}
	return 0
}

// normalize fills in defaults, so the rest of the code sees real values.
func normalize(i int, g Group) Group {
	if g.Name == "" {
		g.Name = fmt.Sprintf("group%d", i+1)
	}
	if g.MaxInFlight == 0 {
		g.MaxInFlight = defaultMaxInFlight
		if g.Preallocate > 0 {
			g.MaxInFlight = g.Preallocate // k6: maxVUs defaults to preAllocatedVUs
		}
	}
	if g.ConnectTimeout == 0 {
		g.ConnectTimeout = defaultConnectTimeout
	}
	if g.Timeout == 0 {
		g.Timeout = defaultTimeout
	}
	if g.Model == Ramp {
		g.Duration = 0
		for _, s := range g.Stages {
			g.Duration += s.Duration
		}
	}
	return g
}

func newGroupRun(i int, g Group, t target, seed int64, sockets *atomic.Int64) (*groupRun, error) {
	m, err := buildMix(t, g.Requests, g.NoKeepAlive)
	if err != nil {
		return nil, err
	}
	gr := &groupRun{
		Group:       g,
		idx:         i,
		seed:        seed,
		mix:         m,
		addr:        t.addr,
		dialer:      net.Dialer{Timeout: g.ConnectTimeout, KeepAlive: -1},
		dialSem:     make(chan struct{}, dialCap(g)),
		noKeepAlive: g.NoKeepAlive,
		rec:         newRecorder(),
		sockets:     sockets,
		released:    func() {},
	}
	gr.stall.limit = int64(stallLimit(g))
	// Small buffers when there are many connections: 20,000 x 32 KiB
	// would be 640 MiB of read buffers.
	gr.bufSize = 32 << 10
	if conns := heldConns(g); conns > 1024 || conns == 0 && g.MaxInFlight > 1024 {
		gr.bufSize = 4 << 10
	}
	if g.CountHeader != "" {
		gr.countHeader = []byte(lowerASCII(g.CountHeader))
	}
	if g.Model == Open || (g.Model == Ramp && rampOpen(g)) {
		gr.late = new(atomic.Int64)
	}
	return gr, nil
}

// dialCap is how many connects a group may have in flight at once: the
// group's MaxDials, or by default all of its connections when every request
// connects (NoKeepAlive), so N users present N simultaneous connects to the
// server's accept queue. Never more than the group's connections, which Run
// has already fitted into the descriptor budget.
func dialCap(g Group) int {
	conns := heldConns(g)
	if conns == 0 {
		conns = g.MaxInFlight // open: one connection per request in flight
	}
	switch {
	case g.MaxDials > 0:
		return max(1, min(g.MaxDials, conns))
	case g.NoKeepAlive, g.Preallocate > 0:
		return max(1, conns) // preallocated: all connections open at once
	}
	return max(1, min(defaultMaxDials, conns))
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i := range b {
		b[i] = lower(b[i])
	}
	return string(b)
}

// run waits for the group's start offset, then drives its model.
func (g *groupRun) run() {
	defer g.stall.finished.Store(true)
	if g.Start > 0 && !g.sleepUntil(int64(g.Start)) {
		return
	}
	g.markBegun()
	if g.Model != Burst { // a burst is released once its connections are up (runBurst)
		g.released()
	}
	switch g.Model {
	case Closed:
		g.runClosed(nil, g.Users)
	case Burst:
		g.runBurst()
	case Open:
		g.runOpen(flatProfile(g.Rate, int64(g.Duration)))
	case Ramp:
		if rampOpen(g.Group) {
			g.runOpen(rampProfile(g.Stages, g.Smooth))
		} else {
			g.runClosed(g.rampUsers, maxUsers(g.Stages))
		}
	}
}

// sleepUntil waits until t (ns since run start); false when ctx ended first.
func (g *groupRun) sleepUntil(t int64) bool {
	d := time.Duration(t - g.now())
	if d <= 0 {
		return g.ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-g.ctx.Done():
		return false
	}
}

func (g *groupRun) result() GroupResult {
	r := GroupResult{Name: g.Name, Model: g.Model, Stalled: g.stalled(), Release: durationNs(g.release)}
	g.rec.result(&r)
	if g.late != nil {
		r.MaxInFlight = g.MaxInFlight
		sent := g.sent.Load()
		r.AskedRate = g.askedRate
		r.Missed = g.missed.Load()
		if d := g.Duration.Seconds(); d > 0 {
			r.AchievedRate = float64(sent) / d
		}
		if sent > 0 {
			r.LatePct = 100 * float64(g.late.Load()) / float64(sent)
		}
	}
	return r
}

// watch is the single watchdog of a run: every few milliseconds it fails
// requests that outlived their group's Timeout, and on cancellation it wakes
// every blocked connection so Run returns promptly.
func watch(ctx context.Context, groups []*groupRun, stop, done chan struct{}) {
	defer close(done)
	period := 50 * time.Millisecond
	for _, g := range groups {
		period = min(period, max(g.Timeout/20, time.Millisecond))
	}
	tk := time.NewTicker(period)
	defer tk.Stop()
	var snapshot []*worker
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			for _, g := range groups {
				g.aborted.Store(true)
			}
			// Keep waking workers until they are all gone: one that was
			// dialing when we looked has a connection a moment later.
			for {
				for _, g := range groups {
					snapshot = g.snapshot(snapshot)
					for _, w := range snapshot {
						if c := w.cur.Load(); c != nil {
							c.SetDeadline(longAgo)
						}
					}
				}
				select {
				case <-stop:
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
		case <-tk.C:
			for _, g := range groups {
				now := g.now()
				limit := int64(g.Timeout)
				snapshot = g.snapshot(snapshot)
				if g.aborted.Load() {
					wakeAll(snapshot) // stalled: keep waking until every worker is gone
					continue
				}
				if !g.stall.finished.Load() && g.checkStall(now, snapshot) {
					g.stopStalled(snapshot)
					continue
				}
				for _, w := range snapshot {
					s := w.started.Load()
					if s > 0 && now-(s-1) > limit && w.started.CompareAndSwap(s, -1) {
						if c := w.cur.Load(); c != nil {
							c.SetDeadline(longAgo)
						}
					}
				}
			}
		}
	}
}

func (g *groupRun) snapshot(buf []*worker) []*worker {
	g.mu.Lock()
	buf = append(buf[:0], g.workers...)
	g.mu.Unlock()
	return buf
}

// ticks reports progress about once a second.
func ticks(f func(Tick), groups []*groupRun, start time.Time, stop, done chan struct{}) {
	defer close(done)
	if f == nil {
		return
	}
	tk := time.NewTicker(time.Second)
	defer tk.Stop()
	var prev int64
	prevAt := start
	var snapshot []*worker
	for {
		select {
		case <-stop:
			return
		case now := <-tk.C:
			var t Tick
			for _, g := range groups {
				snapshot = g.snapshot(snapshot)
				for _, w := range snapshot {
					t.Requests += w.done.Load()
					t.Errors += w.failed.Load()
				}
			}
			t.Elapsed = now.Sub(start)
			if d := now.Sub(prevAt).Seconds(); d > 0 {
				t.RPS = float64(t.Requests-prev) / d
			}
			prev, prevAt = t.Requests, now
			f(t)
		}
	}
}
