package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileFlags: what a second hostile-input sweep found in the flags.
// A flag after the manifest is said (Go's flag package stopped there and
// read it as a file name); a --data that is not there is an error, not "no
// run yet" and an hour-long re-run; a dry run checks --hosts and plans for
// its load hosts.
func TestHostileFlags(t *testing.T) {
	manifest := filepath.Join("..", "..", "experiments", "io-bound.yaml")
	inventory := filepath.Join("..", "..", "env", "hosts", "testdata", "hosts.yaml")
	bad := filepath.Join(t.TempDir(), "hosts.yaml")
	if err := os.WriteFile(bad, []byte("target: {ssh: \"-oProxyCommand=touch x\"}\nload: [gen1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		why    string
		args   []string
		code   int
		stderr string // substring of stderr ("" for none checked)
		stdout string // substring of stdout
	}{
		{"a flag after the manifest", []string{"lint", manifest, "--strict"}, 2, "--strict comes after the arguments: flags go first", ""},
		{"--data after the manifest", []string{"status", manifest, "--data", "d"}, 2, "--data comes after the arguments", ""},
		{"a --data that is not there", []string{"status", "--data", filepath.Join(t.TempDir(), "nope"), manifest}, 2, "no such file or directory", ""},
		{"a --data that is a file", []string{"run", "--dry-run", "--data", manifest, manifest}, 2, "is not a directory", ""},
		{"a dry run reads the inventory", []string{"run", "--dry-run", "--data", t.TempDir(), "--hosts", inventory, manifest}, 0, "",
			"load over 2 generator host(s)"},
		{"a dry run refuses a bad inventory", []string{"run", "--dry-run", "--data", t.TempDir(), "--hosts", bad, manifest}, 1,
			"target.ssh: \"-oProxyCommand=touch x\" starts with '-'", ""},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), c.args, &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.stderr) || !strings.Contains(out.String(), c.stdout) {
			t.Errorf("%s: %v: exit %d (want %d)\nstderr: %s\nstdout: %.400s", c.why, c.args, code, c.code, errb.String(), out.String())
		}
	}
}

// TestBadFlagSaidOnce: a flag value the flag package cannot parse prints
// the command's usage and then the error, once (it used to come twice: the
// flag package's line and run()'s), and -h prints the usage and succeeds.
func TestBadFlagSaidOnce(t *testing.T) {
	for _, c := range []struct {
		why   string
		args  []string
		code  int
		usage string // the command's own usage line
		err   string // "" when no error is said
	}{
		{"a NaN delay", []string{"downstream", "--delay", "NaN"}, 2, "usage: threadlab downstream", `invalid value "NaN" for flag -delay`},
		{"an unknown flag", []string{"load", "--nope"}, 2, "usage: threadlab load", "flag provided but not defined: -nope"},
		{"help", []string{"downstream", "-h"}, 0, "usage: threadlab downstream", ""},
		{"targets' help in the same form as every command's", []string{"targets", "-h"}, 0, "usage: threadlab targets [--dir", ""},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), c.args, &out, &errb)
		s := errb.String()
		switch {
		case code != c.code:
			t.Errorf("%s: exit %d, want %d\n%s", c.why, code, c.code, s)
		case strings.Count(s, c.usage) != 1:
			t.Errorf("%s: %q appears %d times, want once:\n%s", c.why, c.usage, strings.Count(s, c.usage), s)
		case c.err != "" && strings.Count(s, c.err) != 1:
			t.Errorf("%s: %q appears %d times, want once:\n%s", c.why, c.err, strings.Count(s, c.err), s)
		case c.err != "" && strings.Index(s, c.err) < strings.Index(s, c.usage):
			t.Errorf("%s: the error should come last, after the usage:\n%s", c.why, s)
		case c.err == "" && strings.Contains(s, "threadlab "+c.args[0]+":"):
			t.Errorf("%s: help printed an error:\n%s", c.why, s)
		}
	}
}
