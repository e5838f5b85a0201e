package trial

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTargetLogRedacted: the log a target leaves in data/<exp>/<run>/logs
// (committed with the run) and the tail of it a failed start puts into
// run.json's error both have the secrets redacted: the password on the
// command line threadlab writes as the log's first line, and the one the
// target prints.
func TestTargetLogRedacted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "001-a-f1.log")
	tg, err := Processes{}.Launch(context.Background(), Spec{Name: "a",
		Argv: []string{"sh", "-c", "echo spring.datasource.password=hunter2-out; true", "-Dspring.datasource.password=hunter2-argv"}, LogPath: path})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for tg.Exited() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	// A failed start's message quotes the tail before the target is stopped.
	if tl := tail(path, 15); strings.Contains(tl, "hunter2") || !strings.Contains(tl, "password=[redacted]") {
		t.Errorf("the error tail shows a secret:\n%s", tl)
	}
	tg.Stop()
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), "hunter2") || strings.Count(string(b), "password=[redacted]") != 3 {
		t.Errorf("the log in the run directory keeps a secret:\n%s", b)
	}
}
