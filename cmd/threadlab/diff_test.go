package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// The fixture runs of package diff: base, a rerun on the same host (same),
// a 20% regression of virtual at burst=600 (slower), and a rerun on
// another CPU and JDK (elsewhere). See judge/diff/fixture_test.go.
func fixtureRun(name string) string {
	return filepath.Join("..", "..", "judge", "diff", "testdata", "runs", name)
}

func TestDiffCommand(t *testing.T) {
	base, same, slower, elsewhere := fixtureRun("base"), fixtureRun("same"), fixtureRun("slower"), fixtureRun("elsewhere")
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout []string // substrings, in this order
		stderr string
		why    string
	}{
		{"markdown", []string{"--format", "markdown", base, same}, 0,
			[]string{"## threadlab diff: io-bound", "Same machine and software", "### wall_ms (lower is better)", "| variant | point | old | new | Δ | Δ 90% CI | p |", "| virtual | burst=600 |"}, "",
			"the pull-request form, every row ~"},
		{"flags after the runs", []string{base, slower, "--format", "markdown", "--fail-on-regression"}, 1,
			[]string{"### wall_ms", "| virtual | burst=600 | 1046 ± 0.8% | 1252 ± 0.8% | +19.8% | +19% to +21% | p=0.0087 n=6+6 |"},
			"4 significant regression(s) (--fail-on-regression):\n  wall_ms virtual burst=600 group main: 1046 -> 1252 (+19.8%, p=0.0087)",
			"a CI gate fails on the regression after printing the table"},
		{"no regression to fail on", []string{"--fail-on-regression", base, same}, 0,
			[]string{"0 significant regression(s)"}, "", "a rerun without change passes the gate"},
		{"regression without the gate", []string{base, slower}, 0,
			[]string{"4 significant regression(s)", "+19.8%"}, "", "without --fail-on-regression a regression is reported, not fatal"},
		{"other host first", []string{base, elsewhere}, 0,
			[]string{"threadlab diff: io-bound", "WARNING: these runs come from different machines/software: cpu.model", "wall_ms (lower is better)"}, "",
			"the text form says the hosts differ before any number"},
		{"metric", []string{"--metric", "p99_ms, rps", base, slower}, 0,
			[]string{"p99_ms (lower is better)", "rps (higher is better)"}, "", "--metric picks the tables and their order"},
		{"one run", []string{base}, 2, nil, "diff takes two run directories, the old one then the new one (got 1)", "a diff needs two sides"},
		{"three runs", []string{base, same, slower}, 2, nil, "(got 3)", "and only two"},
		{"html", []string{"--format", "html", base, slower}, 0,
			[]string{"<!DOCTYPE html>", "1 of 2 verdict(s) changed", `<tr class="geomean">`, "Fingerprints side by side"}, "", "the comparison page on stdout"},
		{"bad format", []string{"--format", "pdf", base, same}, 2, nil, `--format "pdf": use markdown, html or text`, "formats are named"},
		{"bad metric", []string{"--metric", "latency", base, same}, 2, nil, `--metric "latency" is not a numeric column of trials.csv (use rps, requests, `, "a typo lists the columns"},
		{"bad flag", []string{"--colour", base, same}, 2, nil, "flag provided but not defined: -colour", "unknown flags are usage errors"},
		{"not a run", []string{base, t.TempDir()}, 1, nil, "new run: ", "a directory without run.json says which side and what to pass"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"diff"}, c.args...), &stdout, &stderr)
			if code != c.code {
				t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", c.why, code, c.code, stdout.String(), stderr.String())
			}
			out := stdout.String()
			at := 0
			for _, s := range c.stdout {
				i := strings.Index(out[at:], s)
				if i < 0 {
					t.Errorf("%s: stdout lacks %q after offset %d:\n%s", c.why, s, at, out)
					break
				}
				at += i + len(s)
			}
			if c.stderr != "" && !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("%s: stderr %q, want it to contain %q", c.why, stderr.String(), c.stderr)
			}
			if c.code == 2 && out != "" {
				t.Errorf("%s: a usage error printed a comparison:\n%s", c.why, out)
			}
		})
	}
}
