package yamlpos

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
		why  string
	}{
		{Problem{File: "m.yaml", Line: 3, Col: 5, Field: "load.users", Msg: "must be > 0"}, "m.yaml:3:5: load.users: must be > 0", "the whole location"},
		{Problem{File: "m.yaml", Field: "ssh_config", Msg: "no such file"}, "m.yaml: ssh_config: no such file", "no line: the file alone"},
		{Problem{File: "m.yaml", Line: 1, Col: 1, Msg: "the file is empty"}, "m.yaml:1:1: the file is empty", "no field"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.why, got, tt.want)
		}
	}
	ps := Problems{tests[0].p, tests[1].p}
	if got, want := ps.Error(), tests[0].want+"\n"+tests[1].want; got != want {
		t.Errorf("Problems: got %q, want one per line %q", got, want)
	}
}

// TestProblemsCapped: a file with many problems lists the first MaxShown
// and says how many more there are, not one line per line of the file.
func TestProblemsCapped(t *testing.T) {
	for _, tc := range []struct {
		n         int
		wantLines int
		wantMore  bool
		why       string
	}{
		{MaxShown, MaxShown, false, "exactly the cap: all listed"},
		{MaxShown + 1, MaxShown + 1, true, "one over: the cap and a line that says 1 more"},
		{5000, MaxShown + 1, true, "a file that is not YAML at all"},
	} {
		ps := make(Problems, tc.n)
		for i := range ps {
			ps[i] = Problem{File: "x", Line: i + 1, Col: 1, Msg: "bad"}
		}
		lines := strings.Split(ps.Error(), "\n")
		more := fmt.Sprintf("... and %d more problem(s): fix these first and run again", tc.n-MaxShown)
		if len(lines) != tc.wantLines || (lines[len(lines)-1] == more) != tc.wantMore {
			t.Errorf("%s: %d problems gave %d lines ending %q", tc.why, tc.n, len(lines), lines[len(lines)-1])
		}
	}
}

func TestHostOnly(t *testing.T) {
	host := Problem{File: "m.yaml", Msg: "too few open files", Host: true}
	file := Problem{File: "m.yaml", Msg: "typo"}
	tests := []struct {
		err  error
		want bool
		why  string
	}{
		{Problems{host}, true, "only this machine's limits"},
		{fmt.Errorf("load: %w", Problems{host, host}), true, "wrapped"},
		{Problems{host, file}, false, "one problem with the file itself"},
		{Problems{}, false, "no problems at all"},
		{errors.New("read: permission denied"), false, "not Problems"},
		{nil, false, "no error"},
	}
	for _, tt := range tests {
		if got := HostOnly(tt.err); got != tt.want {
			t.Errorf("%s: HostOnly = %v, want %v", tt.why, got, tt.want)
		}
	}
}
