package record

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAppendReadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a := []Trial{{Variant: "platform", Point: "pool=50", Group: "main", Trial: 1, Seq: 1, Valid: true, RPS: 123.5, WallMs: 1325}}
	b := []Trial{{Variant: "virtual", Point: "pool=50", Group: "main", Trial: 1, Seq: 2, Valid: false, Reason: "host busy; generator saturated"}}
	if err := AppendCSV(dir, TrialsFile, a); err != nil {
		t.Fatal(err)
	}
	if err := AppendCSV(dir, TrialsFile, b); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCSV[Trial](dir, TrialsFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != a[0] || got[1] != b[0] {
		t.Errorf("round trip:\n got %+v\nwant %+v %+v", got, a[0], b[0])
	}
}

// TestTornLastLine: a crash in the middle of an append leaves a partial
// line; reading drops it and keeps every finished trial.
func TestTornLastLine(t *testing.T) {
	dir := t.TempDir()
	if err := AppendCSV(dir, TrialsFile, []Trial{{Variant: "a", Trial: 1}, {Variant: "a", Trial: 2}}); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(filepath.Join(dir, TrialsFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("b,,main,1,3,tr")
	f.Close()
	got, err := ReadCSV[Trial](dir, TrialsFile)
	if err != nil || len(got) != 2 {
		t.Errorf("torn file: %d rows (%v), want the 2 complete ones", len(got), err)
	}
}

func TestReadMissing(t *testing.T) {
	got, err := ReadCSV[Trial](t.TempDir(), TrialsFile)
	if err != nil || got != nil {
		t.Errorf("missing file: %v %v, want empty and no error", got, err)
	}
	if _, err := Read(t.TempDir()); err == nil {
		t.Error("a directory without run.json must not read as a run")
	}
}

func TestWriteFileIsPublishable(t *testing.T) {
	dir := t.TempDir()
	if err := WriteJSON(dir, RunFile, Meta{ID: "x"}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, RunFile))
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("run.json mode %v (%v), want 0644 so a web server can serve it", st.Mode().Perm(), err)
	}
}

func TestPoints(t *testing.T) {
	tests := []struct {
		reason string
		in     map[string]string
		want   string
	}{
		{"no sweep is the empty point", map[string]string{}, ""},
		{"one key", map[string]string{"pool": "50"}, "pool=50"},
		{"keys sort, so the same point always prints the same", map[string]string{"users": "100", "pool": "50"}, "pool=50;users=100"},
	}
	for _, tt := range tests {
		got := FormatPoint(tt.in)
		if got != tt.want {
			t.Errorf("%s: FormatPoint = %q, want %q", tt.reason, got, tt.want)
		}
		back := ParsePoint(got)
		if len(back) != len(tt.in) {
			t.Errorf("%s: ParsePoint(%q) = %v", tt.reason, got, back)
		}
		for k, v := range tt.in {
			if back[k] != v {
				t.Errorf("%s: ParsePoint lost %s=%s", tt.reason, k, v)
			}
		}
	}
}

// TestOldTrialsFile: a trials.csv written before ok_rps and the server
// peaks existed still reads (the new columns are 0), and appending to it
// (a resumed old run) rewrites it with today's header first, keeping every
// old value under its own column.
func TestOldTrialsFile(t *testing.T) {
	dir := t.TempDir()
	old := "variant,point,group,trial,seq,valid,reason,started,requests,errors,rps\n" +
		"platform,pool=5,main,1,1,true,,2026-11-30T00:55:00Z,1200,0,40.5\n"
	if err := os.WriteFile(filepath.Join(dir, TrialsFile), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCSV[Trial](dir, TrialsFile)
	if err != nil || len(got) != 1 || got[0].RPS != 40.5 || got[0].Requests != 1200 || got[0].OKRPS != 0 || got[0].PeakHeapMB != 0 {
		t.Fatalf("old file: %+v (%v), want its row with the new columns at 0", got, err)
	}
	next := Trial{Variant: "virtual", Point: "pool=5", Group: "main", Trial: 1, Seq: 2, Valid: true, RPS: 80, OKRPS: 79.5, PeakHeapMB: 212, GCCount: 3, PeakVirtualThreads: 95}
	if err := AppendCSV(dir, TrialsFile, []Trial{next}); err != nil {
		t.Fatal(err)
	}
	got, err = ReadCSV[Trial](dir, TrialsFile)
	if err != nil || len(got) != 2 || got[0].RPS != 40.5 || got[0].Started != "2026-11-30T00:55:00Z" || got[1] != next {
		t.Errorf("after an append: %+v (%v), want the old row intact and the new one with its peaks", got, err)
	}
}

// TestOldSeriesFile: series.csv written before virtual_threads existed
// reads it as missing, not as a measured 0, and keeps it missing when a
// resumed run rewrites the header; a file with the column reads its
// values, and an empty field stays missing.
func TestOldSeriesFile(t *testing.T) {
	dir := t.TempDir()
	old := "variant,point,trial,group,t_s,requests,errors,p50_ms,p99_ms,target_cpu_pct,target_rss_mb,os_threads,jvm_live_threads,heap_used_mb,gc_count,gc_pause_ms,hikari_active,hikari_pending,gen_cpu_pct,host_cpu_pct,host_steal_pct,fork,iteration\n" +
		"virtual,,1,io,0,188,0,683.2,1066,28.7,320.4,33,31,75.7,0,0,0,0,12.5,35,3.2,1,1\n"
	if err := os.WriteFile(filepath.Join(dir, SeriesFile), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCSV[Sample](dir, SeriesFile)
	if err != nil || len(got) != 1 || got[0].JVMThreads != 31 || got[0].VirtualThreads.OK() {
		t.Fatalf("old file: %+v (%v), want jvm_live_threads 31 and virtual_threads missing", got, err)
	}
	next := Sample{Variant: "virtual", Trial: 2, Group: "io", T: 0, JVMThreads: 30, VirtualThreads: 412, TargetCPUPct: Missing(), TargetRSSMB: Missing(),
		OSThreads: Missing(), HeapUsedMB: Missing(), GCCount: Missing(), GCPauseMs: Missing(), HikariActive: Missing(), HikariPending: Missing(),
		GenCPUPct: Missing(), HostCPUPct: Missing(), HostStealPct: Missing()}
	if err := AppendCSV(dir, SeriesFile, []Sample{next}); err != nil {
		t.Fatal(err)
	}
	got, err = ReadCSV[Sample](dir, SeriesFile)
	if err != nil || len(got) != 2 {
		t.Fatalf("after an append: %+v (%v)", got, err)
	}
	if got[0].VirtualThreads.OK() || got[0].JVMThreads != 31 {
		t.Errorf("the old row after the header upgrade: virtual_threads %v, want missing (it was never measured)", got[0].VirtualThreads)
	}
	if got[1].VirtualThreads != 412 || got[1].JVMThreads != 30 {
		t.Errorf("the new row: virtual %v jvm %v, want 412 and 30", got[1].VirtualThreads, got[1].JVMThreads)
	}
}
