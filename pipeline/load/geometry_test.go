package load

import (
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/threadlab/threadlab/pipeline/record"
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
