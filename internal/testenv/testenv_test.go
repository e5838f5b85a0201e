package testenv

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
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
