package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/internal/testenv"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline"
	"github.com/threadlab/threadlab/render/console"
	"github.com/threadlab/threadlab/store/record"
)

// TestPinningReadBack runs real processes under a manifest's pinning and
// checks that run.json records what the kernel reports for each, not what
// was asked: a target pinned as asked, a target whose command re-pins
// itself (an inner taskset, as a wrapper script might), and the downstream
// service run as a process of its own on the services' CPUs. The mismatch
// is a warning, and the terminal summary shows asked against read back.
func TestPinningReadBack(t *testing.T) {
	allowed := env.Allowed()
	if len(allowed) < 2 {
		t.Skip("needs two CPUs to pin the target and the services apart")
	}
	testenv.LookPath(t, "taskset", "apt-get install util-linux (scripts/setup.sh does)")
	bin := fakeserver(t)
	first, last := strconv.Itoa(allowed[0]), strconv.Itoa(allowed[len(allowed)-1])
	// The generator is left unpinned: pinning it would pin this test
	// binary, and every test running beside this one.
	src := fmt.Sprintf(`name: pinning
title: pinning read back
question: is the pinning asked the pinning in force?
services:
  downstream: {delay: 5ms}
variants:
  asked: {command: [%[1]q, --port, "{port}"], ready: /health}
  repinned: {command: [taskset, -c, %[2]q, %[1]q, --port, "{port}"], ready: /health}
load: {model: burst, burst: 4, requests: [{path: "/io?ms=5"}], warmup: 1ms, timeout: 10s}
forks: 1
iterations: 1
startup: {timeout: 20s}
cooldown: {max_busy_pct: 100, max_wait: 1ms, pause: 1ms}
noise: {max_outside_pct: 100000, max_steal_pct: 100000}
pinning: {target: %[3]q, services: %[2]q}
`, bin, first, last)
	path := filepath.Join(t.TempDir(), "pinning.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := experiments.Load(path, "")
	if err != nil {
		t.Fatalf("manifest:\n%s\n%v", src, err)
	}
	var log bytes.Buffer
	s, err := pipeline.Run(context.Background(), m, pipeline.Options{
		DataDir: t.TempDir(), RunID: "r1", Log: &syncWriter{w: &log}, NoReport: true,
		Downstream: []string{bin, "--port", "{port}"},
	})
	if err != nil {
		t.Fatalf("run: %v\nlog:\n%s", err, log.String())
	}
	r, err := record.Read(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	find := func(role, actual string) *record.Affinity {
		for i, a := range r.Meta.Affinity {
			if a.Role == role && a.Actual == actual {
				return &r.Meta.Affinity[i]
			}
		}
		return nil
	}
	all := env.FormatCPUList(allowed)
	tests := []struct {
		role, asked, actual string
		mismatch            bool
		why                 string
	}{
		{"target", last, last, false, "the asked variant runs where taskset put it"},
		{"target", last, first, true, "the repinned variant's own taskset moved it: read back, not assumed"},
		{"downstream", first, first, false, "the downstream runs as a process of its own on the services' CPUs"},
		{"load generator", "", all, false, "an unpinned generator may use every CPU this process may"},
	}
	for _, tt := range tests {
		a := find(tt.role, tt.actual)
		if a == nil || a.Asked != tt.asked || a.Mismatch != tt.mismatch || a.Processes != 1 || len(a.Pids) != 1 {
			t.Errorf("%s: run.json affinity for %s on %s: %+v; want asked %q, mismatch %v, one process\nall: %+v",
				tt.why, tt.role, tt.actual, a, tt.asked, tt.mismatch, r.Meta.Affinity)
		}
	}
	warned := false
	for _, w := range r.Meta.Warnings {
		warned = warned || strings.Contains(w, "pinning: the target was to run on CPUs "+last+", but the kernel reports CPUs "+first)
	}
	if !warned {
		t.Errorf("no warning about the re-pinned target; warnings: %q", r.Meta.Warnings)
	}
	var sum bytes.Buffer
	if err := console.Summary(&sum, s.Dir); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("target: asked %s, read back %s in 1 process; asked %s, read back %s in 1 process (MISMATCH)", last, last, last, first)
	if !strings.Contains(sum.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, sum.String())
	}
}
