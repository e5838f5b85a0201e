package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestDryRunGenerators: seed 002's full connection-burst profile planned
// over 3 generator hosts does not fit untuned hosts and fits hosts tuned
// as seed 002's (20,000 connections each, and against Tomcat, which closes
// each connection after one request, 20,000 reconnects a second: 40,000
// ports with tcp_tw_reuse),
// whatever this machine's own limits; over 1 host it does not fit even
// tuned. Nothing runs.
func TestDryRunGenerators(t *testing.T) {
	manifest := filepath.Join("..", "..", "experiments", "connection-burst.yaml")
	plan := func(n string) string {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{"run", "--dry-run", "--profile", "full", "--generators", n, "--data", t.TempDir(), manifest}, &out, &errb); code != 0 {
			t.Fatalf("--generators %s: exit %d: %s", n, code, errb.String())
		}
		return out.String()
	}
	three := plan("3")
	untuned, tuned, ok := strings.Cut(three, "on a host tuned as seed 002's")
	if !ok {
		t.Fatalf("no tuned-host section:\n%s", three)
	}
	for _, want := range []string{"load over 3 generator host(s)", "users=60000: DOES NOT FIT", "needs 20064 descriptors, the limit is 1024"} {
		if !strings.Contains(untuned, want) {
			t.Errorf("untuned section lacks %q:\n%s", want, untuned)
		}
	}
	for _, want := range []string{"users=60000: fits", "3          main   20000        20000  40000  20064        yes"} {
		if !strings.Contains(tuned, want) {
			t.Errorf("tuned section lacks %q:\n%s", want, tuned)
		}
	}
	if _, tuned1, _ := strings.Cut(plan("1"), "on a host tuned as seed 002's"); !strings.Contains(tuned1, "users=60000: DOES NOT FIT") {
		t.Errorf("60k on one tuned host should not fit:\n%s", tuned1)
	}
}

// TestDryRunGeneratorsBounded: a generator count past maxGenerators is a
// usage error, not a split that allocates a copy of each group per
// generator (10 million asked for 5 GB).
func TestDryRunGeneratorsBounded(t *testing.T) {
	manifest := filepath.Join("..", "..", "experiments", "io-bound.yaml")
	for _, n := range []string{"-1", "1001", "100000000"} { // 0 is the default: no split asked for
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"run", "--dry-run", "--generators", n, "--data", t.TempDir(), manifest}, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), "give the number of generator hosts, 1 to 1000") {
			t.Errorf("--generators %s: exit %d, stderr %q", n, code, errb.String())
		}
	}
}
