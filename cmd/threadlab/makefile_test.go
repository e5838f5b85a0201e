package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakefileNames: make pastes EXP, PROFILE, EXPS and UNTIL into shell
// lines, so a name with shell or path characters stops make before any
// line runs (EXP='io-bound; touch x; echo' ran the touch in the guard
// line), and a plain name passes through.
func TestMakefileNames(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	marker := filepath.Join(t.TempDir(), "pwned")
	for _, c := range []struct {
		why  string
		args []string
		ok   bool
	}{
		{"a plain name", []string{"experiment", "EXP=io-bound", "PROFILE=smoke"}, true},
		{"a command after the name", []string{"experiment", "EXP=io-bound; touch " + marker + "; echo"}, false},
		{"a path out of experiments/", []string{"experiment", "EXP=../../x"}, false},
		{"two words", []string{"experiment", "EXP=a b"}, false},
		{"a command in the profile", []string{"experiment", "EXP=io-bound", "PROFILE=smoke; touch " + marker}, false},
		{"a command substitution", []string{"experiment", "EXP=x`touch " + marker + "`"}, false},
		{"publish's list", []string{"publish", "EXPS=io-bound pool-sweep", "UNTIL=17:30"}, true},
		{"publish's list with a command", []string{"publish", "EXPS=io-bound; touch " + marker}, false},
	} {
		cmd := exec.Command("make", append([]string{"-n", "-C", filepath.Join("..", "..")}, c.args...)...)
		out, err := cmd.CombinedOutput()
		if (err == nil) != c.ok {
			t.Errorf("%s: make -n %q: err %v\n%s", c.why, c.args, err, out)
		}
		if !c.ok && !strings.Contains(string(out), "must be") {
			t.Errorf("%s: no message saying what a name must be:\n%s", c.why, out)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%s: the injected command ran", c.why)
		}
	}
}
