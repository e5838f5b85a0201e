package yamlpos

import (
	"errors"
	"fmt"
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
