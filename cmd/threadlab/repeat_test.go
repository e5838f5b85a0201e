package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// --repeat N runs the manifest N times, each its own run directory (the
// run-to-run level of Kalibera & Jones): the runs accumulate under
// data/<exp>/ for the experiment page's across-runs estimate.
func TestRunRepeat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a command target twice, ~10 s")
	}
	dir := t.TempDir()
	bin := buildFakeServer(t, dir)
	manifest := filepath.Join(dir, "rep.yaml")
	os.WriteFile(manifest, []byte(`name: rep
title: repeated runs
question: do runs agree?
variants:
  a: {command: [`+strconv.Quote(bin)+`, --port, "{port}"], ready: /health}
load:
  model: burst
  burst: 4
  requests: [{path: "/io?ms=5"}]
  warmup: 1ms
  timeout: 10s
forks: 1
iterations: 2
startup: {timeout: 20s}
cooldown: {max_busy_pct: 100, max_wait: 1ms, pause: 1ms}
noise: {max_outside_pct: 100000}
`), 0o644)
	data := filepath.Join(dir, "data")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"run", "--quiet", "--repeat", "2", "--data", data, manifest}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	runs, _ := filepath.Glob(filepath.Join(data, "rep", "*", "run.json"))
	if len(runs) != 2 {
		t.Errorf("%d run directories with a run.json, want 2: %v", len(runs), runs)
	}
	for _, want := range []string{"== run 1 of 2", "== run 2 of 2", "2 runs: ", "threadlab diff "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}

	for _, c := range []struct {
		why  string
		args []string
		want string
	}{
		{"zero runs", []string{"run", "--repeat", "0", manifest}, "give 1 or more"},
		{"one run id for several runs", []string{"run", "--repeat", "2", "--run-id", "x", manifest}, "not with --resume, --run-id or --dry-run"},
		{"a dry run does not repeat", []string{"run", "--repeat", "2", "--dry-run", manifest}, "not with --resume, --run-id or --dry-run"},
	} {
		var o, e bytes.Buffer
		if code := run(context.Background(), c.args, &o, &e); code != 2 || !strings.Contains(e.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", c.why, code, e.String(), c.want)
		}
	}
}

// buildFakeServer builds the command target the pipeline tests run
// (internal/fakeserver) into dir and returns its path.
func buildFakeServer(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "fakeserver")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/threadlab/threadlab/cmd/threadlab/internal/fakeserver").CombinedOutput(); err != nil {
		t.Fatalf("go build fakeserver: %v\n%s", err, out)
	}
	return bin
}
