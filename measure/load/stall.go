package load

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// minStall is the smallest default stall limit: below a few seconds a GC
// pause or a JIT deoptimisation storm in the target could pass for a freeze.
const minStall = 5 * time.Second

// stallLimit is the Group.Stall in force: 0 picks max(minStall, Timeout),
// negative turns the watchdog off. Timeout must be normalized already.
func stallLimit(g Group) time.Duration {
	switch {
	case g.Stall < 0:
		return 0
	case g.Stall > 0:
		return g.Stall
	}
	return max(minStall, g.Timeout)
}

// stallState is a group's view of whether its target still answers. The
// workers keep their own last-answer and last-failure times (uncontended
// atomics, see worker.answered); the run's watchdog gathers them.
type stallState struct {
	limit    int64        // ns; 0 = off
	begun    atomic.Int64 // ns since run start + 1 when the group began sending; 0 before
	finished atomic.Bool  // the group's model returned
	mu       sync.Mutex
	reason   string // set once, when the group stalls
}

// markBegun records when the group started, the baseline for its first answer.
func (g *groupRun) markBegun() { g.stall.begun.Store(g.now() + 1) }

// stalled returns the stall reason, empty when the group did not stall.
func (g *groupRun) stalled() string {
	g.stall.mu.Lock()
	defer g.stall.mu.Unlock()
	return g.stall.reason
}

// checkStall looks at the workers (a fresh snapshot) at now (ns since run
// start). A group stalls when the target sent no response for the limit
// and something was outstanding since its last one: a request in flight,
// or one that failed (timed out, was reset or refused). The second
// condition keeps a user who thinks for a minute, or an open model with a
// long gap between sends, from counting as a frozen target.
func (g *groupRun) checkStall(now int64, workers []*worker) bool {
	st := &g.stall
	begun := st.begun.Load()
	if st.limit == 0 || begun == 0 || g.stalled() != "" {
		return false
	}
	last, failed, inFlight := begun-1, int64(-1), false
	for _, w := range workers {
		last = max(last, w.answered.Load()-1)
		failed = max(failed, w.failedAt.Load()-1)
		// A request counts as outstanding once it has waited the limit
		// itself: one sent a moment ago after a long think time is not a
		// sign of a frozen target, however long ago the last answer came.
		if s := w.started.Load(); s > 0 && now-(s-1) >= st.limit || s < 0 {
			inFlight = true
		}
	}
	if now-last < st.limit || !(inFlight || failed > last) {
		return false
	}
	what := "since the group began"
	if last >= begun {
		what = fmt.Sprintf("since its last response at %.1fs", time.Duration(last).Seconds())
	}
	st.mu.Lock()
	st.reason = fmt.Sprintf("group %s stalled: the target sent no response for %s %s (stall limit %s): frozen or hopeless target",
		g.Name, time.Duration(now-last).Round(time.Millisecond), what, time.Duration(st.limit))
	st.mu.Unlock()
	return true
}

// stopStalled ends a stalled group early: it stops sending, drops what is
// in flight (the trial is invalid anyway) and wakes every blocked worker.
func (g *groupRun) stopStalled(workers []*worker) {
	g.aborted.Store(true)
	if g.cancel != nil {
		g.cancel()
	}
	wakeAll(workers)
}

func wakeAll(workers []*worker) {
	for _, w := range workers {
		if c := w.cur.Load(); c != nil {
			c.SetDeadline(longAgo)
		}
	}
}

// stallReasons joins the stalled groups' reasons for Result.Stalled.
func stallReasons(groups []GroupResult) string {
	var s string
	for _, g := range groups {
		if g.Stalled != "" {
			if s != "" {
				s += "; "
			}
			s += g.Stalled
		}
	}
	return s
}
