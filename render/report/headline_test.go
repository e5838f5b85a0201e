package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// TestHeadlineOfReadsOnlyRegularFiles: the headline reader runs over every
// sibling run on each render, so a committed manifest.yaml that links to a
// device (or a verdicts.json that links elsewhere) must be refused like
// every other file of a run (publishing-safety M1), not read without bound
// or taken as present.
func TestHeadlineOfReadsOnlyRegularFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, record.RunFile), []byte(`{"id":"r1","state":"complete"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "verdicts.json")
	if err := os.WriteFile(elsewhere, []byte(`[{"id":"x"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for target, name := range map[string]string{"/dev/zero": record.ManifestFile, elsewhere: record.VerdictsFile} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	h := headlineOf(dir)
	if h.id != "r1" || !h.complete {
		t.Errorf("headlineOf = %+v: lost run.json's id or state", h)
	}
	if h.verdicts || h.named != "" {
		t.Errorf("headlineOf = %+v: read through a link (verdicts %v, headline %q)", h, h.verdicts, h.named)
	}

	// The same files, regular: taken.
	for name, body := range map[string]string{record.ManifestFile: "headline: r0\n", record.VerdictsFile: `[{"id":"x"}]`} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if h := headlineOf(dir); !h.verdicts || h.named != "r0" {
		t.Errorf("headlineOf = %+v: want verdicts and headline r0 from regular files", h)
	}
}
