package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// secretText stands for a file outside the run (a private key): it must
// never reach reports/.
const secretText = "PRIVATE-KEY-MATERIAL-0123"

// TestLinkedFilesRefused: a run directory committed with links in it (git
// stores them) must not publish what they point at. Each row replaces one
// file or directory of a copied fixture run with a link to a secret; the
// render must fail naming the link, or succeed without the secret, and in
// both cases the secret's text appears in no file under the reports
// directory.
func TestLinkedFilesRefused(t *testing.T) {
	for _, c := range []struct {
		what   string // path in the run directory made a link
		dir    bool   // the link points at a directory holding the secret
		refuse bool   // Read or Run must fail, naming the link
	}{
		{record.WarmupFile, false, true},                 // copied as raw data: would be published as is
		{record.HostCheckFile, false, true},              // read by Read, shown on the page
		{record.ManifestFile, false, true},               // shown on the page as "manifest as run"
		{record.FingerprintFile, false, true},            // read by Read and by the index
		{record.TrialsFile, false, true},                 // the data itself
		{record.SeriesFile, false, true},                 // raw data and charts
		{record.LogsDir, true, true},                     // logs -> ~/.ssh: every file would be published and linked
		{record.HistogramsDir, true, true},               // histograms -> elsewhere
		{record.LogsDir + "/001-x-f1.log", false, false}, // a linked entry: skipped, never followed
		{record.HistogramsDir + "/001-x-t1.hlog", false, false},
	} {
		t.Run(strings.ReplaceAll(c.what, "/", "_"), func(t *testing.T) {
			secretDir := t.TempDir()
			secret := filepath.Join(secretDir, "id_ed25519")
			must(t, os.WriteFile(secret, []byte(secretText+"\n"), 0o600))
			_, runDir := copyRun(t, "io-bound/"+ioRun)
			link := filepath.Join(runDir, c.what)
			must(t, os.RemoveAll(link))
			target := secret
			if c.dir {
				target = secretDir
			}
			must(t, os.Symlink(target, link))

			out := t.TempDir()
			r, err := record.Read(runDir)
			if err == nil {
				_, err = Run(r, out)
			}
			if c.refuse {
				if err == nil {
					t.Fatalf("a linked %s was accepted", c.what)
				}
				if !strings.Contains(err.Error(), c.what) || !strings.Contains(err.Error(), "link") {
					t.Errorf("the error does not name the link %s: %v", c.what, err)
				}
			} else if err != nil {
				t.Fatalf("a linked entry must be skipped, not fail the render: %v", err)
			}
			assertNowhere(t, out, secretText)
		})
	}
}

// TestRunDirLinkRefused: the run directory itself given as a link.
func TestRunDirLinkRefused(t *testing.T) {
	_, runDir := copyRun(t, "io-bound/"+ioRun)
	link := filepath.Join(t.TempDir(), "linked-run")
	must(t, os.Symlink(runDir, link))
	_, err := record.Read(link)
	if err == nil || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "link") {
		t.Fatalf("Read of a linked run directory: %v, want an error naming %s as a link", err, link)
	}
}

// TestOnlyOwnNamesPublished: files threadlab does not write in logs/ or
// histograms/ (an HTML page, an SVG with script, a FIFO) are left out with
// a warning, not copied next to the page or linked from it.
func TestOnlyOwnNamesPublished(t *testing.T) {
	_, runDir := copyRun(t, "io-bound/"+ioRun)
	evil := map[string]string{
		filepath.Join(record.LogsDir, "evil.html"):         "<script>alert(document.domain)</script>",
		filepath.Join(record.HistogramsDir, "evil.svg"):    `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`,
		filepath.Join(record.LogsDir, "001-x-f1.log.html"): "<script>alert(2)</script>",
	}
	for p, body := range evil {
		must(t, os.WriteFile(filepath.Join(runDir, p), []byte(body), 0o644))
	}
	// A FIFO with an own name: opening it must neither hang nor publish.
	must(t, syscall.Mkfifo(filepath.Join(runDir, record.LogsDir, "999-fifo-f1.log"), 0o644))
	out := t.TempDir()
	r, err := record.Read(runDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(r, out); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(out, "io-bound", ioRun)
	for p := range evil {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s was published", p)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, record.LogsDir, "999-fifo-f1.log")); err == nil {
		t.Error("a FIFO was published")
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	for p := range evil {
		if bytes.Contains(page, []byte(`href="`+filepath.ToSlash(p))) {
			t.Errorf("the page links %s", p)
		}
	}
	if !bytes.Contains(page, []byte("evil.html not published")) {
		t.Error("the page does not warn that logs/evil.html was left out")
	}
	assertNowhere(t, out, "alert(")
	// The fixture's own logs are still published.
	logs, _ := os.ReadDir(filepath.Join(dir, record.LogsDir))
	if len(logs) == 0 {
		t.Error("the run's own logs were not published")
	}
}

// assertNowhere fails if any file under dir contains s.
func assertNowhere(t *testing.T, dir, s string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			t.Errorf("%s is a link in the reports directory", path)
			return nil
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("%s contains %q", path, s)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
