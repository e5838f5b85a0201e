package record

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"runtime"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// craftHist builds a V2-compressed histogram by hand with any geometry in
// its header and any payload: what a hostile log or agent can send. The
// library's own encoder refuses bad geometries, so it cannot make these.
func craftHist(lowest, highest int64, digits int32, payload []byte) string {
	var inner bytes.Buffer
	for _, v := range []any{int32(hdrhistogram.V2EncodingCookieBase | 0x10), int32(len(payload)), int32(0), digits, lowest, highest, float64(1)} {
		binary.Write(&inner, binary.BigEndian, v)
	}
	inner.Write(payload)
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(inner.Bytes())
	w.Close()
	var out bytes.Buffer
	binary.Write(&out, binary.BigEndian, int32(hdrhistogram.V2CompressedEncodingCookieBase|0x10))
	binary.Write(&out, binary.BigEndian, int32(z.Len()))
	out.Write(z.Bytes())
	return base64.StdEncoding.EncodeToString(out.Bytes())
}

// zigzag encodes v as HdrHistogram's zig-zag LEB128 varint.
func zigzag(v int64) []byte {
	u := uint64((v << 1) ^ (v >> 63))
	var b []byte
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// TestHostileHistogramClaims: the review's crafted payloads (a header
// declaring 1..MaxInt64 at 5 digits: 49 MB from 53 characters; a count in
// the top bucket of 1..1e10: 2 GB in the report) are refused with an error
// that says why, before anything of their size is allocated. Threadlab's own
// geometry still decodes.
func TestHostileHistogramClaims(t *testing.T) {
	topBucket := append(zigzag(-(1 << 20)), zigzag(1)...) // zeros, then one count far up
	for _, c := range []struct {
		why     string
		text    string
		wantErr string
	}{
		{"the widest range at 5 digits", craftHist(1, math.MaxInt64, 5, nil), "not a histogram threadlab wrote"},
		{"one count in the top bucket of 1..1e10", craftHist(1, 1e10, 3, topBucket), "not a histogram threadlab wrote"},
		{"threadlab's range at 5 digits", craftHist(HistLowest, HistHighest, 5, nil), "at 5 significant digits"},
		{"a lowest of 0", craftHist(0, HistHighest, 3, nil), "not a histogram threadlab wrote"},
		{"a negative highest", craftHist(1, -1, 3, nil), "not a histogram threadlab wrote"},
		{"not base64", "HISTF!!", "histogram:"},
		{"too short", base64.StdEncoding.EncodeToString([]byte{0x1c, 0x84}), "too short"},
		{"a compressed length beyond the data", base64.StdEncoding.EncodeToString([]byte{0x1c, 0x84, 0x93, 0x14, 0x7f, 0, 0, 0, 1}), "claims"},
		{"an encoded histogram over the cap", strings.Repeat("A", MaxHistogramText+4), "more than"},
		{"threadlab's geometry, empty", craftHist(HistLowest, HistHighest, 3, nil), ""},
	} {
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		h, err := NewHistogramBudget(DefaultHistogramBudget).Decode(c.text)
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if c.wantErr == "" {
			if err != nil || h == nil || h.HighestTrackableValue() < HistHighest {
				t.Errorf("%s: %v", c.why, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: got %v, want an error with %q", c.why, err, c.wantErr)
		}
		// Refused before the claimed counts array: the whole decode allocates
		// little more than the text itself (base64 and the 40-byte header).
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(c.text))*3+1<<20 {
			t.Errorf("%s: refused after allocating %d bytes", c.why, alloc)
		}
	}
}

// TestHistogramBudget: many small lines each declaring threadlab's
// geometry (140 KB decoded from ~60 characters) stop at the budget with an
// error instead of growing without bound.
func TestHistogramBudget(t *testing.T) {
	line := "Tag=x.total,0.000,1.000,0.0," + craftHist(HistLowest, HistHighest, 3, nil) + "\n"
	n := int(DefaultHistogramBudget/geometryBytes(3)) + 10
	log := strings.Repeat(line, n)
	_, err := ParseHistogramLog(strings.NewReader(log), "many.hlog")
	if err == nil || !strings.Contains(err.Error(), "more histograms than threadlab writes") || !strings.Contains(err.Error(), "many.hlog:") {
		t.Fatalf("%d histograms of %d KB each: %v, want the budget's error naming the line", n, geometryBytes(3)>>10, err)
	}
	long := "Tag=x.total,0,1,0," + strings.Repeat("A", maxLogLine) + "\n"
	if _, err := ParseHistogramLog(strings.NewReader(long), "long.hlog"); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("an over-long line: %v", err)
	}
}

// FuzzHistogramClaims decodes histograms whose header claims any geometry
// and payload length: no panic, and whatever decodes has threadlab's
// geometry (so its size is bounded).
func FuzzHistogramClaims(f *testing.F) {
	f.Add(int64(1), int64(math.MaxInt64), int32(5), []byte{})
	f.Add(int64(1), int64(1e10), int32(3), append(zigzag(-(1<<20)), zigzag(1)...))
	f.Add(int64(HistLowest), int64(HistHighest), int32(3), zigzag(7))
	f.Add(int64(HistLowest), int64(HistHighest), int32(2), append(zigzag(-100), zigzag(3)...))
	f.Fuzz(func(t *testing.T, lowest, highest int64, digits int32, payload []byte) {
		text := craftHist(lowest, highest, digits, payload)
		h, err := NewHistogramBudget(DefaultHistogramBudget).Decode(text)
		if err != nil {
			return
		}
		if h.LowestTrackableValue() != HistLowest || h.HighestTrackableValue() < HistHighest || h.ByteSize() > int(geometryBytes(3)) {
			t.Fatalf("decoded %d..%d at %d digits (%d bytes): outside threadlab's geometry", h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures(), h.ByteSize())
		}
		// The same text in a log line goes through the same checks.
		if _, err := ParseHistogramLog(strings.NewReader("Tag=a,0,1,0,"+text+"\n"), "fuzz.hlog"); err != nil {
			t.Fatalf("decodes alone but not in a log: %v", err)
		}
	})
}

// BenchmarkHostileHistogramLog measures a report reading a histogram log
// padded with the review's hostile lines (8 x the widest range, 8 x the top
// bucket of 1..1e10) beside a real one: the allocation per read is what
// the real line costs, not the 49 MB to 2 GB the hostile ones claim.
// alloc-MB/op bounds the peak memory from above.
func BenchmarkHostileHistogramLog(b *testing.B) {
	ivs, _ := trialIntervals()
	var log strings.Builder
	for _, iv := range ivs {
		text, err := iv.Hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			b.Fatal(err)
		}
		log.WriteString("Tag=" + iv.Tag + ",0.000,1.000,1.0," + string(text) + "\n")
	}
	wide := craftHist(1, math.MaxInt64, 5, nil)
	top := craftHist(1, 1e10, 3, append(zigzag(-(1<<20)), zigzag(1)...))
	for range 8 {
		log.WriteString("Tag=main.x,0.000,1.000,1.0," + wide + "\n")
		log.WriteString("Tag=main.y,0.000,1.000,1.0," + top + "\n")
	}
	text := log.String()
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		_, err := ParseHistogramLog(strings.NewReader(text), "hostile.hlog")
		if err == nil || !strings.Contains(err.Error(), "not a histogram threadlab wrote") {
			b.Fatalf("hostile log: %v", err)
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MB/op")
}
