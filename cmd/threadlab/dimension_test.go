package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// -update-dimension rewrites the golden files (a distinct name so that it
// cannot clash with another test file's -update flag in this package).
var updateDimension = flag.Bool("update-dimension", false, "rewrite testdata/dimension/*.golden")

func TestDimensionGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
		why  string
	}{
		{"forks", []string{"--from", "testdata/dimension/forks"},
			"fork and iteration columns: warm-up iterations of one fork excluded, both levels estimated"},
		{"forks-tight", []string{"--target", "0.01", "--from", "testdata/dimension/forks"},
			"±1% needs more forks and more iterations"},
		{"trials", []string{"--from", "testdata/dimension/trials"},
			"a run of today's pipeline: one iteration per fork, said so, and ±5% out of reach for platform's 19% spread"},
		{"trials-p99", []string{"--metric", "p99_ms", "--target", "0.1", "--from", "testdata/dimension/trials"},
			"--metric picks another column"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), append([]string{"dimension"}, c.args...), &stdout, &stderr); code != 0 {
				t.Fatalf("%s: exit %d\nstderr:\n%s", c.why, code, stderr.String())
			}
			golden := filepath.Join("testdata", "dimension", c.name+".golden")
			if *updateDimension {
				if err := os.WriteFile(golden, stdout.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestDimensionGolden -update-dimension ./cmd/threadlab)", err)
			}
			if stdout.String() != string(want) {
				t.Errorf("%s: output differs from %s:\n--- got\n%s--- want\n%s", c.why, golden, stdout.String(), want)
			}
		})
	}
}

func TestDimensionErrors(t *testing.T) {
	cases := []struct {
		args   []string
		code   int
		stderr string
		why    string
	}{
		{[]string{}, 2, "dimension takes one manifest, or --from with a run directory", "nothing to dimension"},
		{[]string{"--from", "x", "y.yaml"}, 2, "dimension takes one manifest, or --from", "both a run and a manifest"},
		{[]string{"--target", "5", "--from", "x"}, 2, "--target 5: give the half-width as a fraction", "a percentage where a fraction is meant"},
		{[]string{"--target", "NaN", "--from", "x"}, 2, "--target NaN: give the half-width as a fraction", "NaN compares false with both bounds and planned for ±NaN%"},
		{[]string{"--metric", "speed", "--from", "x"}, 2, `--metric "speed" is not a metric`, "a typo in the metric"},
		{[]string{"--from", "testdata"}, 1, "is not a threadlab run directory (no run.json)", "a directory that is not a run"},
		{[]string{"nonexistent.yaml"}, 1, "nonexistent.yaml", "a manifest that does not exist is named"},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"dimension"}, c.args...), &stdout, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.stderr) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", c.why, code, stderr.String(), c.code, c.stderr)
		}
	}
}

// TestDimensionPilot runs the pilot path end to end: the manifest through
// the ordinary pipeline against a real command target (the fakeserver),
// then the analysis of the run it wrote.
func TestDimensionPilot(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a pilot: 8 real trials of a command target, ~15 s")
	}
	dir := t.TempDir()
	bin := buildFakeServer(t, dir)
	manifest := filepath.Join(dir, "pilot.yaml")
	os.WriteFile(manifest, []byte(`name: pilot
title: dimension pilot
question: how many forks?
variants:
  a: {command: [`+strconv.Quote(bin)+`, --port, "{port}"], ready: /health}
  b: {command: [`+strconv.Quote(bin)+`, --port, "{port}"], ready: /health}
load:
  model: burst
  burst: 8
  requests: [{path: "/io?ms=20"}]
  warmup: 1ms
  timeout: 10s
trials: 6
startup: {timeout: 20s}
cooldown: {max_busy_pct: 100, max_wait: 1ms, pause: 1ms}
profiles:
  smoke: {trials: 2}
`), 0o644)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"dimension", "--data", filepath.Join(dir, "data"), manifest}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"pilot: " + manifest + " with profile smoke", "metric:  wall_ms of group main", "\na ", "\nb ", "plan:    ", "forks: ",
		"2 fork(s) per cell in profile smoke; the pilot runs 3"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The smoke profile's 2 forks are raised to the pilot's 3 per cell.
	if !regexp.MustCompile(`\na +3 `).MatchString(out) || !regexp.MustCompile(`\nb +3 `).MatchString(out) {
		t.Errorf("want 3 forks per cell in the pilot's table:\n%s", out)
	}
}
