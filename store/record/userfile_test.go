package record

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadUserFile: a regular file reads; a device, a directory, a named pipe and
// a file over the limit are refused at once with what they are.
func TestReadUserFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.json")
	if err := os.WriteFile(ok, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(ok, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		why, path string
		limit     int64
		want      string // "" reads
	}{
		{"a regular file", ok, 100, ""},
		{"a link to one: the user named it", link, 100, ""},
		{"/dev/zero read whole ran a machine out of memory", "/dev/zero", 100, "is a device, not a regular file"},
		{"a directory", dir, 100, "is a directory, not a regular file"},
		{"a named pipe nobody writes to blocked past SIGTERM", fifo, 100, "is a named pipe, not a regular file"},
		{"over the limit", ok, 3, "is larger than 3 bytes"},
		{"missing", filepath.Join(dir, "nope"), 100, "no such file"},
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadUserFile(c.path, c.limit); done <- err }()
		select {
		case err := <-done:
			if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Errorf("%s: err %v, want %q", c.why, err, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Read blocked", c.why)
		}
	}
}
