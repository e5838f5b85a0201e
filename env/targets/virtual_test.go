package targets

// threadlab_virtual_inflight: the built-in targets' count of requests being
// handled on virtual threads, which the telemetry sampler turns into the
// peak_virtual_threads column (Micrometer has no gauge of live virtual
// threads). Checked on TestSeed002Approaches' JVMs (skipped with -short).

import (
	"io"
	"sync"
	"testing"
	"time"
)

// virtualGauge is the gauge's Prometheus name (VirtualInflight.GAUGE in
// both jars, threadlab.virtual.inflight).
const virtualGauge = "threadlab_virtual_inflight"

// checkInflightGauge: on a fresh target of approach a, the gauge reads 0
// with nothing in flight, peaks at n while n requests sleep 3 s each on
// virtual threads (0 on an approach without them), and returns to 0 once
// every request is answered. TestSeed002Approaches runs it first on each
// approach's JVM, which it then checks further: one JVM start per approach
// serves both (CI time). /epoch-millis with delayCallDepth=0 reads neither
// orders nor the default call depth, the two properties that test adds.
func checkInflightGauge(t *testing.T, tg *target, a approach) {
	const n = 20
	want := 0
	if a.thread == virtualThread {
		want = n // one virtual thread per request in progress
	}
	if got := tg.metric(t, virtualGauge); got != 0 {
		t.Fatalf("%s = %v with nothing in flight, want 0 (the scrape itself is not counted)", virtualGauge, got)
	}
	// n requests sleep 3 s each; the gauge is read until it shows
	// all of them (or they are answered).
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := client.Get(tg.base + "/epoch-millis?delayInMillis=3000&delayCallDepth=0")
			if err != nil {
				t.Errorf("GET /epoch-millis: %v", err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	most := 0.0
poll:
	for most < float64(want) || want == 0 {
		select {
		case <-done:
			break poll
		case <-time.After(50 * time.Millisecond):
			most = max(most, tg.metric(t, virtualGauge))
		}
	}
	<-done
	if most != float64(want) {
		t.Errorf("%s peaked at %v with %d requests asleep, want %d (%s handles requests on %v)", virtualGauge, most, n, want, a.name, a.thread)
	}
	// Every request answered: the gauge goes back to 0 (a handler
	// may count down just after its answer left, so wait a little).
	got := tg.metric(t, virtualGauge)
	for deadline := time.Now().Add(5 * time.Second); got != 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		got = tg.metric(t, virtualGauge)
	}
	if got != 0 {
		t.Errorf("%s = %v after every request was answered, want 0", virtualGauge, got)
	}
}
