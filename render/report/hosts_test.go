package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// TestReportNamesEveryHost: a multi-host run's page and report.md name
// every host by role, destination and host name.
func TestReportNamesEveryHost(t *testing.T) {
	r, err := record.Read(filepath.Join(fixtureDir, "io-bound", ioRun))
	if err != nil {
		t.Fatal(err)
	}
	r.Meta.Hosts = &record.Hosts{Inventory: "hosts.yaml", Hosts: []record.RemoteHost{
		{Role: "target", SSH: "bench@10.0.0.2", Hostname: "bench1"},
		{Role: "load", SSH: "gen1", Hostname: "gen1"},
		{Role: "load", SSH: "gen2", Hostname: "loadgen-2"},
		{Role: "downstream", SSH: "svc"},
	}}
	out := t.TempDir()
	path, err := Run(r, out)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(path)
	md, _ := os.ReadFile(filepath.Join(filepath.Dir(path), MarkdownFile))
	want := "hosts: target bench@10.0.0.2 (bench1), load gen1, load gen2 (loadgen-2), downstream svc"
	for name, b := range map[string][]byte{"index.html": page, "report.md": md} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s does not name every host (want %q)", name, want)
		}
	}
}

// TestReportHostNoise: a multi-host run's page shows each host's CPU
// outside threadlab over the measured trials (median, largest, steal) and
// the split bursts' release spread; a run on one machine has no such
// section.
func TestReportHostNoise(t *testing.T) {
	r, err := record.Read(filepath.Join(fixtureDir, "io-bound", ioRun))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for i := range r.Trials {
		if r.Trials[i].Group != r.Meta.Measured {
			continue
		}
		// target 2, 4, 6 ...: median of the measured trials by hand below.
		n++
		r.Trials[i].HostsNoise = fmt.Sprintf("target t1 %.1f%% (steal 0.5%%); load g1 1.0%% (steal 0.0%%)", float64(2*n))
		r.Trials[i].ReleaseSpreadMs = float64(n)
	}
	v := &runView{run: r}
	hn := v.HostNoise()
	if hn == nil || len(hn.Rows) != 2 {
		t.Fatalf("HostNoise = %+v, want rows for target t1 and load g1", hn)
	}
	// n trials with 2, 4, ..., 2n: the median is n+1 (n even) or n+1 (n odd: 2*((n+1)/2)).
	wantMed := float64(2 * ((n + 1) / 2))
	if n%2 == 0 {
		wantMed = float64(n + 1)
	}
	if got := hn.Rows[0]; got.Host != "target t1" || got.Trials != n || got.Median != wantMed || got.Max != float64(2*n) || got.StealMax != 0.5 {
		t.Errorf("target row %+v, want %d trials, median %g, largest %d, steal 0.5", got, n, wantMed, 2*n)
	}
	if !strings.Contains(hn.Spread, "largest "+trim(float64(n))+" ms over "+strconv.Itoa(n)+" trials") {
		t.Errorf("spread %q, want the largest %d ms over %d trials", hn.Spread, n, n)
	}
	out := t.TempDir()
	path, err := Run(r, out)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(path)
	if !strings.Contains(string(page), `<section id="hosts-noise">`) || !strings.Contains(string(page), "<td>target t1</td>") {
		t.Errorf("the page has no hosts section naming target t1")
	}
	plain, _ := record.Read(filepath.Join(fixtureDir, "io-bound", ioRun))
	if (&runView{run: plain}).HostNoise() != nil {
		t.Errorf("a run on one machine got a hosts section")
	}
}
