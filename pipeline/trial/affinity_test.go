package trial

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/store/record"
)

// TestReadBack reads this test's own process: once per role and pid
// however often it is read, as the kernel reports it, and a pinning that
// asked for other CPUs is a mismatch warned about once per role.
func TestReadBack(t *testing.T) {
	a, err := env.ReadAffinity(os.Getpid())
	if err != nil {
		t.Fatalf("read this process's affinity: %v (is /proc mounted?)", err)
	}
	actual := env.FormatCPUList(a.CPUs)
	var warned []string
	warn := func(f string, x ...any) { warned = append(warned, fmt.Sprintf(f, x...)) }
	var r ReadBack
	var got []record.Affinity
	got = r.Read(got, "load generator", "", warn, os.Getpid())
	got = r.Read(got, "load generator", "", warn, os.Getpid(), 0, -1) // read again, and no process: nothing new
	if len(got) != 1 || got[0].Actual != actual || got[0].Processes != 1 || got[0].Mismatch || len(got[0].Pids) != 1 {
		t.Fatalf("entries %+v, want one unpinned entry on %s with this process once", got, actual)
	}
	// Ask for a CPU list this process is not on: the read-back says so.
	other := "0"
	if actual == "0" {
		other = "1"
	}
	got = r.Read(got, "target", other, warn, os.Getpid())
	if len(got) != 2 || !got[1].Mismatch || got[1].Asked != other {
		t.Fatalf("entries %+v, want a second entry for the target, asked %s, a mismatch", got, other)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "pinning: the target was to run on CPUs "+other+", but the kernel reports CPUs "+actual) {
		t.Errorf("warnings %q, want one for the target", warned)
	}
	var quiet ReadBack
	quiet.Said("target")
	warned = nil
	quiet.Read(nil, "target", other, warn, os.Getpid())
	if len(warned) != 0 {
		t.Errorf("a role already said: warnings %q, want none", warned)
	}
}
