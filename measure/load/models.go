package load

import (
	"sync"
	"sync/atomic"
	"time"
)

// runClosed runs a closed model: workers users loop send, wait, think.
// users says how many of them are active at a time (nil: all of them, the
// Closed model; a users ramp passes its level); the inactive ones idle with
// their connection kept open, like a user who walked away from the page.
// Requests in flight when the Duration ends finish (or time out) and count.
func (g *groupRun) runClosed(users func(t int64) int, workers int) {
	start := g.now()
	end := start + int64(g.Duration)
	gt := newGate(workers)
	if users != nil {
		gt.set(users(0))
		go gt.follow(g, users, start, end)
	}
	var wg sync.WaitGroup
	for i := range workers {
		w := g.addWorker(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.finish()
			w.closedLoop(gt, end)
		}()
	}
	wg.Wait()
}

// gate tells a closed group's users how many of them may be active.
// Inactive users block on changed, which is closed (and replaced) whenever
// the level moves, so ten thousand idle users cost nothing until needed.
type gate struct {
	n       atomic.Int64
	mu      sync.Mutex
	changed chan struct{}
}

func newGate(n int) *gate {
	gt := &gate{changed: make(chan struct{})}
	gt.n.Store(int64(n))
	return gt
}

func (gt *gate) set(n int) {
	if gt.n.Load() == int64(n) {
		return
	}
	gt.mu.Lock()
	gt.n.Store(int64(n))
	close(gt.changed)
	gt.changed = make(chan struct{})
	gt.mu.Unlock()
}

func (gt *gate) wait() <-chan struct{} {
	gt.mu.Lock()
	defer gt.mu.Unlock()
	return gt.changed
}

// park blocks an inactive user (id at or above the level) until the level
// moves, and reports whether the user should stop: the group's time is up
// (follow ends by setting the level to -1) or done is closed. The level is
// read again after taking the channel to wait on: set stores the level
// before it closes and replaces the channel under the lock, so a user
// that takes the new channel sees the new level. Reading -1 there is the
// end, not a level to wait below: spike 20261202T043733Z's generator hung
// for 7 minutes with 170 users parked on a channel no one would close,
// woken by a smooth ramp's level change just before the end and reaching
// the gate after follow's last one.
func (gt *gate) park(id int64, done <-chan struct{}) (stop bool) {
	ch := gt.wait()
	switch n := gt.n.Load(); {
	case n < 0:
		return true
	case id < n:
		return false // the level moved between the check and the wait
	}
	select {
	case <-ch:
		return gt.n.Load() < 0
	case <-done:
		return true
	}
}

// rampTick is how often a smooth users ramp moves its level.
const rampTick = 5 * time.Millisecond

// follow moves the gate along users(t) until end, then wakes everyone so
// idle users see the end too.
func (gt *gate) follow(g *groupRun, users func(t int64) int, start, end int64) {
	tm := time.NewTimer(rampTick)
	defer tm.Stop()
	for now := g.now(); now < end; now = g.now() {
		gt.set(users(now - start))
		tm.Reset(min(rampTick, time.Duration(end-now)))
		select {
		case <-tm.C:
		case <-g.ctx.Done():
			end = 0
		}
	}
	gt.set(-1)
}

func (w *worker) closedLoop(gt *gate, end int64) {
	g := w.g
	think := int64(g.ThinkMax - g.ThinkMin)
	for {
		now := g.now()
		if now >= end || g.aborted.Load() {
			return
		}
		if n := gt.n.Load(); n < 0 {
			return // the group's time is up (follow's end)
		} else if int64(w.id) >= n {
			if gt.park(int64(w.id), g.ctx.Done()) {
				return
			}
			continue
		}
		if !w.do(now) {
			return
		}
		if g.ThinkMax > 0 {
			d := int64(g.ThinkMin)
			if think > 0 {
				d += w.rng.Int64N(think + 1)
			}
			if !w.sleepUntil(min(g.now()+d, end)) {
				return
			}
		}
	}
}

// sleepUntil is groupRun.sleepUntil with the worker's own timer, so think
// times do not allocate one per request.
func (w *worker) sleepUntil(t int64) bool {
	g := w.g
	d := time.Duration(t - g.now())
	if d <= 0 {
		return g.ctx.Err() == nil
	}
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	select {
	case <-w.timer.C:
		return true
	case <-g.ctx.Done():
		w.timer.Stop()
		return false
	}
}

