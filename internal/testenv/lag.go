package testenv

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// LagProbe measures how late this process's threads wake up while a timing
// test runs: a goroutine on its own OS thread sleeps 1 ms at a time (a
// nanosleep) and records how much longer each sleep took. On a quiet
// machine the mean is under 0.1 ms; with six busy processes per core (load
// 12 on 2 cores) it is 1-2.5 ms, and every wake-up in a timed path (a
// dispatcher's, a server's, a worker's, an agent's start) pays it. Timing
// tests assert the relations that hold at any load first, then call
// SkipIfBusy before their tight wall-clock bounds, which then say which
// bound they did not check because the machine was too busy for it.
//
// A test that makes the load it measures (thousands of connections on 2
// cores) probes before its load, not during it: a probe beside it would
// only measure the test.
type LagProbe struct {
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
	lags []time.Duration // written by the probe goroutine until stopped
}

// StartLagProbe starts a probe; it stops at Stop, Mean or the test's end.
func StartLagProbe(t testing.TB) *LagProbe {
	p := &LagProbe{stop: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		const nap = time.Millisecond
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			start := time.Now()
			ts := unix.NsecToTimespec(int64(nap))
			for unix.Nanosleep(&ts, &ts) == unix.EINTR {
			}
			p.lags = append(p.lags, time.Since(start)-nap)
		}
	}()
	t.Cleanup(p.Stop)
	return p
}

// LagFor runs a probe for d and returns it stopped: for a test that makes
// the load it measures, before and after that load.
func LagFor(t testing.TB, d time.Duration) *LagProbe {
	p := StartLagProbe(t)
	time.Sleep(d)
	p.Stop()
	return p
}

// Stop stops the probe; what it measured so far is kept.
func (p *LagProbe) Stop() {
	p.once.Do(func() { close(p.stop) })
	p.wg.Wait()
}

// Mean stops the probe and returns the mean wake-up lag it saw. The mean,
// not the median: a busy machine delays a minority of wake-ups by many
// milliseconds, and that tail is what moves a latency percentile.
func (p *LagProbe) Mean() time.Duration {
	p.Stop()
	if len(p.lags) == 0 {
		return 0
	}
	var sum time.Duration
	for _, l := range p.lags {
		sum += l
	}
	return sum / time.Duration(len(p.lags))
}

// SkipIfBusy ends the test as skipped, with the measured lag and the
// bound it leaves unchecked, when the mean wake-up lag exceeds limit.
// Call it after the checks that hold at any load: a failure recorded
// before it still fails the test. It is a skip under CI=true too: a busy
// machine is not a missing install.
func (p *LagProbe) SkipIfBusy(t testing.TB, limit time.Duration, unchecked string) {
	t.Helper()
	lag := p.Mean()
	t.Logf("scheduling lag: mean %v over %d wake-ups", lag.Round(time.Microsecond), len(p.lags))
	if lag > limit {
		t.Skipf("machine too busy (mean wake-up lag %v > %v): %s not checked", lag.Round(time.Microsecond), limit, unchecked)
	}
}
