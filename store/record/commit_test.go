package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trialFiles is every row one finished trial writes, in the pipeline's
// order: warm-up first, then series and latency, trials.csv last.
type trialFiles struct {
	warmup  []Trial
	series  []Sample
	latency []Quantile
	trials  []Trial
}

func trialOf(variant string, trial, seq int) trialFiles {
	var f trialFiles
	for _, g := range []string{"main", "background"} {
		f.warmup = append(f.warmup, Trial{Variant: variant, Group: g, Trial: trial, Seq: seq, Reason: "warm-up round 1"})
		f.trials = append(f.trials, Trial{Variant: variant, Group: g, Trial: trial, Seq: seq, Valid: true, RPS: float64(100 * seq)})
		for s := range 3 {
			f.series = append(f.series, Sample{Variant: variant, Group: g, Trial: trial, T: float64(s), Requests: int64(seq)})
		}
		for _, q := range []float64{50, 99} {
			f.latency = append(f.latency, Quantile{Variant: variant, Group: g, Trial: trial, Percentile: q, Ms: float64(seq)})
		}
	}
	return f
}

// step is one append of a trial; crashAfter stops a trial after that many.
var steps = []func(dir string, f trialFiles) error{
	func(dir string, f trialFiles) error { return AppendCSV(dir, WarmupFile, f.warmup) },
	func(dir string, f trialFiles) error { return AppendCSV(dir, SeriesFile, f.series) },
	func(dir string, f trialFiles) error { return AppendCSV(dir, LatencyFile, f.latency) },
	func(dir string, f trialFiles) error { return AppendCSV(dir, TrialsFile, f.trials) },
}

func writeTrial(t *testing.T, dir string, f trialFiles, crashAfter int) {
	t.Helper()
	for _, s := range steps[:crashAfter] {
		if err := s(dir, f); err != nil {
			t.Fatal(err)
		}
	}
}

