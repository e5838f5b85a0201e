package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/pipeline/record"
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
