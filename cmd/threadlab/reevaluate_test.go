package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/judge/verdicts"
	"github.com/threadlab/threadlab/store/record"
)

// copyDir copies a run directory tree.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReportReevaluate re-evaluates the landed io-bound run: the old
// verdicts are kept byte for byte, the new ones record the deciding
// version and method, and each changed claim says what it was.
func TestReportReevaluate(t *testing.T) {
	run := filepath.Join(t.TempDir(), "data", "io-bound", "20261130T005455Z")
	copyDir(t, filepath.Join("..", "..", "data", "io-bound", "20261130T005455Z"), run)
	// The first recorded verdicts: verdicts.json, or verdicts.previous.json
	// once the committed run has been re-evaluated (it has: the landed run
	// was re-evaluated with the calibrated rules).
	original, err := os.ReadFile(filepath.Join(run, record.PreviousVerdictsFile))
	if os.IsNotExist(err) {
		original, err = os.ReadFile(filepath.Join(run, record.VerdictsFile))
	}
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"--reports", filepath.Join(t.TempDir(), "site"), "--reevaluate", run}
	if err := runReport(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("runReport --reevaluate: %v\n%s", err, stderr.String())
	}
	kept, err := os.ReadFile(filepath.Join(run, record.PreviousVerdictsFile))
	if err != nil || !bytes.Equal(kept, original) {
		t.Fatalf("verdicts.previous.json differs from the original verdicts.json (err %v)", err)
	}
	if !strings.Contains(stdout.String(), "re-evaluated 3 claims with threadlab") {
		t.Errorf("stdout %q lacks the summary line", stdout.String())
	}
	now, err := record.ReadVerdictsFile(run, record.VerdictsFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range now {
		if v.Version == "" || !strings.Contains(v.Method, "Mann-Whitney") || len(v.Points) == 0 {
			t.Errorf("claim %s: version %q method %q points %d; want all recorded", v.ID, v.Version, v.Method, len(v.Points))
		}
		// The old rules added a noise band to the threshold; every reason changed wording at least.
		if v.Previous == nil || !strings.HasPrefix(v.Evidence[0], "re-evaluated by threadlab") {
			t.Errorf("claim %s: no previous verdict or evidence line saying it was re-evaluated", v.ID)
		}
	}
	// Re-evaluating again compares with the first verdicts, not the second.
	stdout.Reset()
	if err := runReport(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if kept2, _ := os.ReadFile(filepath.Join(run, record.PreviousVerdictsFile)); !bytes.Equal(kept2, original) {
		t.Error("a second re-evaluation overwrote the original verdicts")
	}
	var raw []map[string]any
	data, _ := os.ReadFile(filepath.Join(run, record.VerdictsFile))
	if err := json.Unmarshal(data, &raw); err != nil || raw[0]["previous"] == nil {
		t.Errorf("verdicts.json after a second pass: err %v, previous %v", err, raw[0]["previous"])
	}
}

// TestReportReevaluateClaims judges a finished run with claims edited
// after it ran: accepted when the edited manifest measures the same thing
// (the new claim gets a verdict, the manifest as run is kept), refused
// with the differing line when it does not.
func TestReportReevaluateClaims(t *testing.T) {
	src := filepath.Join("..", "..", "data", "io-bound", "20261130T005455Z")
	asRun, err := os.ReadFile(filepath.Join(src, record.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	added := strings.Replace(string(asRun), "claims:\n", `claims:
  - id: webflux-event-loops-only
    says: WebFlux serves the whole burst on at most 4 event-loop threads.
    check: {metric: distinct_threads, variant: webflux, at_most: 4}
`, 1)
	cases := []struct {
		name     string
		manifest string
		wantErr  string // "" when accepted
	}{
		{"a claim added: the same measurement, judged on the run's data", added, ""},
		{"more trials: another measurement, refused", strings.Replace(added, "\ntrials: 5\n", "\ntrials: 7\n", 1), "another measurement"},
		{"a role added: it only describes, and is carried", strings.Replace(added, "\n  platform:\n", "\n  platform:\n    role: control\n", 1), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := filepath.Join(t.TempDir(), "data", "io-bound", "20261130T005455Z")
			copyDir(t, src, run)
			edited := filepath.Join(t.TempDir(), "io-bound.yaml")
			if err := os.WriteFile(edited, []byte(c.manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			args := []string{"--reports", filepath.Join(t.TempDir(), "site"), "--reevaluate", "--claims", edited, run}
			err := runReport(context.Background(), args, &stdout, &stderr)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "line ") {
					t.Fatalf("err = %v, want one saying %q and naming the differing line", err, c.wantErr)
				}
				if _, statErr := os.Stat(filepath.Join(run, record.PreviousManifestFile)); statErr == nil {
					t.Error("a refused --claims still rewrote the run's manifest")
				}
				return
			}
			if err != nil {
				t.Fatalf("runReport: %v\n%s", err, stderr.String())
			}
			if strings.Contains(c.manifest, "role: control") {
				mi, err := record.ReadManifestInfo(run)
				if v, _ := mi.Variants.Get("platform"); err != nil || v.Role != "control" {
					t.Errorf("the edited manifest's role is not in the run's manifest.yaml: %+v %v", v, err)
				}
			}
			kept, _ := os.ReadFile(filepath.Join(run, record.PreviousManifestFile))
			if !bytes.Equal(kept, asRun) {
				t.Error("manifest.previous.yaml is not the manifest as run")
			}
			now, err := record.ReadVerdictsFile(run, record.VerdictsFile)
			if err != nil {
				t.Fatal(err)
			}
			v := verdicts.Find(now, "webflux-event-loops-only")
			if v == nil || v.Status != "supported" || !strings.Contains(v.Evidence[0], "new claim") {
				t.Fatalf("added claim: %+v; want supported (4 event loops in every trial) and marked as new", v)
			}
		})
	}
	if err := runReport(context.Background(), []string{"--claims", "x.yaml", src}, io.Discard, io.Discard); err == nil {
		t.Error("--claims without --reevaluate was accepted")
	}
}

// TestDirtyWarning: a re-judge by a build of uncommitted code says so
// before it stamps that version on every verdict, and so does a build
// with no version ("dev"); a committed build says nothing.
func TestDirtyWarning(t *testing.T) {
	for _, tc := range []struct {
		version string
		warn    bool
		why     string
	}{
		{"26c47b35-dirty", true, "git describe --dirty of a tree with edits: the verdicts could not be reproduced from a commit"},
		{"v0.3.0-12-g26c47b35-dirty", true, "a tagged describe is dirty the same way"},
		{"v0.0.0-20261203185719-28112002eaaa+dirty", true, "go build's pseudo-version of a tree with edits (no ldflags)"},
		{"26c47b35", false, "a committed build"},
		{"dev", true, "a build without a version (go test, go run): its verdicts name no commit (event-loop-starvation's published re-judge says \"dev\")"},
		{"(devel)", true, "go build without VCS stamping: no commit either"},
		{"dirty-branch-1a2b3c", false, "'dirty' inside a name is not the -dirty suffix"},
	} {
		got := dirtyWarning("data/x/1", tc.version)
		if (got != "") != tc.warn {
			t.Errorf("%s: %q gave %q", tc.why, tc.version, got)
		}
		if tc.warn && (!strings.Contains(got, "data/x/1") || !strings.Contains(got, tc.version) || !strings.Contains(got, "commit")) {
			t.Errorf("%s: the warning should name the run, the version and the fix: %q", tc.why, got)
		}
	}
}
