package trial

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/measure/telemetry"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/store/record"
)

func gapJob() replicate.Job {
	return replicate.Job{Cell: replicate.Cell{Variant: experiments.Variant{Name: "virtual"}, Point: map[string]string{"pool": "50"}}, Fork: 2}
}

func threeSeconds() *load.Result {
	res := &load.Result{Start: time.Unix(1772360100, 0), Groups: []load.GroupResult{{Name: "io", Wall: 2500 * time.Millisecond}}}
	total := hdrhistogram.New(1, 60_000_000, 3)
	for s := 0; s < 3; s++ {
		h := hdrhistogram.New(1, 60_000_000, 2)
		for i := 0; i < 100; i++ {
			_ = h.RecordValue(int64(300_000 + 1000*i + 50_000*s))
			_ = total.RecordValue(int64(300_000 + 1000*i + 50_000*s))
		}
		res.Groups[0].Series = append(res.Groups[0].Series, load.Second{T: s, Requests: 100, P50Ms: 350, P99Ms: 399, Latency: h})
	}
	res.Groups[0].Latency = total
	res.Groups[0].Requests = 300
	return res
}

// TestSeriesGap: a second the server sampler missed is empty in
// series.csv and reads back as missing, not as 0 (which drew JVM threads
// falling from 218 to 0 in the charts); a sample without a JVM scrape
// leaves only the JVM columns empty.
func TestSeriesGap(t *testing.T) {
	samples := []telemetry.Sample{
		{T: 0, CPUUserPct: 40, CPUSysPct: 10, RSSMB: 200, Threads: 40, JVM: true, JVMLiveThreads: 218, HeapUsedMB: 90},
		// second 1 missing
		{T: 2, CPUUserPct: 30, RSSMB: 210, Threads: 41, JVM: false},
	}
	rows := SeriesRows(gapJob(), 2, 2, 1, threeSeconds(), samples)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	dir := t.TempDir()
	if err := record.AppendCSV(dir, record.SeriesFile, rows); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, record.SeriesFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	header := strings.Split(lines[0], ",")
	col := func(line, name string) string {
		f := strings.Split(line, ",")
		for i, h := range header {
			if h == name {
				return f[i]
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	for _, c := range []struct {
		line      int
		col, want string
		reason    string
	}{
		{1, "jvm_live_threads", "218", "sampled"},
		{1, "target_cpu_pct", "50", "user + sys"},
		{2, "jvm_live_threads", "", "second 1 was not sampled: empty, not 0"},
		{2, "target_cpu_pct", "", "second 1 was not sampled"},
		{2, "os_threads", "", "second 1 was not sampled"},
		{2, "requests", "100", "client columns are always there"},
		{3, "os_threads", "41", "sampled from /proc"},
		{3, "jvm_live_threads", "", "no JVM scrape in second 2"},
		{3, "heap_used_mb", "", "no JVM scrape in second 2"},
	} {
		if got := col(lines[c.line], c.col); got != c.want {
			t.Errorf("series.csv line %d %s = %q, want %q (%s)", c.line, c.col, got, c.want, c.reason)
		}
	}
	back, err := record.ReadCSV[record.Sample](dir, record.SeriesFile)
	if err != nil {
		t.Fatal(err)
	}
	if back[1].JVMThreads.OK() || !math.IsNaN(float64(back[1].TargetCPUPct)) || float64(back[0].JVMThreads) != 218 {
		t.Errorf("read back: %+v, want second 1 missing and second 0 at 218 threads", back[:2])
	}
}

// TestSaveHistograms: a trial's log holds each second and the whole trial
// per group, and its total reads back equal to the generator's.
func TestSaveHistograms(t *testing.T) {
	dir := t.TempDir()
	res := threeSeconds()
	name, err := SaveHistograms(dir, gapJob(), 7, 2, res)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(record.HistogramsDir, "007-virtual-pool_50-t2.hlog"); name != want {
		t.Errorf("log name %q, want %q", name, want)
	}
	l, err := record.ReadHistogramLog(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Intervals) != 4 || l.StartTime != 1772360100 {
		t.Errorf("%d intervals from %v, want 3 seconds + 1 total from 1772360100", len(l.Intervals), l.StartTime)
	}
	if got := l.Total("io"); got == nil || !got.Equals(res.Groups[0].Latency) {
		t.Error("the io total read back differs from the generator's histogram")
	}
}

// TestRows: one row per group, the measured group first whatever the
// generator's order; the target's CPU is weighed by sample length over the
// samples that read the process; a group without a completed request is
// invalid, and so is every row given a reason.
func TestRows(t *testing.T) {
	res := &load.Result{Groups: []load.GroupResult{
		{Name: "background", Requests: 0, Wall: time.Second},
		{Name: "io", Requests: 200, Errors: 10, OK: 190, RPS: 100, Wall: 2 * time.Second, ErrorsByClass: map[string]int64{"timeout": 7, "refused": 3, "none": 0}},
	}}
	// CPU: (30+10)·1 and (50+10)·0.5 over the 1.5 s that read the process
	// = (40 + 30) / 1.5 = 46.67%; the third sample has no thread (a second
	// only another host sampled) and does not count.
	samples := []telemetry.Sample{
		{Dur: 1, Threads: 20, CPUUserPct: 30, CPUSysPct: 10, RSSMB: 100},
		{Dur: 0.5, Threads: 25, CPUUserPct: 50, CPUSysPct: 10, RSSMB: 120},
		{Dur: 1, Threads: 0, CPUUserPct: 99},
	}
	rows := Rows("io", gapJob(), 3, "2026-12-01T00:00:00Z", res, samples, nil)
	if len(rows) != 2 || rows[0].Group != "io" || rows[1].Group != "background" {
		t.Fatalf("rows %+v, want io then background", rows)
	}
	io := rows[0]
	if !io.Valid || io.Reason != "" || io.Variant != "virtual" || io.Point != "pool=50" || io.Seq != 3 || io.Fork != 2 {
		t.Errorf("io row %+v, want a valid row of virtual pool=50, seq 3, fork 2", io)
	}
	if io.ErrorPct != 5 || io.OKRPS != 95 || io.WallMs != 2000 || io.ErrorClasses != "refused=3;timeout=7" {
		t.Errorf("io: error %g%%, ok rps %g, wall %g ms, classes %q; want 5 (10 of 200), 95 (190 in 2 s), 2000 and refused=3;timeout=7", io.ErrorPct, io.OKRPS, io.WallMs, io.ErrorClasses)
	}
	if math.Abs(io.TargetCPUPct-70/1.5) > 1e-9 || io.TargetThreads != 25 || io.TargetRSSMB != 120 {
		t.Errorf("io: cpu %g%%, threads %d, rss %g; want 46.67 (weighed by length), 25 and 120 (peaks)", io.TargetCPUPct, io.TargetThreads, io.TargetRSSMB)
	}
	if bg := rows[1]; bg.Valid || bg.Reason != "no request completed" {
		t.Errorf("background: valid %v reason %q; want invalid, no request completed", bg.Valid, bg.Reason)
	}
	noisy := Rows("io", gapJob(), 3, "", res, samples, []string{"host noise: 80%"})
	if noisy[0].Valid || noisy[0].Reason != "host noise: 80%" || noisy[1].Reason != "host noise: 80%; no request completed" {
		t.Errorf("reasons: %q and %q; want every row invalid with the reason first", noisy[0].Reason, noisy[1].Reason)
	}
}
