package diff

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// netns is the host record of the published multi-host io-bound run
// (20261201T104549Z): four network namespaces of one machine named vm.
func netns() *record.Hosts {
	return &record.Hosts{Inventory: "hosts.yaml", Hosts: []record.RemoteHost{
		{Role: "target", SSH: "tl-target", Hostname: "vm", Platform: "linux/amd64", JDK: 25},
		{Role: "load", SSH: "tl-load1", Hostname: "vm", Platform: "linux/amd64"},
		{Role: "load", SSH: "tl-load2", Hostname: "vm", Platform: "linux/amd64"},
		{Role: "downstream", SSH: "tl-svc", Hostname: "vm", Platform: "linux/amd64"},
	}}
}

func TestHostsDesign(t *testing.T) {
	run := func(h *record.Hosts) *record.Run { return &record.Run{Meta: record.Meta{Hosts: h}} }
	other := netns()
	other.Hosts[0].Hostname, other.Hosts[0].CPUs, other.Hosts[0].JDK = "big", "0-3", 21
	oneLoad := netns()
	oneLoad.Hosts = append(oneLoad.Hosts[:2], oneLoad.Hosts[3])
	for _, c := range []struct {
		why  string
		a, b *record.Hosts
		want []string // substrings, one per difference
	}{
		{"two single-machine runs: nothing to say", nil, nil, nil},
		{"the same hosts: nothing to say", netns(), netns(), nil},
		{"single-host old, multi-host new", nil, netns(),
			[]string{"different host layouts: the new run is multi-host (target, 2 load hosts, downstream), the old run ran every role on one machine"}},
		{"multi-host old, single-host new", netns(), nil, []string{"the old run is multi-host (target, 2 load hosts, downstream), the new run ran every role on one machine"}},
		{"another target machine", netns(), other, []string{"host target[0] differs: hostname vm -> big, cpus - -> 0-3, jdk 25 -> 21"}},
		{"one generator fewer", netns(), oneLoad, []string{"different host layouts: old target, 2 load hosts, downstream, new target, load, downstream"}},
	} {
		got := hostsDesign(run(c.a), run(c.b))
		if len(got) != len(c.want) {
			t.Errorf("%s: %q, want %d differences", c.why, got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: difference %d = %q, want it to say %q", c.why, i+1, got[i], w)
			}
		}
	}
}

// Comparing a multi-host run with a single-host one names the difference
// first, in the alert every rendering opens with.
func TestDiffNamesHosts(t *testing.T) {
	a, err := record.Read(filepath.Join("testdata", "runs", "base"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := record.Read(filepath.Join("testdata", "runs", "same"))
	if err != nil {
		t.Fatal(err)
	}
	b.Meta.Hosts = netns()
	res, err := Runs(a, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.Text(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	at, host := strings.Index(out, "did not measure the same thing"), strings.Index(out, "different host layouts: the new run is multi-host")
	if at < 0 || host < at {
		t.Errorf("diff text does not name the host difference under its alert:\n%s", out)
	}
}
