package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/judge/verdicts"
	"github.com/threadlab/threadlab/pipeline"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// reevaluateRun recomputes the verdicts of one run directory with today's
// rules (the manifest and trials it recorded, its seed) and rewrites
// verdicts.json. The verdicts as first recorded are kept byte for byte in
// verdicts.previous.json (written once, so re-evaluating again still
// compares with the original), and every verdict whose status or reason
// differs carries a Previous entry and an evidence line saying what it was
// and which version decides it now, so the report shows the change from
// the data alone. It prints one line per changed claim.
//
// With claimsFrom (a manifest file), the claims are that file's, applied
// with the run's profile, provided it describes the same measurement
// (experiments.SameMeasurement): a reviewer who edits a claim in a pull
// request sees its verdict on the committed data without a rerun. The
// run's manifest.yaml then carries the new claims, and the manifest as run
// is kept in manifest.previous.yaml (written once).
func reevaluateRun(dir, claimsFrom string, stdout io.Writer) error {
	// It rewrites verdicts.json and manifest.yaml: not while a run or a
	// resume writes the directory (record.Lock).
	if record.CheckDir(dir) == nil { // else Read says what is wrong
		release, err := record.Lock(dir)
		if err != nil {
			return err
		}
		defer release()
	}
	r, err := record.Read(dir)
	if err != nil {
		return err
	}
	warnProblems(stdout, r)
	manifest := filepath.Join(dir, record.ManifestFile)
	if len(r.Manifest) == 0 {
		return fmt.Errorf("%s is missing: a run without its manifest cannot be re-evaluated (rerun the experiment)", manifest)
	}
	m, err := experiments.Parse(manifest, r.Manifest, "")
	if err != nil {
		return fmt.Errorf("re-evaluate %s: %w (the run's manifest no longer passes today's validation; fix the claim there or rerun)", dir, err)
	}
	if claimsFrom != "" {
		if m, err = withClaimsOf(dir, m, r.Meta.Profile, claimsFrom, stdout); err != nil {
			return err
		}
	}
	if err := verdicts.KeepPrevious(dir); err != nil {
		return err
	}
	old, err := record.ReadVerdictsFile(dir, record.PreviousVerdictsFile)
	if err != nil {
		return fmt.Errorf("%s: %w (restore it from verdicts.json of the original run, or delete it to compare with the current one)",
			filepath.Join(dir, record.PreviousVerdictsFile), err)
	}
	version := pipeline.Version()
	if w := dirtyWarning(dir, version); w != "" {
		fmt.Fprintln(stdout, w)
	}
	now, err := rejudge(dir, m, r, version)
	if err != nil {
		return err
	}
	changes := verdicts.MarkChanges(old, now, version)
	for _, c := range changes {
		fmt.Fprintf(stdout, "%s: claim %s: %s\n", dir, c.ID, c.Why)
	}
	if err := record.WriteJSON(dir, record.VerdictsFile, now); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: re-evaluated %d claims with threadlab %s, %d changed\n", dir, len(now), version, len(changes))
	return nil
}

// rejudge recomputes the derived files of the run r in dir (summary.csv,
// comparisons.csv, steady.json: so the report's tables read the trials as
// the verdicts now do) and judges m's claims on it as the claims stage
// judges a new run (verdicts.OfRun), recording version as the decider.
func rejudge(dir string, m *experiments.Manifest, r *record.Run, version string) ([]record.Verdict, error) {
	if err := pipeline.Reaggregate(context.Background(), dir, m, r.Meta, nil); err != nil {
		return nil, fmt.Errorf("re-aggregate %s: %w", dir, err)
	}
	return verdicts.OfRun(dir, m, r.Meta, r.Fingerprint, r.Trials, stats.Options{Seed: m.Seed, Version: version})
}

// withClaimsOf returns the run's manifest with the claims of the manifest
// file claimsFrom (loaded with the run's profile) and its variants' roles,
// after checking that the
// file describes the measurement the run made, and writes it as the run's
// manifest.yaml, keeping the first one as manifest.previous.yaml.
func withClaimsOf(dir string, run *experiments.Manifest, profile, claimsFrom string, stdout io.Writer) (*experiments.Manifest, error) {
	edited, err := experiments.Load(claimsFrom, profile)
	if err != nil {
		return nil, err
	}
	if edited.Name != run.Name {
		return nil, fmt.Errorf("--claims %s is experiment %q, the run %s is %q: give the manifest of the run's own experiment", claimsFrom, edited.Name, dir, run.Name)
	}
	diff, same, err := experiments.SameMeasurement(run, edited)
	if err != nil {
		return nil, err
	}
	if !same {
		return nil, fmt.Errorf("--claims %s describes another measurement than the run %s (%s): its claims cannot be judged on these data; rerun the experiment instead", claimsFrom, dir, diff)
	}
	c := *run
	c.Claims = edited.Claims
	// A variant's role (role: control) only describes it, as the claims
	// judge: it comes from the edited manifest too.
	c.Variants = slices.Clone(run.Variants)
	for i := range c.Variants {
		if v, ok := edited.Variant(c.Variants[i].Name); ok {
			c.Variants[i].Role = v.Role
		}
	}
	data, err := experiments.Marshal(&c)
	if err != nil {
		return nil, err
	}
	prev := filepath.Join(dir, record.PreviousManifestFile)
	if _, err := os.Stat(prev); errors.Is(err, os.ErrNotExist) {
		orig, err := os.ReadFile(filepath.Join(dir, record.ManifestFile))
		if err != nil {
			return nil, err
		}
		if err := record.WriteFile(dir, record.PreviousManifestFile, orig); err != nil {
			return nil, err
		}
	}
	if err := record.WriteFile(dir, record.ManifestFile, data); err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "%s: claims taken from %s (%d claims; the manifest as run is kept in %s)\n", dir, claimsFrom, len(c.Claims), record.PreviousManifestFile)
	return &c, nil
}

// dirtyWarning is the line re-evaluating with a build of uncommitted code
// prints, "" for a committed one. Every verdict records the version that
// decided it, so a published run re-judged that way says its claims were
// judged by code nobody can check out (session 17's re-judge stamped
// 26c47b35-dirty on every verdict of a page). Said, not refused: a
// reviewer trying a rule locally is what --reevaluate is for. A build
// with no version at all ("dev") is warned of the same way.
func dirtyWarning(dir, version string) string {
	// make build stamps git describe --dirty's "-dirty"; a plain go build
	// falls back to the module's pseudo-version, "+dirty".
	if version == "dev" || version == "(devel)" || version == "" {
		// go run, go test or a go build without -ldflags and without VCS
		// stamping: no commit at all (event-loop-starvation
		// 20261202T170714Z's verdicts say "dev").
		return fmt.Sprintf("%s: warning: this threadlab build carries no version (%q: go run, go test, or go build without make), and every verdict will record that; for a published run, build with make build from a commit", dir, version)
	}
	if !strings.HasSuffix(version, "-dirty") && !strings.HasSuffix(version, "+dirty") {
		return ""
	}
	return fmt.Sprintf("%s: warning: threadlab %s is built from a tree with uncommitted changes, and its verdicts will say so; for a published run, commit and rebuild first (make build)", dir, version)
}

// warnProblems prints what record.Read found wrong in a run without
// refusing it (a torn or empty trials.csv, a run.json without a name).
func warnProblems(w io.Writer, r *record.Run) {
	for _, p := range r.Problems {
		fmt.Fprintf(w, "warning: %s: %s\n", r.Dir, p)
	}
}
