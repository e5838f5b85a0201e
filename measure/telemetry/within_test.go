package telemetry

import (
	"slices"
	"testing"
	"time"
)

// Within: a trial's samples cut to the load's edges. Five readings, at 1,
// 2, 3 and 4 s after the origin (once a second) and 4.3 s (Stop's partial
// interval); each row names the window and which readings count and why.
func TestWithin(t *testing.T) {
	samples := []Sample{
		{T: 0, Dur: 1, RSSMB: 100, Threads: 30},
		{T: 1, Dur: 1, RSSMB: 140, Threads: 44},
		{T: 2, Dur: 1, RSSMB: 120, Threads: 36},
		{T: 3, Dur: 1, RSSMB: 125, Threads: 37},
		{T: 4, Dur: 0.3, RSSMB: 126, Threads: 37},
	}
	s := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	tests := []struct {
		why      string
		from, to float64   // s after the origin
		readings []float64 // T+Dur of the samples that count
	}{
		{"the connects took 2.3 s: the readings at 1 and 2 s saw the target accepting them and do not count; 4.3 s closes the window",
			2.3, 4.25, []float64{3, 4, 4.3}},
		{"a reading at the release itself counts; the one at 4 s closes the window, 4.3 s after it does not count",
			2, 3.5, []float64{2, 3, 4}},
		{"a window between two readings: only the one that closes it",
			4.1, 4.2, []float64{4.3}},
		{"the window closes after the last reading (a late end of stdin was cut short): the last reading closes it",
			4.5, 4.9, []float64{4.3}},
		{"a window over every reading: each once, the last both inside and closing",
			0, 4.3, []float64{1, 2, 3, 4, 4.3}},
		{"the last answer named before the release (an empty window at from): the first reading at or after it",
			2.5, 1, []float64{3}},
	}
	for _, tt := range tests {
		var got []float64
		for _, x := range Within(samples, s(tt.from), s(tt.to)) {
			got = append(got, readAt(x))
		}
		if !slices.Equal(got, tt.readings) {
			t.Errorf("%s: window %.2f..%.2f s counts the readings at %v s, want %v", tt.why, tt.from, tt.to, got, tt.readings)
		}
	}
	if got := Within(nil, 0, s(1)); got != nil {
		t.Errorf("no samples: %v, want none", got)
	}
	// The peaks the trial then reads: the 140 MiB and 44 threads of the
	// connects are out, so the peaks are 126 MiB (at 4.3 s) and 37 threads.
	var rss float64
	var threads int
	for _, x := range Within(samples, s(2.3), s(4.25)) {
		rss, threads = max(rss, x.RSSMB), max(threads, x.Threads)
	}
	if rss != 126 || threads != 37 {
		t.Errorf("peaks within 2.3..4.25 s: %v MiB, %d threads; want 126 and 37 (the readings at 1 and 2 s left out)", rss, threads)
	}
}
