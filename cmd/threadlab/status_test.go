package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/judge/verdicts"
	"github.com/threadlab/threadlab/store/record"
)

// TestStatus lays out a checkout (experiments/ beside data/) with five
// experiments: one whose run answers today's manifest, one whose manifest
// gained forks since its run, one whose claims alone changed, one never
// run, and one whose unchanged manifest was warmed up by an older rule;
// status must tell them apart and print the publish line for the three
// that need a run.
func TestStatus(t *testing.T) {
	root := t.TempDir()
	base, err := experiments.Load("../../experiments/io-bound.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	write := func(path string, b []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	manifest := func(name string, edit func(m *experiments.Manifest)) []byte {
		t.Helper()
		m := *base
		m.Name = name
		m.Claims = append([]experiments.Claim(nil), base.Claims...)
		if edit != nil {
			edit(&m)
		}
		b, err := experiments.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Wall clocks of the runs that recorded one: 40% dead (over the 35%
	// goal) and 30%; the others recorded none.
	clocks := map[string]*record.WallClock{"current": {Wall: 100, Measured: 60}, "more-forks": {Wall: 100, Measured: 70}}
	// experiment writes the catalog file today and, unless ran is nil, a
	// complete run of name made from ran.
	experiment := func(name string, ran, today []byte) string {
		write(filepath.Join(root, "experiments", name+".yaml"), today)
		if ran == nil {
			return ""
		}
		dir := filepath.Join(root, "data", name, "20261202T000000Z")
		meta, err := json.Marshal(record.Meta{ID: "20261202T000000Z", Experiment: name, State: "complete",
			Manifest: "experiments/" + name + ".yaml", Version: "abc1234", Started: "2026-12-02T00:00:00Z", Time: clocks[name]})
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(dir, record.RunFile), meta)
		write(filepath.Join(dir, record.ManifestFile), ran)
		write(filepath.Join(dir, record.VerdictsFile), []byte(`[{"id":"x","status":"supported"}]`))
		return dir
	}
	// steady writes a steady.json recording the rule the run's forks were
	// warmed up by.
	steady := func(dir, rule string) {
		b, err := json.Marshal(record.Steady{Metric: "wall_ms", Rule: rule})
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(dir, record.SteadyFile), b)
	}
	steady(experiment("current", manifest("current", nil), manifest("current", nil)), verdicts.SteadyRule)
	experiment("more-forks", manifest("more-forks", nil), manifest("more-forks", func(m *experiments.Manifest) { m.Forks.Min, m.Forks.Max = 9, 9 }))
	experiment("new-claims", manifest("new-claims", nil), manifest("new-claims", func(m *experiments.Manifest) { m.Claims = m.Claims[1:] }))
	experiment("never-run", nil, manifest("never-run", nil))
	// The same manifest, warmed up until steady by an older stop rule:
	// only a new run warms its forks up as today's rule would.
	steady(experiment("old-warmup", manifest("old-warmup", nil), manifest("old-warmup", nil)),
		"per-fork selection ...; warm-up until steady: last 4 rounds fluctuate and no longer improve on the 4 before")

	t.Chdir(root) // status reads experiments/*.yaml and data/ of the checkout it runs in
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"status"}, &out, &errb); code != 0 {
		t.Fatalf("status exit %d, stderr:\n%s", code, errb.String())
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = l
		}
	}
	for _, c := range []struct{ name, want, why string }{
		{"current", "current", "its run answers today's manifest"},
		{"more-forks", "older plan: forks", "the manifest gained forks since the run"},
		{"new-claims", "older claims", "only the claims changed"},
		{"never-run", "no run yet", "no run under data/"},
		{"old-warmup", "warmed up by an older rule", "its steady.json names another warm-up rule than today's"},
	} {
		if !strings.Contains(lines[c.name], c.want) {
			t.Errorf("%s (%s): row %q does not say %q", c.name, c.why, lines[c.name], c.want)
		}
	}
	for _, c := range []struct{ name, want, why string }{
		{"current", " 40% !", "its run spent 40 of 100 s outside measurement, over the 35% goal"},
		{"more-forks", " 30% ", "30% dead, within the goal"},
		{"new-claims", "older claims", "its run.json has no wall clock"},
	} {
		if !strings.Contains(lines[c.name], c.want) {
			t.Errorf("%s (%s): row %q does not say %q", c.name, c.why, lines[c.name], c.want)
		}
	}
	if f := strings.Fields(lines["new-claims"]); len(f) < 2 || f[len(f)-3] != "-" {
		t.Errorf("new-claims: row %q, want dead time \"-\" (no wall clock in its run.json)", lines["new-claims"])
	}
	if !strings.Contains(out.String(), "over the catalog's 35% goal: current 40%;") {
		t.Errorf("no line naming the run over the dead-time goal:\n%s", out.String())
	}
	if !strings.Contains(out.String(), `make publish EXPS="more-forks never-run old-warmup"`) {
		t.Errorf("no publish line for the two experiments that need a run:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "threadlab report --reevaluate --claims experiments/new-claims.yaml "+filepath.Join("data", "new-claims", "20261202T000000Z")) {
		t.Errorf("no re-evaluation line for the experiment whose claims changed:\n%s", out.String())
	}
	if strings.Contains(out.String(), "--claims "+filepath.Join("data", "current")) {
		t.Errorf("a current run was sent to re-evaluation:\n%s", out.String())
	}
}
