package load

import (
	"sync"
	"time"
)

// runClosed runs a closed model: workers users loop send, wait, think. users
// says how many of them are active at a time (constant for Closed, the
// stage level for a users ramp); the inactive ones idle with their
// connection kept open, like a user who walked away from the page.
func (g *groupRun) runClosed(users func(t int64) int, workers int) {
	start := g.now()
	end := start + int64(g.Duration)
	var wg sync.WaitGroup
	for i := range workers {
		w := g.addWorker(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.finish()
			w.closedLoop(users, start, end)
		}()
	}
	wg.Wait()
}

// idlePoll is how often an inactive ramp user checks whether it is needed.
const idlePoll = 5 * time.Millisecond

func (w *worker) closedLoop(users func(t int64) int, start, end int64) {
	g := w.g
	think := int64(g.ThinkMax - g.ThinkMin)
	for {
		now := g.now()
		if now >= end || g.aborted.Load() {
			return
		}
		if w.id >= users(now-start) {
			if !g.sleepUntil(min(now+int64(idlePoll), end)) {
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
			if !g.sleepUntil(min(g.now()+d, end)) {
				return
			}
		}
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
	at = g.now()
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
	start := g.now()
	end := start + int64(g.Duration)
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
