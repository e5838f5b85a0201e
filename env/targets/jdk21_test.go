package targets

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadlab/threadlab/env/downstream"
	"github.com/threadlab/threadlab/internal/testenv"
)

// jdkOf finds the JDK of one feature release the way a variant's jdk: N
// does (ReleaseFinder: JDK<N>_HOME, JAVA_HOME, setup.sh's .cache/jdk21,
// /usr/lib/jvm). Missing, the test fails under CI=true, where
// scripts/setup.sh must have installed it, and is skipped elsewhere with
// the reason.
func jdkOf(t *testing.T, major int) string {
	t.Helper()
	home, version, err := ReleaseFinder(".")(major)
	testenv.Need(t, err, fmt.Sprintf("a JDK %d", major), "scripts/setup.sh installs JDK 21 into .cache/jdk21; or set JDK21_HOME")
	t.Logf("JDK %d: %s at %s", major, version, home)
	return home
}

// TestTargetsOnJDK21And25: the jars are built once (javac --release 21),
// and each runs on JDK 21 and on JDK 25 and answers; the log names the
// Java that runs it. On spring-mvc, /pin/sync and /pin/lock answer, a bad
// call is a 400, and with threadlab.pinned-events.enabled the JVM's
// jdk.VirtualThreadPinned events reach threadlab_virtual_pinned_total:
// on JDK 21 each of 4 concurrent 100 ms waits inside synchronized (2
// sleeps, 2 blocking socket reads of the downstream) is one (JFR's
// threshold is 20 ms). JDK 25 may record a few pinned events of its
// own while the first requests initialize classes, so this test does not
// ask it for 0; jep491-pinning's acceptance test reads the measured
// windows, after the warm-up.
func TestTargetsOnJDK21And25(t *testing.T) {
	t.Parallel() // JVM starts, beside the other JVM tests
	_, jars := jars(t)
	// /pin's blocking socket read (call=downstream) waits 100 ms on this.
	down, err := downstream.Start(context.Background(), "127.0.0.1:0", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	for _, major := range []int{21, 25} {
		t.Run(fmt.Sprintf("jdk%d", major), func(t *testing.T) {
			home := jdkOf(t, major)
			for _, name := range []string{"spring-mvc", "spring-webflux"} {
				props := map[string]string{"spring.threads.virtual.enabled": "true"}
				if name == "spring-mvc" {
					props["threadlab.orders"] = "100"
					props["threadlab.pinned-events.enabled"] = "true"
					props["threadlab.downstream-url"] = down.URL()
				}
				tg := start(t, home, jars[name], props)
				if r := tg.get(t, "/io?ms=1"); r.status != 200 || r.body != "io:1" {
					t.Errorf("%s on JDK %d: /io?ms=1 = %d %q, want 200 io:1", name, major, r.status, r.body)
				}
				if log := tg.logTail(); !strings.Contains(log, fmt.Sprintf("using Java %d.", major)) {
					t.Errorf("%s: the log does not say it runs on Java %d:\n%s", name, major, log)
				}
				if name == "spring-mvc" {
					checkPinning(t, tg, major)
				}
				tg.stop()
			}
		})
	}
}

func checkPinning(t *testing.T, tg *target, major int) {
	t.Helper()
	if r := tg.get(t, "/pin/sync?ms=1&call=bogus"); r.status != 400 {
		t.Errorf("call=bogus: status %d, want 400", r.status)
	}
	before := tg.metric(t, "threadlab_virtual_pinned_total")
	const n = 4 // 2 sleeps and 2 socket reads of the downstream's 100 ms, each guard
	paths := []string{"/pin/sync?ms=100", "/pin/sync?call=downstream", "/pin/lock?ms=100", "/pin/lock?call=downstream"}
	wants := []string{"sync:sleep:100", "sync:downstream", "lock:sleep:100", "lock:downstream"}
	var wg sync.WaitGroup
	replies := make([]reply, 2*n)
	for i := range replies {
		path := paths[i/2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = tg.get(t, path)
		}()
	}
	wg.Wait()
	for i, r := range replies {
		want := wants[i/2]
		if r.status != 200 || r.body != want {
			t.Errorf("request %d: %d %q, want 200 %q", i, r.status, r.body, want)
		}
	}
	if major != 21 {
		return
	}
	// JFR hands events to the stream about once a second: poll.
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := tg.metric(t, "threadlab_virtual_pinned_total") - before
		if got >= n {
			t.Logf("JDK 21: %v pinned events for %d waits inside synchronized (sleeps and socket reads)", got, n)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("JDK 21: %v pinned events after %d waits inside synchronized (sleeps and socket reads), want at least %d", got, n, n)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