// runBurst connects Burst workers (with keep-alive), then releases one
// request on each at the same instant; every latency and the group's Wall
// are measured from that instant. Connecting first means the burst measures
// how the server handles concurrent requests, not how fast it accepts
// connections; with NoKeepAlive the connect is part of each request.
func (g *groupRun) runBurst() {
	var ready, done sync.WaitGroup
	release := make(chan struct{})
	var at int64
	for i := range g.Burst {
		w := g.addWorker(i)
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			defer w.finish()
			if !g.noKeepAlive {
				_ = w.dial() // a failure is retried, and recorded, after the release
			}
			ready.Done()
			select {
			case <-release:
			case <-g.ctx.Done():
				return
			}
			w.do(at)
		}()
	}
	ready.Wait()
	if g.ReleaseAt > 0 && !g.sleepUntil(int64(g.ReleaseAt)) {
		done.Wait() // ctx ended: every worker sees it and returns unsent
		return
	}
	g.released()
	at = g.now()
	g.release = at
	close(release)
	done.Wait()
}

// runOpen sends at the profile's rate
// until the group's Duration is over, measuring every latency from the
// intended send time (wrk2's fix for coordinated omission): if the server
// stalls, the requests that should have gone out during the stall are still
// sent and still timed from when they were due. Each in-flight request needs
// its own connection; idle ones are reused, new ones dialed, up to
// MaxInFlight. A send due while MaxInFlight requests are in flight is Missed.
func (g *groupRun) runOpen(rate profile) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		idle []*worker
		n    int
	)
	release := func(w *worker) {
		mu.Lock()
		idle = append(idle, w)
		mu.Unlock()
	}
	get := func() *worker {
		mu.Lock()
		defer mu.Unlock()
		if k := len(idle); k > 0 {
			w := idle[k-1]
			idle = idle[:k-1]
			return w
		}
		if n >= g.MaxInFlight {
			return nil
		}
		w := g.addWorker(n)
		w.jobs = make(chan int64, 1)
		n++
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.finish()
			for intended := range w.jobs {
				if !w.do(intended) {
					return
				}
				release(w)
			}
		}()
		return w
	}
	if k := min(g.Preallocate, g.MaxInFlight); k > 0 {
		g.preallocate(k, get, release)
	}

	start := g.now()
	end := start + int64(g.Duration)
	g.askedRate = rate.mean()
	pc := newPacer(g.ctx)
	defer pc.close()
	for at := rate.next(-1); start+at < end; at = rate.next(at) {
		next := start + at
		if wait := next - g.now(); wait > minSleep && !pc.sleep(g.ctx, time.Duration(wait)) {
			break
		}
		if g.aborted.Load() || g.ctx.Err() != nil {
			break
		}
		if w := get(); w != nil {
			g.sent.Add(1)
			w.jobs <- next
		} else {
			g.missed.Add(1)
		}
	}
	// Stop the senders; what is in flight finishes (or times out) first.
	mu.Lock()
	all := g.snapshot(nil)
	mu.Unlock()
	for _, w := range all {
		close(w.jobs)
	}
	wg.Wait()
}

// preallocate makes k workers before the first send and, with keep-alive,
// connects them all at once (up to MaxDials), so the server sees every
// connection before any request; then they wait idle for sends. A failed
// connect is retried, and recorded, at the worker's first send.
func (g *groupRun) preallocate(k int, get func() *worker, release func(*worker)) {
	pre := make([]*worker, 0, k)
	for range k {
		pre = append(pre, get())
	}
	if !g.noKeepAlive {
		var dials sync.WaitGroup
		for _, w := range pre {
			dials.Add(1)
			go func() {
				defer dials.Done()
				// The worker is idle: its goroutine waits for a job. A
				// connection the server closes while it waits is redialed
				// once at its first send, like a reused one: nobody failed.
				if w.dial() == nil {
					w.reused = true
				}
			}()
		}
		dials.Wait()
	}
	for _, w := range pre {
		release(w)
	}
}

// minSleep: sends due sooner than this go out now, in one batch, instead
// of paying a sleep each; the lateness this adds stays far below lateNs.
const minSleep = int64(20 * time.Microsecond)

// rampOpen reports whether a ramp group's stages are rates (open) rather
// than users (closed).
func rampOpen(g Group) bool {
	for _, s := range g.Stages {
		if s.Rate > 0 {
			return true
		}
	}
	return false
}

func maxUsers(stages []Stage) int {
	n := 0
	for _, s := range stages {
		n = max(n, s.Users)
	}
	return n
}

// level returns the ramp level at t (ns since the group start): the
// current stage's level, or with Smooth a linear move from the previous
// stage's level (0 before the first stage) to the current one.
func (g *groupRun) level(t int64, of func(Stage) float64) float64 {
	var at int64
	prev := 0.0
	for _, s := range g.Stages {
		d := int64(s.Duration)
		if t < at+d {
			cur := of(s)
			if !g.Smooth {
				return cur
			}
			return prev + (cur-prev)*float64(t-at)/float64(d)
		}
		prev = of(s)
		at += d
	}
	return prev
}

func (g *groupRun) rampUsers(t int64) int {
	// Rounded, so a smooth ramp from 0 to 10 reaches each level at the
	// midpoint rather than only at the stage end.
	return int(g.level(t, func(s Stage) float64 { return float64(s.Users) }) + 0.5)
}
