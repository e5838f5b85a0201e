package load

import (
	"strconv"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/threadlab/threadlab/store/record"
)

// TestGeometryDecodes: record (reports, agent results) decodes only the
// histogram geometry the generator records; both histograms it makes must
// round-trip through that check, or a change here would make every run's
// histograms unreadable.
func TestGeometryDecodes(t *testing.T) {
	for _, h := range []*hdrhistogram.Histogram{newHist(), hdrhistogram.New(histMin, histMax, secDigits)} {
		h.RecordValue(1234)
		text, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		got, err := record.NewHistogramBudget(record.DefaultHistogramBudget).Decode(string(text))
		if err != nil {
			t.Fatalf("%d..%d at %d digits: %v", h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures(), err)
		}
		if got.TotalCount() != 1 {
			t.Errorf("decoded %d values, want 1", got.TotalCount())
		}
	}
}

// TestHeaderValuesBounded: a target answering a unique value per request
// keeps at most MaxHeaderValues keys; the rest are counted under
// HeaderOverflow, so the counts still add up.
func TestHeaderValuesBounded(t *testing.T) {
	rec := &recorder{hist: newHist()}
	tl := &tally{rec: rec}
	n := MaxHeaderValues + 500
	for i := range n {
		tl.header([]byte(strconv.Itoa(i)))
	}
	if len(tl.headers) != MaxHeaderValues+1 || *tl.headers[HeaderOverflow] != 500 {
		t.Fatalf("%d keys, overflow %v; want %d values and 500 counted as overflow", len(tl.headers), tl.headers[HeaderOverflow], MaxHeaderValues)
	}
	tl.flush()
	var sum int64
	for _, c := range rec.headers {
		sum += c
	}
	if len(rec.headers) > MaxHeaderValues+1 || sum != int64(n) {
		t.Errorf("recorder: %d keys, %d counted; want at most %d keys and all %d counted", len(rec.headers), sum, MaxHeaderValues+1, n)
	}
}
