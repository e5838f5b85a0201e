package main

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/env/targets"
	"github.com/threadlab/threadlab/internal/testenv"
	"github.com/threadlab/threadlab/measure/telemetry"
	"github.com/threadlab/threadlab/store/record"
)

// TestRunSmokeJEP491 is issue 26's acceptance: jep491-pinning's smoke
// profile through the real pipeline, the same jar on JDK 21 (the one
// scripts/setup.sh installs) and JDK 25, into a temporary data directory.
// The pinned-event column is the JVM's own JFR count over the measured
// window: above 0 for synchronized on JDK 21, 0 on JDK 25 (JEP 491) and 0
// for the ReentrantLock control on both. Pinning shows in wall time too:
// 32 sleeps of 200 ms on 4 carriers take 8 rounds where each pins and one
// where none does, so JDK 21's synchronized burst takes at least twice as
// long as JDK 25's (about 6x expected; 2x leaves room for a busy host).
// Without a JDK 21 it fails under CI=true (setup.sh must have installed it)
// and is skipped elsewhere.
func TestRunSmokeJEP491(t *testing.T) {
	if testing.Short() {
		t.Skip("starts JVMs")
	}
	_, _, err := targets.ReleaseFinder("../../env/targets")(21)
	testenv.Need(t, err, "a JDK 21 (jep491-pinning runs its variants on 21 and 25)", "scripts/setup.sh installs JDK 21 into .cache/jdk21; or set JDK21_HOME")
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"run", "--profile", "smoke", "--data", filepath.Join(dir, "data"), "--reports", filepath.Join(dir, "reports"),
		"--targets", "../../env/targets", "--run-id", "smoke", "../../experiments/jep491-pinning.yaml"}
	if code := run(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	runDir := filepath.Join(dir, "data", "jep491-pinning", "smoke")
	trials, err := record.ReadCSV[record.Trial](runDir, record.TrialsFile)
	if err != nil {
		t.Fatal(err)
	}
	wall := map[string]float64{}
	for _, tr := range trials {
		t.Logf("%s: wall %.0f ms, %d pinned events, %d requests, %d errors", tr.Variant, tr.WallMs, tr.PinnedEvents, tr.Requests, tr.Errors)
		wall[tr.Variant] = tr.WallMs
		if tr.Requests != 32 || tr.Errors != 0 {
			t.Errorf("%s: %d requests, %d errors; want 32 answered", tr.Variant, tr.Requests, tr.Errors)
		}
		if !processGone(tr.Pid) {
			t.Errorf("%s: target pid %d still running after the run", tr.Variant, tr.Pid)
		}
		// A scrape that failed in the middle of the window does not spoil the
		// count (on JDK 21 the pinned burst starves it); no baseline or no
		// last scrape does, and then a 0 would prove nothing.
		for _, code := range strings.Split(tr.Flags, ";") {
			if slices.Contains(telemetry.Affects(code), "pinned_events") {
				t.Errorf("%s: the pinned-event count was not measured in full (telemetry flag %s)", tr.Variant, code)
			}
		}
		switch tr.Variant {
		case "sync-21":
			if tr.PinnedEvents < 1 {
				t.Errorf("sync-21: %d pinned events; want at least 1 (a sleep inside synchronized pins on JDK 21)", tr.PinnedEvents)
			}
		case "sync-25", "lock-21", "lock-25":
			if tr.PinnedEvents != 0 {
				t.Errorf("%s: %d pinned events; want 0 (JEP 491 on JDK 25; a lock never pins)", tr.Variant, tr.PinnedEvents)
			}
		default:
			t.Errorf("unexpected variant %s", tr.Variant)
		}
	}
	if len(trials) != 4 || len(wall) != 4 {
		t.Fatalf("%d trials over %d variants; want one per variant (sync-21, sync-25, lock-21, lock-25)\nstdout:\n%s", len(trials), len(wall), out.String())
	}
	if wall["sync-21"] < 2*wall["sync-25"] {
		t.Errorf("sync-21's burst took %.0f ms, sync-25's %.0f ms; want JDK 21 at least twice as long (8 pinned rounds against 1)", wall["sync-21"], wall["sync-25"])
	}
}
