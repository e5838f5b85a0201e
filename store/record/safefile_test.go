package record

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "file"), []byte("ok"), 0o644))
	must(os.Symlink(filepath.Join(dir, "file"), filepath.Join(dir, "link")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	for _, c := range []struct {
		name, want, why string
	}{
		{"file", "", "a regular file opens"},
		{"link", "symbolic link", "a link is refused, even to a regular file"},
		{"fifo", "not a regular file", "a FIFO is refused without waiting for a writer"},
		{"sub", "not a regular file", "a directory is refused"},
		{"missing", "no such file", "a missing file is ErrNotExist"},
	} {
		f, err := OpenRegular(filepath.Join(dir, c.name))
		if f != nil {
			f.Close()
		}
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.why, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s: got %v, want an error naming %s with %q", c.why, err, c.name, c.want)
		}
	}
	if _, err := ReadRegular(filepath.Join(dir, "file"), 1); err == nil || !strings.Contains(err.Error(), "larger than 1 bytes") {
		t.Errorf("ReadRegular over its limit: %v", err)
	}
	if err := CheckDir(filepath.Join(dir, "link")); !errors.Is(err, ErrLink) {
		t.Errorf("CheckDir of a link: %v", err)
	}
	must(os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "sublink")))
	if err := CheckDir(filepath.Join(dir, "sublink") + "/"); !errors.Is(err, ErrLink) {
		t.Errorf("CheckDir of a linked directory with a trailing slash: %v", err)
	}
	if err := CheckDir(filepath.Join(dir, "sub")); err != nil {
		t.Errorf("CheckDir of a directory: %v", err)
	}
}

func TestOwnName(t *testing.T) {
	for _, c := range []struct {
		sub, name string
		want      bool
		why       string
	}{
		{LogsDir, "003-webflux-f1.log", true, "a target log"},
		{LogsDir, "027-platform-pool_20-f5.log", true, "a target log at a sweep point"},
		{LogsDir, "001-platform.log", true, "a log of a run before forks"},
		{LogsDir, "postgres.log", true, "the database's log"},
		{LogsDir, "downstream.log", true, "the downstream service's log"},
		{LogsDir, "evil.html", false, "a page"},
		{LogsDir, "001-x.log.html", false, "a page behind a log-like name"},
		{LogsDir, "001-x.hlog", false, "a histogram log in logs/"},
		{HistogramsDir, "001-virtual-pool_40-t3.hlog", true, "a histogram log"},
		{HistogramsDir, "evil.svg", false, "an image"},
		{HistogramsDir, "../001-x.hlog", false, "a path"},
		{"other", "001-x.log", false, "another directory"},
	} {
		if got := OwnName(c.sub, c.name); got != c.want {
			t.Errorf("%s: OwnName(%s, %s) = %v", c.why, c.sub, c.name, got)
		}
	}
	if n := filepath.Base(HistogramLogName(12, "virtual", "pool=40;users=10", 3)); !OwnName(HistogramsDir, n) {
		t.Errorf("HistogramLogName wrote %s, which OwnName refuses", n)
	}
}

// TestDuplicateTrials: two rows for one trial of one group are an error
// naming their lines; the same trial number in another group or cell is
// not a duplicate.
func TestDuplicateTrials(t *testing.T) {
	ok := []Trial{
		{Variant: "a", Group: "io", Trial: 1},
		{Variant: "a", Group: "bg", Trial: 1},
		{Variant: "b", Group: "io", Trial: 1},
		{Variant: "a", Point: "pool=10", Group: "io", Trial: 1},
		{Variant: "a", Group: "io", Trial: 2},
	}
	if err := Duplicates(ok); err != nil {
		t.Fatalf("distinct trials: %v", err)
	}
	bad := append(ok, Trial{Variant: "b", Group: "io", Trial: 1})
	err := Duplicates(bad)
	if err == nil || !strings.Contains(err.Error(), "lines 4 and 7") || !strings.Contains(err.Error(), `variant "b"`) {
		t.Fatalf("a duplicate of row 3 (line 4) at row 6 (line 7): %v", err)
	}
	dir := t.TempDir()
	if err := AppendCSV(dir, TrialsFile, bad); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(dir, RunFile, Meta{ID: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "duplicate trial rows") || !strings.Contains(err.Error(), TrialsFile) {
		t.Fatalf("Read of a run with a duplicate trial: %v", err)
	}
}

// TestReadCSVTorn: rows stream in; a torn last line is dropped; a line
// longer than any threadlab writes is an error.
func TestReadCSVTorn(t *testing.T) {
	dir := t.TempDir()
	body := "variant,point,group,trial\na,,io,1\nb,,io,2\nc,,i"
	if err := os.WriteFile(filepath.Join(dir, TrialsFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadCSV[Trial](dir, TrialsFile)
	if err != nil || len(rows) != 2 || rows[1].Variant != "b" {
		t.Fatalf("got %+v, %v; want rows a and b, the torn c dropped", rows, err)
	}
	if err := os.WriteFile(filepath.Join(dir, TrialsFile), []byte("variant\n"+strings.Repeat("x", maxCSVLine+10)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCSV[Trial](dir, TrialsFile); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("an over-long line: %v", err)
	}
	for _, empty := range []string{"", "variant,point\n", "  \n"} {
		if err := os.WriteFile(filepath.Join(dir, TrialsFile), []byte(empty), 0o644); err != nil {
			t.Fatal(err)
		}
		if rows, err := ReadCSV[Trial](dir, TrialsFile); err != nil || len(rows) != 0 {
			t.Errorf("%q: %v, %v; want no rows", empty, rows, err)
		}
	}
}

func TestCheckRunID(t *testing.T) {
	for _, c := range []struct {
		id string
		ok bool
	}{
		{"20260301T101500Z", true},
		{"20260301T101500Z-2", true},
		{"pool_try.2", true},
		{"a/../../escaped", false}, // would write outside data/<exp>/
		{"..", false},
		{"a..b", false},
		{".hidden", false},
		{"-flag", false},
		{`a\b`, false},
		{"", false},
		{strings.Repeat("x", 101), false},
	} {
		if err := CheckRunID(c.id); (err == nil) != c.ok {
			t.Errorf("CheckRunID(%q) = %v, want ok=%v", c.id, err, c.ok)
		}
	}
}

// TestLock: a second Lock of a locked run directory fails naming the
// holder; after release it succeeds.
func TestLock(t *testing.T) {
	dir := t.TempDir()
	release, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(dir); err == nil || !strings.Contains(err.Error(), "in use by another threadlab (pid ") {
		t.Fatalf("second Lock: %v", err)
	}
	release()
	release2, err := Lock(dir)
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	release2()
}

// TestRedactFile: a target log as the pipeline leaves it in data/ has its
// secrets redacted (the command line's -D password, a JDBC URL), the rest
// of every line kept.
func TestRedactFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "001-x-f1.log")
	in := "# threadlab: java -Dspring.datasource.password=s3cr3t-x -jar app.jar\nstarted\njdbc:postgresql://tl:pw0rd@127.0.0.1:5433/db\nno newline at the end, token=abc"
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RedactFile(path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := "# threadlab: java -Dspring.datasource.password=[redacted] -jar app.jar\nstarted\njdbc:postgresql://tl:[redacted]@127.0.0.1:5433/db\nno newline at the end, token=[redacted]"
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	if err := RedactFile(filepath.Join(t.TempDir(), "missing.log")); err != nil {
		t.Errorf("a missing log: %v", err)
	}
}
