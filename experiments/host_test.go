package experiments

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/measure/load"
)

// TestHostProblems: loads beyond this host's open-file limit and pinning
// to CPUs it does not have are refused before anything starts, as Host
// problems: the manifest is returned too, for lint, which warns instead.
func TestHostProblems(t *testing.T) {
	limit := load.FileLimit()
	if limit == 0 || limit+1 > MaxUsers {
		t.Skipf("open-file limit %d: cannot build a load above it within MaxUsers", limit)
	}
	tests := []struct {
		name, why, edit, want string
	}{
		{"users over the file limit", "each user holds a connection, and the generator cannot open more files than the hard limit",
			fmt.Sprintf("users: %d", limit), fmt.Sprintf("demo.yaml:9:10: load.users: this host allows %d open files (ulimit -Hn) but the load holds %d connections at once", limit, limit)},
		{"pinned to a missing CPU", "taskset would fail at the first target start",
			"", `demo.yaml:13:19: pinning.target: CPU 1023 is not available on this host`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := os.ReadFile("testdata/odd/plain.yaml")
			if err != nil {
				t.Fatal(err)
			}
			src := string(b)
			if tt.edit != "" {
				src = strings.Replace(src, "users: 10", tt.edit, 1)
			} else {
				src += "pinning: {target: \"1023\"}\n"
			}
			m, err := Parse("demo.yaml", []byte(src), "")
			var ps Problems
			if !errors.As(err, &ps) || !HostOnly(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("%s: want a host problem %q, got %v", tt.why, tt.want, err)
			}
			if m == nil {
				t.Errorf("%s: a host-only failure must still return the manifest for lint", tt.why)
			}
		})
	}
}
