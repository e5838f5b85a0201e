package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/judge/diff"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/measure/metric/metrictest"
	"github.com/threadlab/threadlab/store/record"
)

// TestOneDefIsEnough adds a metric the way a contributor would, one
// metric.Def that reads it from the trial, and finds it in the run page's
// trial table, the run's comparison page (compare.html) and threadlab
// diff's markdown and text, with no other change: every default list asks
// the metric home. (comparisons.csv asks it the same way, in
// pipeline/aggregate.go; its rows are computed when a run is aggregated,
// not when it is rendered.)
func TestOneDefIsEnough(t *testing.T) {
	const name = "tail_gap_ms"
	metrictest.Add(t, metric.Def{Name: name, Label: "p99 minus p50 latency (ms)", Unit: "ms", Kind: metric.Latency, Claim: true,
		Default: metric.InTrials | metric.InComparisons | metric.InDiff, Source: "test: how far the tail sits from the middle",
		Value: func(tr record.Trial) float64 { return tr.P99Ms - tr.P50Ms }})
	gap := func(tr record.Trial) string { return num(tr.P99Ms - tr.P50Ms) }

	old, err := record.Read(filepath.Join(fixtureDir, "io-bound", ioOld))
	if err != nil {
		t.Fatal(err)
	}
	cur, err := record.Read(filepath.Join(fixtureDir, "io-bound", ioRun))
	if err != nil {
		t.Fatal(err)
	}

	// The run page's trial table: a column headed by the name, after the
	// other latencies' kind-mates, holding each trial's value.
	v, err := newRunView(cur, "assets/", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(v.TrialCols, name)
	if col < 0 {
		t.Fatalf("trial table columns %q lack %s", v.TrialCols, name)
	}
	if p99 := slices.Index(v.TrialCols, "p99_ms"); col != p99+1 {
		t.Errorf("%s is column %d, want %d: right after p99_ms, the last latency before it in table order (%q)", name, col, p99+1, v.TrialCols)
	}
	if len(v.Trials) != len(cur.Trials) {
		t.Fatalf("%d trial rows for %d trials", len(v.Trials), len(cur.Trials))
	}
	for _, row := range v.Trials {
		seq, _ := strconv.Atoi(row.Cells[0])
		i := slices.IndexFunc(cur.Trials, func(tr record.Trial) bool { return tr.Seq == seq && tr.Group == row.Cells[3] })
		if i < 0 {
			t.Fatalf("row %q names no trial", row.Cells)
		}
		if got, want := row.Cells[col], gap(cur.Trials[i]); got != want {
			t.Errorf("trial %d (%s): %s cell %q, want %q (p99 %g − p50 %g)", seq, row.Cells[3], name, got, want, cur.Trials[i].P99Ms, cur.Trials[i].P50Ms)
		}
	}

	// The rendered pages: the run page's table header and the comparison
	// page's table for the metric.
	out := t.TempDir()
	for _, r := range []*record.Run{old, cur} {
		if _, err := Run(r, out); err != nil {
			t.Fatal(err)
		}
	}
	page, err := os.ReadFile(filepath.Join(out, "io-bound", ioRun, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("<th>"+name+"</th>")) {
		t.Errorf("the run page has no trial table column %s", name)
	}
	cmp, err := os.ReadFile(filepath.Join(out, "io-bound", ioRun, CompareFile))
	if err != nil {
		t.Fatalf("no comparison page: %v", err)
	}
	if !bytes.Contains(cmp, []byte(`id="metric-`+name+`"`)) {
		t.Errorf("the comparison page has no table for %s", name)
	}

	// threadlab diff: the same comparison as markdown and as text, with
	// the old and new medians of the new metric.
	res, err := diff.Runs(old, cur, diff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Tables, func(tb diff.Table) bool { return tb.Metric == name })
	if i < 0 {
		t.Fatalf("diff tables %v lack %s", tableNames(res.Tables), name)
	}
	tb := res.Tables[i]
	if len(tb.Rows) == 0 || tb.HigherIsBetter {
		t.Fatalf("diff table of %s: %d rows, higher is better %v: want a row per cell, lower is better", name, len(tb.Rows), tb.HigherIsBetter)
	}
	if r := tb.Rows[0]; r.Old.N == 0 || r.New.N == 0 {
		t.Errorf("diff table of %s: first row has n %d old and %d new, want both runs' forks", name, r.Old.N, r.New.N)
	}
	var md, text bytes.Buffer
	if err := res.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := res.Text(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "### "+strings.ReplaceAll(name, "_", `\_`)) && !strings.Contains(md.String(), "### "+name) {
		t.Errorf("threadlab diff --format markdown has no table for %s:\n%s", name, md.String())
	}
	if !strings.Contains(text.String(), name) {
		t.Errorf("threadlab diff has no table for %s:\n%s", name, text.String())
	}
}

func tableNames(ts []diff.Table) []string {
	var out []string
	for _, tb := range ts {
		out = append(out, tb.Metric)
	}
	return out
}
