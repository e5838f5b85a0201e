package report

import (
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// TestReproduce: "How to reproduce" checks out the commit that made the
// run and runs it as it ran, and says what it cannot pin down.
func TestReproduce(t *testing.T) {
	multi := &record.Hosts{Inventory: "/home/me/lab/hosts.yaml", Hosts: []record.RemoteHost{{}, {}, {}}}
	rows := []struct {
		why     string
		meta    record.Meta
		cmd     string
		noteHas string // "" for no note
	}{
		{"a clean make build names its commit", record.Meta{Version: "7c692d2"},
			"git checkout 7c692d2 && make experiment EXP=pool-sweep", ""},
		{"the default profile is not spelled out", record.Meta{Version: "985d03c3", Profile: "default"},
			"git checkout 985d03c3 && make experiment EXP=pool-sweep", ""},
		{"another profile is", record.Meta{Version: "985d03c3", Profile: "full"},
			"git checkout 985d03c3 && make experiment EXP=pool-sweep PROFILE=full", ""},
		{"git describe on a tag gives the commit after -g", record.Meta{Version: "v1.2-3-gabc1234"},
			"git checkout abc1234 && make experiment EXP=pool-sweep", ""},
		{"a dirty tree checks out its commit and says the changes are missing", record.Meta{Version: "abc1234-dirty"},
			"git checkout abc1234 && make experiment EXP=pool-sweep", "uncommitted changes"},
		{"a go build's pseudo-version names its commit", record.Meta{Version: "v0.0.0-20261201123456-7c692d2abcde"},
			"git checkout 7c692d2abcde && make experiment EXP=pool-sweep", ""},
		{"a pseudo-version's +dirty is dirty too", record.Meta{Version: "v0.0.0-20261201123456-7c692d2abcde+dirty"},
			"git checkout 7c692d2abcde && make experiment EXP=pool-sweep", "uncommitted changes"},
		{"a release with its commit in parentheses", record.Meta{Version: "0.1.0 (ad141ed)"},
			"git checkout ad141ed && make experiment EXP=pool-sweep", ""},
		{"a tagged commit checks out its tag", record.Meta{Version: "v1.2"},
			"git checkout v1.2 && make experiment EXP=pool-sweep", ""},
		{"a build with no version has nothing to check out", record.Meta{Version: "dev"},
			"make experiment EXP=pool-sweep", `named no commit ("dev")`},
		{"a version that is no commit is not passed to git", record.Meta{Version: "(devel)"},
			"make experiment EXP=pool-sweep", "named no commit"},
		{"a multi-host run goes through threadlab run --hosts, with its profile", record.Meta{Version: "7c692d2", Profile: "smoke", Hosts: multi},
			"git checkout 7c692d2 && make build && bin/threadlab run --hosts /home/me/lab/hosts.yaml --profile smoke experiments/pool-sweep.yaml", "ran on 3 hosts"},
	}
	for _, r := range rows {
		cmd, note := reproduce("pool-sweep", r.meta)
		if cmd != r.cmd {
			t.Errorf("%s: command %q, want %q", r.why, cmd, r.cmd)
		}
		if r.noteHas == "" && note != "" || !strings.Contains(note, r.noteHas) {
			t.Errorf("%s: note %q, want one with %q", r.why, note, r.noteHas)
		}
	}
}
