package testenv

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestNeed runs each case in a child test binary, because a skip and a
// failure both end the test that sees them.
func TestNeed(t *testing.T) {
	if name := os.Getenv("TESTENV_CHILD"); name != "" {
		Need(t, errors.New("not found"), "frobnicator", "apt-get install frobnicator")
		t.Log("reached the end")
		return
	}
	cases := []struct {
		ci       string
		wantFail bool
		wantText string
		why      string
	}{
		{"true", true, "CI=true and frobnicator is missing", "CI installs what tests need: missing means broken setup"},
		{"", false, "SKIP", "a developer machine may lack it; the skip says how to install"},
		{"false", false, "SKIP", "only the exact value true is CI"},
	}
	for _, c := range cases {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestNeed$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "CI="+c.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != c.wantFail {
			t.Errorf("CI=%q: failed=%v, want %v (%s)\n%s", c.ci, err != nil, c.wantFail, c.why, out)
		}
		if !strings.Contains(string(out), c.wantText) || strings.Contains(string(out), "reached the end") {
			t.Errorf("CI=%q: output lacks %q or the test went on (%s)\n%s", c.ci, c.wantText, c.why, out)
		}
	}
}

func TestNeedNoError(t *testing.T) {
	Need(t, nil, "anything", "nothing to do") // must neither skip nor fail
	if t.Skipped() || t.Failed() {
		t.Fatal("Need with a nil error stopped the test")
	}
}

// TestLagProbe: the probe measures some wake-ups, a limit below any lag
// skips with the unchecked bound named, and a limit of an hour does not.
func TestLagProbe(t *testing.T) {
	p := StartLagProbe(t)
	time.Sleep(50 * time.Millisecond) // the probe needs a few 1 ms naps to have a mean
	if m := p.Mean(); m <= 0 || len(p.lags) == 0 {
		t.Fatalf("mean %v over %d wake-ups: a nanosleep always wakes after its nap", m, len(p.lags))
	}
	reached := false
	t.Run("busy", func(t *testing.T) {
		p.SkipIfBusy(t, -1, "the tight bound")
		reached = true
	})
	if reached {
		t.Error("a limit below any lag did not skip")
	}
	t.Run("quiet", func(t *testing.T) {
		p.SkipIfBusy(t, time.Hour, "the tight bound")
		reached = true
	})
	if !reached {
		t.Error("a limit of an hour skipped")
	}
}
