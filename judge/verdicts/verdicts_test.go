package verdicts

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// pendingManifest claims on peak_hikari_pending, a column runs recorded
// before issue 9 do not have (pool-sweep's published run): one absolute
// claim per variant and one claim on rps that needs pending as its
// precondition.
const pendingManifest = `name: pending
title: pending
question: where does the queue form?
variants:
  platform: {command: [./server, "{port}"]}
  virtual: {command: [./server, "{port}"]}
sweep:
  pool: {load: users, values: ["40"]}
load: {model: closed, users: 10, duration: 2s, requests: [{path: /io}]}
forks: 5
claims:
  - id: virtual-queues
    says: virtual threads queue at the pool
    check: {metric: peak_hikari_pending, variant: virtual, at_least: 10}
  - id: platform-does-not
    says: platform threads do not
    check: {metric: peak_hikari_pending, variant: platform, at_most: 1}
    design_fact: fewer threads than connections leave none waiting
  - id: rides
    says: virtual out-serves platform where it queues at the pool
    check: {metric: rps, compare: [virtual, platform], at_least: 1.5}
    requires: [{metric: peak_hikari_pending, variant: virtual, at_least: 10}]
`

// pendingTrials: five forks per variant, virtual with 60 pending and 3x
// the rate, platform with none.
func pendingTrials() []record.Trial {
	var out []record.Trial
	seq := 0
	for _, v := range []struct {
		name    string
		rps     float64
		pending int
	}{{"platform", 100, 0}, {"virtual", 300, 60}} {
		for f := 1; f <= 5; f++ {
			seq++
			out = append(out, record.Trial{Variant: v.name, Point: "pool=40", Group: "main", Fork: f, Trial: f, Iteration: 1, Seq: seq,
				Valid: true, Requests: 1000, RPS: v.rps + float64(f), PeakHikariPending: v.pending + f%2})
		}
	}
	return out
}

// todaysColumns is the header today's threadlab writes to trials.csv.
func todaysColumns(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	if err := record.WriteCSV(dir, record.TrialsFile, pendingTrials()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, record.TrialsFile))
	if err != nil {
		t.Fatal(err)
	}
	head, err := csv.NewReader(bytes.NewReader(b)).Read()
	if err != nil {
		t.Fatal(err)
	}
	return head
}