// runDir is an empty run directory: run.json only.
func runDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteJSON(dir, RunFile, Meta{ID: "r", State: "running"}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func appendRaw(t *testing.T, dir, name, s string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// cutBytes removes the last n bytes of a file: a write that power loss cut short.
func cutBytes(t *testing.T, dir, name string, n int64) {
	t.Helper()
	path := filepath.Join(dir, name)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()-n); err != nil {
		t.Fatal(err)
	}
}

// TestResumeAfterCrash crashes the second trial at every point between its
// appends, and in the middle of lines, then does what a resume does:
// Repair, redo the trial, read back. Every case must read back exactly two
// trials with their own rows, no duplicates, nothing glued together.
func TestResumeAfterCrash(t *testing.T) {
	for _, tc := range []struct {
		why   string
		crash func(t *testing.T, dir string, f trialFiles)
	}{
		{"crash after the warm-up rows (warmup.csv duplicated on resume)", func(t *testing.T, dir string, f trialFiles) { writeTrial(t, dir, f, 1) }},
		{"crash after series.csv (series rows duplicated on resume)", func(t *testing.T, dir string, f trialFiles) { writeTrial(t, dir, f, 2) }},
		{"crash after latency.csv", func(t *testing.T, dir string, f trialFiles) { writeTrial(t, dir, f, 3) }},
		{"crash after trials.csv but before the commit line", func(t *testing.T, dir string, f trialFiles) {
			writeTrial(t, dir, f, 3)
			if err := appendRows(dir, TrialsFile, f.trials); err != nil {
				t.Fatal(err)
			}
		}},
		{"torn last line of trials.csv (the next row was glued onto it)", func(t *testing.T, dir string, f trialFiles) {
			writeTrial(t, dir, f, 3)
			appendRaw(t, dir, TrialsFile, "b,,main,2,2,tr")
		}},
		{"trials.csv cut at a line boundary: one group row of two made it", func(t *testing.T, dir string, f trialFiles) {
			writeTrial(t, dir, f, 3)
			if err := appendRows(dir, TrialsFile, f.trials[:1]); err != nil {
				t.Fatal(err)
			}
		}},
		{"torn commit line", func(t *testing.T, dir string, f trialFiles) {
			writeTrial(t, dir, f, 3)
			if err := appendRows(dir, TrialsFile, f.trials); err != nil {
				t.Fatal(err)
			}
			appendRaw(t, dir, CommitsFile, "b,,2,2")
		}},
		{"torn series line", func(t *testing.T, dir string, f trialFiles) {
			writeTrial(t, dir, f, 2)
			cutBytes(t, dir, SeriesFile, 5)
		}},
		{"torn warm-up line, nothing else written", func(t *testing.T, dir string, f trialFiles) {
			writeTrial(t, dir, f, 1)
			cutBytes(t, dir, WarmupFile, 7)
		}},
	} {
		t.Run(tc.why, func(t *testing.T) {
			dir := runDir(t)
			first, second := trialOf("a", 1, 1), trialOf("b", 1, 2)
			writeTrial(t, dir, first, len(steps))
			tc.crash(t, dir, second)

			// Before any resume, a reader already sees only committed trials.
			r, err := Read(dir)
			if err != nil {
				t.Fatalf("read after the crash: %v", err)
			}
			if len(r.Trials) != 2 || len(r.Series) != 6 || len(r.Latency) != 4 {
				t.Errorf("after the crash: %d trial rows, %d series, %d latency; want only the first trial's 2, 6, 4", len(r.Trials), len(r.Series), len(r.Latency))
			}

			if _, err := Repair(dir); err != nil {
				t.Fatalf("repair: %v", err)
			}
			writeTrial(t, dir, second, len(steps)) // the resume redoes the trial
			checkTwoTrials(t, dir)
		})
	}
}

// checkTwoTrials reads dir back the way aggregation and reports do and
// expects trials a/1 and b/1 with exactly their own rows.
func checkTwoTrials(t *testing.T, dir string) {
	t.Helper()
	r, err := Read(dir)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	byVariant := map[string][4]int{}
	for _, x := range r.Trials {
		c := byVariant[x.Variant]
		c[0]++
		byVariant[x.Variant] = c
	}
	for _, x := range r.Series {
		c := byVariant[x.Variant]
		c[1]++
		byVariant[x.Variant] = c
	}
	for _, x := range r.Latency {
		c := byVariant[x.Variant]
		c[2]++
		byVariant[x.Variant] = c
	}
	warm, err := ReadCSV[Trial](dir, WarmupFile)
	if err != nil {
		t.Fatalf("read warm-up: %v", err)
	}
	for _, x := range warm {
		c := byVariant[x.Variant]
		c[3]++
		byVariant[x.Variant] = c
	}
	want := [4]int{2, 6, 4, 2} // trial rows, series, latency, warm-up rows per trial
	for _, v := range []string{"a", "b"} {
		if byVariant[v] != want {
			t.Errorf("variant %s: trials/series/latency/warm-up rows %v, want %v", v, byVariant[v], want)
		}
	}
	if len(byVariant) != 2 {
		t.Errorf("rows of variants %v: want a and b only (a glued line reads as a third)", byVariant)
	}
	for _, x := range r.Trials {
		if x.Group != "main" && x.Group != "background" || x.RPS != float64(100*x.Seq) {
			t.Errorf("row %+v: garbled", x)
		}
	}
	commits, _ := ReadCSV[Commit](dir, CommitsFile)
	if len(commits) != 2 {
		t.Errorf("%d commit lines %v, want 2", len(commits), commits)
	}
}

// TestAppendCutsTornLine: an append after a crash mid-line must start on a
// line of its own. It used to glue the new row onto the partial one, after
// which the whole file failed to parse.
func TestAppendCutsTornLine(t *testing.T) {
	dir := t.TempDir()
	if err := AppendCSV(dir, SeriesFile, []Sample{{Variant: "a", Trial: 1}}); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, dir, SeriesFile, "a,,1,main,3.0,17,0,1.5")
	if err := AppendCSV(dir, SeriesFile, []Sample{{Variant: "a", Trial: 2}}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCSV[Sample](dir, SeriesFile)
	if err != nil || len(got) != 2 || got[1].Trial != 2 {
		t.Fatalf("after a torn line and an append: %+v, %v; want the two whole rows", got, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, SeriesFile))
	if strings.Contains(string(b), "1.5a") || strings.Count(string(b), "\n") != 3 {
		t.Errorf("file holds a glued or extra line:\n%s", b)
	}
}

// TestAppendAfterTornHeader: a crash while writing the very first line
// leaves a partial header; the next append writes a whole one.
func TestAppendAfterTornHeader(t *testing.T) {
	dir := t.TempDir()
	appendRaw(t, dir, LatencyFile, "variant,poi")
	if err := AppendCSV(dir, LatencyFile, []Quantile{{Variant: "a", Trial: 1, Percentile: 50, Ms: 2}}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCSV[Quantile](dir, LatencyFile)
	if err != nil || len(got) != 1 || got[0].Ms != 2 {
		t.Fatalf("got %+v, %v; want the one row under a whole header", got, err)
	}
}

// TestRepairLegacyRun: a run directory from before commits.csv existed
// keeps all its trials, and appends after the repair commit as usual.
func TestRepairLegacyRun(t *testing.T) {
	dir := runDir(t)
	first := trialOf("a", 1, 1)
	if err := WriteCSV(dir, TrialsFile, first.trials); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(dir, SeriesFile, first.series); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(dir, LatencyFile, first.latency); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(dir, WarmupFile, first.warmup); err != nil {
		t.Fatal(err)
	}
	if r, err := Read(dir); err != nil || len(r.Trials) != 2 {
		t.Fatalf("legacy run reads %v trials (%v), want 2", len(r.Trials), err)
	}
	rep, err := Repair(dir)
	if err != nil || !rep.Legacy {
		t.Fatalf("repair: %+v, %v; want the journal made from trials.csv", rep, err)
	}
	writeTrial(t, dir, trialOf("b", 1, 2), len(steps))
	checkTwoTrials(t, dir)
}

// TestRepairSaysWhat: the resume log line names what was cut and dropped.
func TestRepairSaysWhat(t *testing.T) {
	dir := t.TempDir()
	writeTrial(t, dir, trialOf("a", 1, 1), len(steps))
	writeTrial(t, dir, trialOf("b", 1, 2), 2)
	appendRaw(t, dir, SeriesFile, "b,,1,ma")
	rep, err := Repair(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.String()
	for _, want := range []string{"cut a torn last line of 7 bytes from series.csv", "dropped 6 rows of unfinished trials from series.csv", "dropped 2 rows of unfinished trials from warmup.csv"} {
		if !strings.Contains(s, want) {
			t.Errorf("repair says %q, want %q in it", s, want)
		}
	}
	again, _ := Repair(dir)
	if again.String() != "" {
		t.Errorf("a second repair found %q: repair must leave a clean directory", again.String())
	}
}
