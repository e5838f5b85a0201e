package trial

import (
	"testing"

	"github.com/threadlab/threadlab/measure/telemetry"
)

// TestSeriesVirtualThreads: series.csv records threadlab_virtual_inflight
// per second where the scrape had it, and leaves it missing where it did
// not (a command target without the gauge, a failed scrape, a second
// without a sample), so a chart never draws an unmeasured 0.
func TestSeriesVirtualThreads(t *testing.T) {
	samples := []telemetry.Sample{
		{T: 0, JVM: true, JVMLiveThreads: 31, Virtual: true, VirtualThreads: 412},
		{T: 1, JVM: true, JVMLiveThreads: 30},                             // scraped, no gauge
		{T: 2, JVM: false, Virtual: true, VirtualThreads: 9, Threads: 40}, // no scrape: the flag alone says nothing
	}
	rows := SeriesRows(gapJob(), 1, 1, 1, threeSeconds(), samples)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	for _, c := range []struct {
		sec    int
		ok     bool
		want   float64
		reason string
	}{
		{0, true, 412, "the scrape had the gauge"},
		{1, false, 0, "a target without the gauge: not measured, not 0"},
		{2, false, 0, "no JVM scrape this second"},
	} {
		got := rows[c.sec].VirtualThreads
		if got.OK() != c.ok || c.ok && float64(got) != c.want {
			t.Errorf("second %d: virtual_threads %v, want ok=%v %g (%s)", c.sec, got, c.ok, c.want, c.reason)
		}
	}
	if float64(rows[1].JVMThreads) != 30 {
		t.Errorf("second 1: jvm_live_threads %v, want 30 (the scrape itself worked)", rows[1].JVMThreads)
	}
}
