package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadCSVRefusesHostileRows: a trials.csv or summary.csv value
// threadlab never writes is refused with the file, line and column, and
// a value the decoder cannot read names its column, not its index.
func TestReadCSVRefusesHostileRows(t *testing.T) {
	const trialsHead = "variant,point,group,trial,seq,valid,reason,started,requests,errors,error_pct,rps,wall_ms,peak_hikari_pending,retry\n"
	const good = "platform,,main,1,1,true,,2026-12-01T00:00:00Z,300,0,0,650.5,955.2,0,false\n"
	const sumHead = "variant,point,group,metric,n,median,ci_low,ci_high,ci_level,min,max,mean,iqr,cv_pct,flags\n"
	const sumGood = "platform,,main,wall_ms,5,955,NaN,NaN,0,950,960,955,2,0.4,\n"
	for _, c := range []struct {
		why, file, text, want string
	}{
		{"+Inf wall time: it cleared a claim of at least 1.1x", TrialsFile, trialsHead + good + strings.Replace(good, "955.2", "+Inf", 1),
			"line 3, column wall_ms: +Inf is not a finite measurement"},
		{"-Inf", TrialsFile, trialsHead + strings.Replace(good, "955.2", "-Inf", 1), "line 2, column wall_ms: -Inf is not a finite"},
		{"a negative time", TrialsFile, trialsHead + strings.Replace(good, "955.2", "-300", 1), "line 2, column wall_ms: -300 is negative"},
		{"negative requests", TrialsFile, trialsHead + strings.Replace(good, ",300,0,", ",-10,0,", 1), "line 2, column requests: -10 is negative"},
		{"a negative fork id", "warmup.csv", trialsHead + strings.Replace(good, "platform,,main,1,", "platform,,main,-1,", 1), "line 2, column trial: -1 is negative"},
		{"more errors than requests", TrialsFile, trialsHead + strings.Replace(good, ",300,0,", ",300,1000000,", 1), "line 2, column errors: 1000000 errors of 300 requests"},
		{"NaN in a whole-number column names the column", TrialsFile, trialsHead + strings.Replace(good, ",0,false", ",NaN,false", 1),
			`line 2, column peak_hikari_pending: "NaN" is not a whole number`},
		{"a bool that is not one", TrialsFile, trialsHead + strings.Replace(good, "true", "maybe", 1), `line 2, column valid: "maybe" is not true or false`},
		{"a column twice", TrialsFile, strings.Replace(trialsHead, "rps,", "rps,rps,", 1) + strings.Replace(good, "650.5,", "650.5,1,", 1), `line 1: column "rps" appears twice`},
		{"summary median NaN: it won the headline", SummaryFile, sumHead + strings.Replace(sumGood, ",955,NaN", ",NaN,NaN", 1), "line 2, column median: NaN for a cell of 5 trials"},
		{"summary median negative", SummaryFile, sumHead + strings.Replace(sumGood, ",955,NaN", ",-5,NaN", 1), "line 2, column median: -5 is negative"},
		{"summary median outside its range", SummaryFile, sumHead + strings.Replace(sumGood, ",955,NaN", ",999,NaN", 1), "line 2, column median: 999 outside min 950 .. max 960"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, c.file), []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		if c.file == SummaryFile {
			_, err = ReadCSV[Summary](dir, c.file)
		} else {
			_, err = ReadCSV[Trial](dir, c.file)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Join(dir, c.file)) {
			t.Errorf("%s: err %v, want the path and %q", c.why, err, c.want)
		}
	}
	for _, c := range []struct {
		why, file, text, want string
	}{
		{"an infinite percentile in latency.csv", LatencyFile, "variant,point,group,trial,percentile,ms,fork,iteration\nplatform,,main,1,99,+Inf,1,1\n", "line 2, column ms: +Inf is not a finite"},
		{"a NaN percentile value", LatencyFile, "variant,point,group,trial,percentile,ms,fork,iteration\nplatform,,main,1,99,NaN,1,1\n", "line 2, column ms: NaN where a measurement belongs"},
		{"a percentile above 100", LatencyFile, "variant,point,group,trial,percentile,ms,fork,iteration\nplatform,,main,1,999,5,1,1\n", "line 2, column percentile: 999 is above 100"},
		{"a negative per-second p99 in series.csv", SeriesFile, "variant,point,trial,group,t_s,requests,errors,p50_ms,p99_ms\nplatform,,1,main,0,10,0,5,-7\n", "line 2, column p99_ms: -7 is negative"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, c.file), []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		if c.file == LatencyFile {
			_, err = ReadCSV[Quantile](dir, c.file)
		} else {
			_, err = ReadCSV[Sample](dir, c.file)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.why, err, c.want)
		}
	}
	// What threadlab writes reads back: NaN intervals of too few trials,
	// an old file's missing columns.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte(sumHead+sumGood), 0o644); err != nil {
		t.Fatal(err)
	}
	if rows, err := ReadCSV[Summary](dir, SummaryFile); err != nil || len(rows) != 1 {
		t.Errorf("a good summary: %v, %v", rows, err)
	}
	if err := os.WriteFile(filepath.Join(dir, TrialsFile), []byte(trialsHead+good), 0o644); err != nil {
		t.Fatal(err)
	}
	if rows, err := ReadCSV[Trial](dir, TrialsFile); err != nil || len(rows) != 1 || rows[0].WallMs != 955.2 {
		t.Errorf("a good trial: %v, %v", rows, err)
	}
}
