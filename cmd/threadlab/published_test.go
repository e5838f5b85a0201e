package main

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/render/report"
	"github.com/threadlab/threadlab/store/record"
)

// TestPublishedVerdictsCurrent re-judges the run every experiment's page
// headlines (report.HeadlineOf over the committed data/) with today's code,
// the way `threadlab report --reevaluate` does, and fails when a published
// verdict would read otherwise: its status, outcome, reason, estimate,
// interval or p-value. A change to the judging code (statistics, steady
// state, claim rules) then cannot leave the site showing verdicts that the
// code in the same commit no longer reaches; the failure names each run and
// the command that brings it up to date. The measurements are the run's, so
// only the reading can differ.
func TestPublishedVerdictsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("re-judges every published run (about 15 s): not with -short")
	}
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "experiments", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalog manifests under experiments/ (%v)", err)
	}
	sort.Strings(files)
	judged := 0
	for _, f := range files {
		m, err := experiments.Load(f, "")
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		h, err := report.HeadlineOf(filepath.Join(root, "data"), m.Name)
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if h.Run == "" {
			continue
		}
		judged++
		t.Run(m.Name, func(t *testing.T) {
			published, err := record.ReadVerdictsFile(h.Dir, record.VerdictsFile)
			if err != nil {
				t.Fatal(err)
			}
			now := rejudgeAside(t, h.Dir)
			if diffs := verdictDiffs(published, now); len(diffs) > 0 {
				rel, _ := filepath.Rel(root, h.Dir)
				t.Errorf("%s's published verdicts are not what today's code decides on its data:\n  %s\n"+
					"re-judge it and re-render the site, then commit both: bin/threadlab report --reevaluate %s && bin/threadlab site",
					rel, strings.Join(diffs, "\n  "), rel)
			}
		})
	}
	if judged == 0 {
		t.Fatal("no experiment under data/ has a headline run: nothing was re-judged")
	}
}

// rejudgeAside copies the run in dir aside and judges it there as
// reevaluateRun does (rejudge), without writing anything under data/.
func rejudgeAside(t *testing.T, dir string) []record.Verdict {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), filepath.Base(dir))
	copyDir(t, dir, tmp)
	r, err := record.Read(tmp)
	if err != nil {
		t.Fatal(err)
	}
	m, err := experiments.Parse(filepath.Join(dir, record.ManifestFile), r.Manifest, "")
	if err != nil {
		t.Fatalf("the run's manifest no longer loads: %v", err)
	}
	now, err := rejudge(tmp, m, r, "test")
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// verdictDiffs lists, one line per claim and field, where now reads
// otherwise than published. Numbers agree within a relative 1e-9 (the
// bootstrap is seeded; JSON round-trips floats exactly, arithmetic order
// may not).
func verdictDiffs(published, now []record.Verdict) []string {
	byID := map[string]record.Verdict{}
	for _, v := range now {
		byID[v.ID] = v
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range published {
		seen[p.ID] = true
		n, ok := byID[p.ID]
		if !ok {
			out = append(out, fmt.Sprintf("claim %s: published, but today's manifest of the run has no such claim", p.ID))
			continue
		}
		for _, d := range []struct {
			field    string
			was, now string
		}{
			{"status", p.Status, n.Status},
			{"outcome", p.Outcome, n.Outcome},
			{"reason", p.Reason, n.Reason},
			{"leans", p.Leans, n.Leans},
			{"direction", fmt.Sprint(p.Direction), fmt.Sprint(n.Direction)},
		} {
			if d.was != d.now {
				out = append(out, fmt.Sprintf("claim %s: %s published %q, today %q", p.ID, d.field, d.was, d.now))
			}
		}
		for _, d := range []struct {
			field    string
			was, now float64
		}{
			{"ratio", p.Ratio, n.Ratio}, {"ci_low", p.Low, n.Low}, {"ci_high", p.High, n.High},
			{"p", p.P, n.P}, {"direction_p", p.DirectionP, n.DirectionP},
		} {
			if !closeTo(d.was, d.now) {
				out = append(out, fmt.Sprintf("claim %s: %s published %g, today %g", p.ID, d.field, d.was, d.now))
			}
		}
	}
	for _, n := range now {
		if !seen[n.ID] {
			out = append(out, fmt.Sprintf("claim %s: decided today, not published", n.ID))
		}
	}
	return out
}

func closeTo(a, b float64) bool {
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// TestVerdictDiffs: what counts as a published verdict read otherwise.
func TestVerdictDiffs(t *testing.T) {
	base := record.Verdict{ID: "a", Status: "supported", Outcome: "supported", Reason: "clears", Ratio: 1.5, Low: 1.2, High: 1.8, P: 0.01}
	edit := func(f func(v *record.Verdict)) []record.Verdict { v := base; f(&v); return []record.Verdict{v} }
	cases := []struct {
		why  string
		now  []record.Verdict
		want []string // substrings of the diff lines, in order; none: no diff
	}{
		{"the same verdict, version and evidence aside", edit(func(v *record.Verdict) { v.Version, v.Evidence = "other", []string{"x"} }), nil},
		{"a float off in the last bits is the same number", edit(func(v *record.Verdict) { v.Ratio = math.Nextafter(1.5, 2) }), nil},
		{"another status", edit(func(v *record.Verdict) { v.Status = "inconclusive" }), []string{`claim a: status published "supported", today "inconclusive"`}},
		{"a reworded reason is what the page would say otherwise", edit(func(v *record.Verdict) { v.Reason = "clears the bound" }), []string{"claim a: reason"}},
		{"a moved interval", edit(func(v *record.Verdict) { v.Low = 1.19 }), []string{"claim a: ci_low published 1.2, today 1.19"}},
		{"a claim gone from the run's manifest", nil, []string{"claim a: published, but"}},
		{"a claim the page does not show", append(edit(func(*record.Verdict) {}), record.Verdict{ID: "b"}), []string{"claim b: decided today, not published"}},
	}
	for _, c := range cases {
		t.Run(c.why, func(t *testing.T) {
			got := verdictDiffs([]record.Verdict{base}, c.now)
			if len(got) != len(c.want) {
				t.Fatalf("diffs %q, want %d like %q", got, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("diff %q does not say %q", got[i], w)
				}
			}
		})
	}
}