// writeTrialsHeader writes dir's trials.csv as a header of cols followed
// by body, as an older threadlab would have.
func writeTrialsHeader(t *testing.T, dir string, cols []string, body string) {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(cols); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	buf.WriteString(body)
	if err := os.WriteFile(filepath.Join(dir, record.TrialsFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func without(cols []string, drop string) []string {
	return slices.DeleteFunc(slices.Clone(cols), func(c string) bool { return c == drop })
}

// TestClaimOnUnrecordedColumn: a claim on a column the run's trials.csv
// lacks comes out inconclusive, leaning nowhere, with the reason, instead
// of being decided on the zeros the missing column reads as; a
// precondition on it could not be checked. With the column, or with an
// unknown header, the same data decide the claims.
func TestClaimOnUnrecordedColumn(t *testing.T) {
	m, err := experiments.Parse("pending.yaml", []byte(pendingManifest), "")
	if err != nil {
		t.Fatal(err)
	}
	today := todaysColumns(t)
	if !slices.Contains(today, "peak_hikari_pending") {
		t.Fatalf("trials.csv has no peak_hikari_pending column today (%v): the test's premise is gone", today)
	}
	old := without(today, "peak_hikari_pending")
	// rides reads rps, which is recorded: only its precondition is
	// unknown, so it keeps what its own data lean to.
	tests := []struct {
		name    string
		why     string
		columns []string
		zeros   bool              // the trials read the column as 0, as an old run's do
		want    map[string]string // claim -> status
		reason  map[string]string // claim -> fragment of the reason
	}{
		{name: "recorded", why: "today's header: the claims are decided on the measured peaks",
			columns: today,
			want:    map[string]string{"virtual-queues": stats.Supported, "platform-does-not": stats.Supported, "rides": stats.Supported}},
		{name: "header unknown", why: "a caller that knows no header (nil) gets every column treated as recorded",
			want: map[string]string{"virtual-queues": stats.Supported, "platform-does-not": stats.Supported, "rides": stats.Supported}},
		{name: "not recorded", why: "an old run reads the column as 0: virtual would be contradicted and platform supported on numbers never measured",
			columns: old, zeros: true,
			want: map[string]string{"virtual-queues": stats.Inconclusive, "platform-does-not": stats.Inconclusive, "rides": stats.Inconclusive},
			reason: map[string]string{
				"virtual-queues":    "this run's trials.csv has no peak_hikari_pending column",
				"platform-does-not": "rerun the experiment to decide it",
				"rides":             "a precondition could not be checked: this run's trials.csv has no peak_hikari_pending column",
			}},
		{name: "another column missing", why: "only claims on the missing column are affected",
			columns: without(today, "gc_count"),
			want:    map[string]string{"virtual-queues": stats.Supported, "platform-does-not": stats.Supported, "rides": stats.Supported}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trials := pendingTrials()
			if tt.zeros {
				for i := range trials {
					trials[i].PeakHikariPending = 0
				}
			}
			vs := Evaluate(m, trials, stats.Options{Seed: 1}, Host{Cores: 2, Columns: tt.columns})
			for _, v := range vs {
				if got := v.Status; got != tt.want[v.ID] {
					t.Errorf("%s: %s is %s (%s), want %s", tt.why, v.ID, got, v.Reason, tt.want[v.ID])
				}
				if frag := tt.reason[v.ID]; frag != "" && !strings.Contains(v.Reason, frag) {
					t.Errorf("%s: %s's reason %q lacks %q", tt.why, v.ID, v.Reason, frag)
				}
				if tt.zeros && v.ID != "rides" && (v.Leans != "" || v.Ratio != 0 || len(v.Points) > 0) {
					t.Errorf("%s: %s still reports a reading of the zeros: leans %q, ratio %v, %d points", tt.why, v.ID, v.Leans, v.Ratio, len(v.Points))
				}
			}
		})
	}
}

// TestTrialColumns: the header as the recording threadlab wrote it, read
// back from the run directory; an absent or empty file is unknown (nil).
func TestTrialColumns(t *testing.T) {
	dir := t.TempDir()
	if cols, err := TrialColumns(dir); err != nil || cols != nil {
		t.Errorf("no trials.csv: got %v, %v; want nil, nil (unknown, every column counts)", cols, err)
	}
	if err := os.WriteFile(filepath.Join(dir, record.TrialsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if cols, err := TrialColumns(dir); err != nil || cols != nil {
		t.Errorf("empty trials.csv: got %v, %v; want nil, nil", cols, err)
	}
	// An old run's file: today's rows written, then the column dropped, as
	// a threadlab before issue 9 wrote it.
	old := without(todaysColumns(t), "peak_hikari_pending")
	writeTrialsHeader(t, dir, old, strings.Repeat("x,", len(old)-1)+"x\n")
	cols, err := TrialColumns(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cols, old) {
		t.Errorf("got %v, want the file's header %v", cols, old)
	}
	if _, missing := (Host{Columns: cols}).unrecorded("peak_hikari_pending"); !missing {
		t.Error("peak_hikari_pending is not in the header, yet counts as recorded")
	}
	if _, missing := (Host{Columns: cols}).unrecorded("rps"); missing {
		t.Error("rps is in the header, yet counts as missing")
	}
}

// TestVerdictCarriesManifestNotes: a claim's design fact and its reason for
// differing from the seed reach verdicts.json, where the report reads them
// (the index leaves design facts out of its supported count).
func TestVerdictCarriesManifestNotes(t *testing.T) {
	src := strings.Replace(pendingManifest, "    says: virtual out-serves platform where it queues at the pool\n",
		"    says: virtual out-serves platform where it queues at the pool\n    differs: {cause: scale, why: the host is small}\n", 1)
	m, err := experiments.Parse("pending.yaml", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range Evaluate(m, pendingTrials(), stats.Options{Seed: 1}, Host{Cores: 2}) {
		switch v.ID {
		case "platform-does-not":
			if v.DesignFact != "fewer threads than connections leave none waiting" || v.Differs != nil {
				t.Errorf("%s: design fact %q, differs %+v; want the manifest's design fact only", v.ID, v.DesignFact, v.Differs)
			}
		case "rides":
			if v.DesignFact != "" || v.Differs == nil || v.Differs.Cause != "scale" || v.Differs.Why != "the host is small" {
				t.Errorf("%s: design fact %q, differs %+v; want the manifest's differs only", v.ID, v.DesignFact, v.Differs)
			}
		}
	}
}

// TestOfRun: judging a run directory reads the header of its trials.csv
// (a column an old run lacks keeps the claims on it inconclusive) and
// fails, naming the file, when series.csv cannot be read.
func TestOfRun(t *testing.T) {
	m, err := experiments.Parse("pending.yaml", []byte(pendingManifest), "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeTrialsHeader(t, dir, without(todaysColumns(t), "peak_hikari_pending"), "")
	trials := pendingTrials()
	for i := range trials {
		trials[i].PeakHikariPending = 0 // as an old run's rows read
	}
	vs, err := OfRun(dir, m, record.Meta{}, nil, trials, stats.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.ID != "rides" && (v.Status != stats.Inconclusive || !strings.Contains(v.Reason, "has no peak_hikari_pending column")) {
			t.Errorf("%s: %s (%s); want inconclusive, the column never recorded", v.ID, v.Status, v.Reason)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, record.SeriesFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := OfRun(dir, m, record.Meta{}, nil, trials, stats.Options{Seed: 1}); err == nil || !strings.Contains(err.Error(), record.SeriesFile) {
		t.Errorf("series.csv is a directory: error %v, want one naming %s", err, record.SeriesFile)
	}
}

// TestPending: between rounds of a sequential design, a claim stays
// pending while too few forks stand behind it and leaves the list once its
// data decide it; without claims nothing is pending.
func TestPending(t *testing.T) {
	src := strings.Replace(pendingManifest, "forks: 5\n", "forks: {min: 3, max: 8}\n", 1)
	m, err := experiments.Parse("pending.yaml", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	// rides alone and without its precondition: what decides is the fork count.
	rides := experiments.Claim{ID: "rides", Says: "virtual out-serves platform",
		Check: stats.Check{Metric: "rps", Compare: []string{"virtual", "platform"}, AtLeast: stats.F(1.5)}}
	trials := func(forks int) []record.Trial {
		var out []record.Trial
		for i, v := range []struct {
			name string
			rps  float64
		}{{"platform", 100}, {"virtual", 300}} {
			for f := 1; f <= forks; f++ {
				out = append(out, record.Trial{Variant: v.name, Point: "pool=40", Group: "main", Fork: f, Trial: f, Iteration: 1,
					Seq: i*forks + f, Valid: true, Requests: 1000, RPS: v.rps + float64(f)})
			}
		}
		return out
	}
	tests := []struct {
		name    string
		claims  []experiments.Claim
		forks   int
		pending int
		why     string
	}{
		{"two forks", []experiments.Claim{rides}, 2, 1, "below stats.MinReplicates forks no claim is decided: more forks can decide it"},
		{"max forks", []experiments.Claim{rides}, 8, 0, "8 forks 3x apart decide it at the last look"},
		{"no claims", nil, 2, 0, "nothing to decide: the caller runs every cell to its max"},
	}
	for _, tt := range tests {
		m.Claims = tt.claims
		got := Pending(m, trials(tt.forks), nil, stats.Options{Seed: 1})
		if len(got) != tt.pending {
			t.Errorf("%s: %d pending, want %d: %s", tt.name, len(got), tt.pending, tt.why)
		}
	}
}
