package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSiteCommand(t *testing.T) {
	data := "../../render/report/testdata/data"
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"site", "--data", data, "--reports", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 5 || !strings.HasSuffix(lines[4], "index.html") {
		t.Errorf("printed %q, want 4 run pages then the index", lines)
	}
	page, err := os.ReadFile(filepath.Join(out, "io-bound", "20260301T101500Z-1a2b", "index.html"))
	if err != nil || !bytes.Contains(page, []byte(`href="compare.html"`)) {
		t.Errorf("the later io-bound run does not link its comparison with the earlier one: %v", err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"site", "--data", filepath.Join(t.TempDir(), "nope")}, 1, "does not exist"},
		{[]string{"site", "extra"}, 2, "site takes no arguments"},
	} {
		stderr.Reset()
		if code := run(context.Background(), c.args, &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr.String(), c.code, c.want)
		}
	}
}

// TestSiteDuplicateRunID: a run copied under another directory name keeps
// run.json's id, which names its page; the copy must not silently replace
// the genuine page. site renders the first, refuses the second by name,
// and exits 1.
func TestSiteDuplicateRunID(t *testing.T) {
	data := t.TempDir()
	src := "../../render/report/testdata/data/io-bound/20260301T101500Z-1a2b"
	for _, name := range []string{"20260301T101500Z-1a2b", "20260301T999999Z-copy"} {
		dst := filepath.Join(data, "io-bound", name)
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"site", "--data", data, "--reports", t.TempDir()}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "20260301T999999Z-copy") || !strings.Contains(stderr.String(), "io-bound/20260301T101500Z-1a2b is") {
		t.Errorf("exit %d, stderr %q: want 1 and the copy refused, naming the page's owner", code, stderr.String())
	}
}

// TestReportDuplicateRunID: `threadlab report` renders the runs it is given,
// one at a time (make report), so it cannot rely on seeing both twins in one
// loop: a run whose page another run directory in the same data directory
// already names is refused with both directories, and the genuine page is
// left as it was. A run with its own id renders, given by an absolute path
// too (the run is not its own twin).
func TestReportDuplicateRunID(t *testing.T) {
	data := t.TempDir()
	src := "../../render/report/testdata/data/io-bound/20260301T101500Z-1a2b"
	genuine := filepath.Join(data, "io-bound", "20260301T101500Z-1a2b")
	copied := filepath.Join(data, "io-bound", "20260301T999999Z-copy")
	for _, dst := range []string{genuine, copied} {
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	reports := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"report", "--reports", reports, copied}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "20260301T999999Z-copy") || !strings.Contains(stderr.String(), genuine) {
		t.Errorf("exit %d, stderr %q: want 1, naming the copy and the run whose page it would replace", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(reports, "io-bound", "20260301T101500Z-1a2b", "index.html")); !os.IsNotExist(err) {
		t.Errorf("the copy was rendered over the genuine page (stat: %v)", err)
	}
	if err := os.RemoveAll(copied); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	abs, err := filepath.Abs(genuine)
	if err != nil {
		t.Fatal(err)
	}
	if code := run(context.Background(), []string{"report", "--reports", reports, abs}, &stdout, &stderr); code != 0 {
		t.Errorf("the genuine run alone: exit %d, stderr %q; want 0", code, stderr.String())
	}
}
