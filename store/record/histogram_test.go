package record

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/internal/testenv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// trialIntervals builds a trial's histograms the way the load generator
// does: per-second histograms at 2 significant digits and a whole-trial
// one at 3, from a deterministic, long-tailed set of latencies.
func trialIntervals() ([]Interval, *hdrhistogram.Histogram) {
	total := hdrhistogram.New(1, 60_000_000, 3)
	var ivs []Interval
	for sec := 0; sec < 3; sec++ {
		h := hdrhistogram.New(1, 60_000_000, 2)
		for i := 0; i < 4000; i++ {
			// 300 ms plus a tail: every 97th request waits up to 2 s more.
			us := int64(300_000 + (i*7919)%20_000)
			if i%97 == 0 {
				us += int64(i%2000) * 1000
			}
			_ = h.RecordValue(us)
			_ = total.RecordValue(us)
		}
		ivs = append(ivs, Interval{Tag: "io", Start: float64(sec), Length: 1, Hist: h})
	}
	ivs = append(ivs, Interval{Tag: "io" + TotalSuffix, Length: 3, Hist: total})
	return ivs, total
}

func TestHistogramLogRoundTrip(t *testing.T) {
	dir := t.TempDir()
	ivs, total := trialIntervals()
	name := HistogramLogName(7, "virtual", "pool=50;x=a b", 2)
	if want := filepath.Join(HistogramsDir, "007-virtual-pool_50_x_a_b-t2.hlog"); name != want {
		t.Errorf("HistogramLogName = %q, want %q", name, want)
	}
	start := time.Date(2026, 3, 1, 10, 15, 0, 250e6, time.UTC)
	if err := WriteHistogramLog(dir, name, start, "trial 2 of virtual", ivs); err != nil {
		t.Fatal(err)
	}
	l, err := ReadHistogramLog(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if l.StartTime != 1772360100.25 {
		t.Errorf("StartTime = %v, want 1772360100.25", l.StartTime)
	}
	if len(l.Intervals) != 4 {
		t.Fatalf("%d intervals read back, want 4", len(l.Intervals))
	}
	got := l.Total("io")
	if got == nil || !got.Equals(total) {
		t.Fatalf("the io total read back differs from the one written")
	}
	// Without a .total line, the per-second intervals are summed.
	l.Intervals = l.Intervals[:3]
	if sum := l.Total("io"); sum == nil || sum.TotalCount() != 12000 {
		t.Errorf("summed per-second total: %v, want 12000 requests", sum)
	}
	if l.Total("nope") != nil {
		t.Error("a group without intervals should have no total")
	}
}

// TestHistogramLogSecondReader: the Python hdrh package, an independent
// implementation of HdrHistogram's encoding, reads our log and gives the
// same count and percentiles as hdrhistogram-go.
func TestHistogramLogSecondReader(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(py, "-c", "import hdrh").Run()
	}
	testenv.Need(t, err, "python3 with the hdrhistogram package", "pip install hdrhistogram (scripts/setup.sh does)")
	dir := t.TempDir()
	ivs, total := trialIntervals()
	if err := WriteHistogramLog(dir, "t.hlog", time.Unix(1772360100, 0), "test", ivs); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"io" + TotalSuffix, "io"} {
		out, err := exec.Command(py, "testdata/hdr_p99.py", filepath.Join(dir, "t.hlog"), tag).CombinedOutput()
		if err != nil {
			t.Fatalf("python reader: %v\n%s", err, out)
		}
		l, err := ReadHistogramLog(filepath.Join(dir, "t.hlog"))
		if err != nil {
			t.Fatal(err)
		}
		h := total
		if tag == "io" {
			l.Intervals = l.Intervals[:3]
			h = l.Total("io")
		}
		want := fmt.Sprintf("%d\n%d\n%d\n%d\n", h.TotalCount(), h.ValueAtQuantile(50), h.ValueAtQuantile(99), h.ValueAtQuantile(99.9))
		if string(out) != want {
			t.Errorf("tag %s: python hdrh read count/p50/p99/p99.9 as\n%swant (hdrhistogram-go)\n%s", tag, out, want)
		}
	}
}

func TestHistogramLogErrors(t *testing.T) {
	cases := []struct{ name, log, want string }{
		{"three fields", "Tag=io,0.0,1.0,HISTF\n", "got 3 fields"},
		{"bad time", "Tag=io,x,1.0,2.0,HISTF\n", "field 1"},
		{"negative length", "0.0,-1,2.0,HISTF\n", "field 2"},
		{"bad payload", "0.0,1.0,2.0,notbase64!\n", "histogram at 0.0s"},
		{"tag without comma", "Tag=io\n", "without a comma"},
	}
	for _, c := range cases {
		_, err := ParseHistogramLog(strings.NewReader(c.log+"0.0,1.0,1.0,x\n"), "h.hlog")
		if err == nil || !strings.Contains(err.Error(), "h.hlog:1: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want h.hlog:1: ... %s", c.name, err, c.want)
		}
	}
	// A torn last line is dropped, not an error.
	var b bytes.Buffer
	ivs, _ := trialIntervals()
	dir := t.TempDir()
	if err := WriteHistogramLog(dir, "t.hlog", time.Unix(0, 0), "x", ivs[:1]); err != nil {
		t.Fatal(err)
	}
	full, _ := os.ReadFile(filepath.Join(dir, "t.hlog"))
	b.Write(full)
	b.WriteString("Tag=io,1.000,1.000,5.0,HISTFAAA")
	l, err := ParseHistogramLog(&b, "torn.hlog")
	if err != nil || len(l.Intervals) != 1 {
		t.Errorf("torn last line: %v, %d intervals; want it dropped", err, len(l.Intervals))
	}
}

func FuzzParseHistogramLog(f *testing.F) {
	ivs, _ := trialIntervals()
	dir := f.TempDir()
	if err := WriteHistogramLog(dir, "t.hlog", time.Unix(0, 0), "seed", ivs); err != nil {
		f.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "t.hlog"))
	f.Add(b)
	f.Add([]byte("Tag=a,0,1,2,HISTFAAAACh42pNpmSzMwMDAxQABzFCaEUoz2X+AsQEAQXkDvQ==\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseHistogramLog(bytes.NewReader(data), "fuzz.hlog")
		if err == nil {
			for _, iv := range l.Intervals {
				if iv.Hist == nil {
					t.Fatal("an interval without a histogram")
				}
			}
		}
	})
}

func TestReadHistogramLogTags(t *testing.T) {
	dir := t.TempDir()
	ivs, total := trialIntervals()
	if err := WriteHistogramLog(dir, "t.hlog", time.Unix(0, 0), "x", ivs); err != nil {
		t.Fatal(err)
	}
	l, err := ReadHistogramLogTags(filepath.Join(dir, "t.hlog"), func(tag string) bool { return strings.HasSuffix(tag, TotalSuffix) })
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Intervals) != 1 || !l.Total("io").Equals(total) {
		t.Errorf("kept %d intervals, want only the total, equal to the one written", len(l.Intervals))
	}
}
