// Package testenv says what a test needs from the machine it runs on.
//
// A test whose tool or runtime is missing (a JDK, ssh, taskset, ss, PostgreSQL,
// Chromium, a Python package) skips on a developer's machine, with the command
// that installs it, and fails under CI=true: CI runs scripts/setup.sh first, so
// a missing tool there is a broken install step, and a green CI must never hide
// a path that was not tested.
//
// Data flow: a test calls Need with the error of its own probe (exec.LookPath,
// targets.FindJDK, postgres.BinDir, ...) and the fix; nothing else is read but
// the CI variable.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// CI reports whether the tests run under CI (CI=true, as .ci/run's caller sets
// it and as GitHub Actions does).
func CI() bool { return os.Getenv("CI") == "true" }

// Need stops the test when err is not nil: a failure under CI, a skip
// elsewhere. what names the missing piece and fix says how to install it.
func Need(t testing.TB, err error, what, fix string) {
	t.Helper()
	if err == nil {
		return
	}
	if CI() {
		t.Fatalf("CI=true and %s is missing (%v): %s", what, err, fix)
	}
	t.Skipf("%s is missing (%v): %s", what, err, fix)
}

// LookPath is exec.LookPath for a tool the test cannot do without; see Need.
func LookPath(t testing.TB, name, fix string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	Need(t, err, name, fix)
	return p
}
