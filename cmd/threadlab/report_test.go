package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reportFixture copies the report package's fixture data (four runs of
// three experiments) into a temp dir and returns its data directory.
func reportFixture(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "render", "report", "testdata", "data")
	dst := filepath.Join(t.TempDir(), "data")
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestReportRendersRunsThenIndex(t *testing.T) {
	data := reportFixture(t)
	reports := filepath.Join(t.TempDir(), "site")
	var stdout, stderr bytes.Buffer
	run := filepath.Join(data, "pool-sweep", "20260302T140000Z-3c4d")
	if err := runReport(context.Background(), []string{"--reports", reports, run, filepath.Join(data, "io-bound")}, &stdout, &stderr); err != nil {
		t.Fatalf("runReport: %v\n%s", err, stderr.String())
	}
	want := []string{
		filepath.Join(reports, "pool-sweep", "20260302T140000Z-3c4d", "index.html"),
		filepath.Join(reports, "io-bound", "20260228T090000Z-0f0e", "index.html"), // an experiment dir: its runs, oldest first
		filepath.Join(reports, "io-bound", "20260301T101500Z-1a2b", "index.html"),
		filepath.Join(reports, "index.html"),
	}
	if got := strings.Fields(stdout.String()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("printed\n%s\nwant\n%s", stdout.String(), strings.Join(want, "\n"))
	}
	for _, p := range append(want, filepath.Join(reports, "io-bound", "index.html"), filepath.Join(reports, "assets", "echarts.min.js")) {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("not written: %v", err)
		}
	}
	index, _ := os.ReadFile(filepath.Join(reports, "index.html"))
	// The index covers all of data/, rendered or not: the starvation run
	// was not asked for, so it is listed with the command that renders it.
	if !bytes.Contains(index, []byte("event-loop-starvation")) || !bytes.Contains(index, []byte("not rendered: <code>threadlab report")) {
		t.Errorf("index should list every run under the data dir, saying how to render the missing ones")
	}
}

func TestReportErrors(t *testing.T) {
	data := reportFixture(t)
	other := reportFixture(t)
	notRun := filepath.Join(t.TempDir(), "empty")
	if err := os.MkdirAll(notRun, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(data, "io-bound", "20260301T101500Z-1a2b", "trials.csv")
	cases := []struct {
		why   string
		args  []string
		usage bool     // exit 2
		want  []string // in the message
	}{
		{"no arguments is a usage error that says what to pass", nil, true, []string{"data/io-bound/<run-id>"}},
		{"a bad flag is a usage error", []string{"--nope"}, true, []string{"nope"}},
		{"a missing directory is named, with what to pass", []string{filepath.Join(data, "io-bound", "nope")}, false, []string{"nope does not exist", "data/<experiment>/<run-id>"}},
		{"a file instead of a directory", []string{file}, false, []string{"trials.csv is a file"}},
		{"a directory with no run in it", []string{notRun}, false, []string{"empty is not a threadlab run directory", "run.json"}},
		{"runs of two data dirs would clobber one index", []string{filepath.Join(data, "io-bound"), filepath.Join(other, "pool-sweep")}, true, []string{"two data directories", "--reports"}},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		err := runReport(context.Background(), append([]string{"--reports", t.TempDir()}, c.args...), &stdout, &stderr)
		if err == nil {
			t.Errorf("%s: no error", c.why)
			continue
		}
		var ue usageError
		if errors.As(err, &ue) != c.usage {
			t.Errorf("%s: usage error = %v, want %v (%v)", c.why, !c.usage, c.usage, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.why, err, w)
			}
		}
	}
}

func TestReportExitCodes(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"report"}, &stdout, &stderr); code != 2 {
		t.Errorf("threadlab report with no run: exit %d, want 2 (usage)", code)
	}
	if code := run(context.Background(), []string{"report", filepath.Join(t.TempDir(), "missing")}, &stdout, &stderr); code != 1 {
		t.Errorf("threadlab report on a missing dir: exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "threadlab report: ") {
		t.Errorf("errors should be prefixed with the command: %q", stderr.String())
	}
}
