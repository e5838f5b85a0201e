package load

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// lagProbe measures how late this process's threads wake up while a timing
// test runs: a goroutine on its own OS thread sleeps 1 ms at a time (a
// nanosleep, like TestAccuracy's server) and records how much longer each
// sleep took. On a quiet machine the mean is under 0.1 ms; with six busy
// processes per core (load 12 on 2 cores) it is 1-2.5 ms, and every
// wake-up in a request's path (the dispatcher's, the server's, the
// worker's) pays it. Timing tests widen their bounds by it, or say which
// bound they did not check because the machine was too busy for it; the
// relations that hold at any load are asserted regardless.
type lagProbe struct {
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
	lags []time.Duration // written by the probe goroutine until stopped
}

func startLagProbe(t *testing.T) *lagProbe {
	p := &lagProbe{stop: make(chan struct{})}
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
	t.Cleanup(p.halt)
	return p
}

func (p *lagProbe) halt() {
	p.once.Do(func() { close(p.stop) })
	p.wg.Wait()
}

// mean stops the probe and returns the mean wake-up lag it saw. The mean,
// not the median: a busy machine delays a minority of wake-ups by many
// milliseconds, and that tail is what moves a latency percentile.
func (p *lagProbe) mean() time.Duration {
	p.halt()
	if len(p.lags) == 0 {
		return 0
	}
	var sum time.Duration
	for _, l := range p.lags {
		sum += l
	}
	return sum / time.Duration(len(p.lags))
}

// skipIfBusy ends the test as skipped, with the measured lag and the
// bound it leaves unchecked, when the mean wake-up lag exceeds limit.
// Call it after the checks that hold at any load: a failure recorded
// before it still fails the test.
func (p *lagProbe) skipIfBusy(t *testing.T, limit time.Duration, unchecked string) {
	t.Helper()
	lag := p.mean()
	t.Logf("scheduling lag: mean %v over %d wake-ups", lag.Round(time.Microsecond), len(p.lags))
	if lag > limit {
		t.Skipf("machine too busy (mean wake-up lag %v > %v): %s not checked", lag.Round(time.Microsecond), limit, unchecked)
	}
}
