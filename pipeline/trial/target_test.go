package trial

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
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

// TestLogName: the point's characters a file name cannot carry become _,
// so record's check of a run directory's logs accepts the name.
func TestLogName(t *testing.T) {
	for _, c := range []struct {
		point map[string]string
		want  string
	}{
		{map[string]string{"pool": "50"}, "logs/003-virtual-pool_50-f2.log"},
		{nil, "logs/003-virtual-f2.log"},
	} {
		j := gapJob()
		j.Cell.Point = c.point
		if got := LogName(j, 3, 2); got != c.want {
			t.Errorf("point %v: log %s, want %s", c.point, got, c.want)
		}
	}
}

// TestActuatorPort: a port the manifest set is kept, a non-port (-1: no
// actuator over HTTP) leaves the app's port as the base, and without one a
// free loopback port is set in the properties.
func TestActuatorPort(t *testing.T) {
	props := map[string]string{"management.server.port": "9001"}
	if p, err := ActuatorPort(props); p != 9001 || err != nil {
		t.Errorf("manifest's 9001: %d, %v; want 9001", p, err)
	}
	props["management.server.port"] = "-1"
	if p, err := ActuatorPort(props); p != 0 || err != nil || props["management.server.port"] != "-1" {
		t.Errorf("manifest's -1: %d, %v, props %v; want 0 and -1 kept", p, err, props)
	}
	props = map[string]string{}
	p, err := ActuatorPort(props)
	if err != nil || p <= 0 || props["management.server.port"] != strconv.Itoa(p) {
		t.Errorf("no port set: %d, %v, props %v; want a free port, set in the properties", p, err, props)
	}
}
