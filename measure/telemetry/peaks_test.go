package telemetry

import (
	"strings"
	"testing"

	"github.com/threadlab/threadlab/measure/metric"
)

func TestSummarize(t *testing.T) {
	full := func(cpu, heap, gc, pause, live, virt, pending float64) Sample {
		return Sample{Dur: 1, CPUUserPct: cpu * 3 / 4, CPUSysPct: cpu / 4, JVM: true, HeapUsedMB: heap, GCCount: gc,
			GCPauseMs: pause, JVMLiveThreads: live, VirtualThreads: virt, HikariPending: pending}
	}
	tests := []struct {
		name    string
		samples []Sample
		want    Peaks
		why     string
	}{
		{"empty", nil, Peaks{}, "no samples: every figure 0, the flags say why"},
		{"peaks and totals",
			[]Sample{full(50, 100, 1, 4, 30, 0, 0), full(180, 300, 2, 10, 34, 900, 7), full(90, 200, 0, 0, 33, 400, 2)},
			Peaks{CPUPct: 180, HeapMB: 300, GCCount: 3, GCPauseMs: 14, LiveThreads: 34, VirtualThreads: 900, HikariPending: 7},
			"gauges take their highest second, GC counters their sum over the window"},
		{"failed scrape",
			[]Sample{full(40, 100, 1, 4, 30, 5, 1), {Dur: 1, CPUUserPct: 60}},
			Peaks{CPUPct: 60, HeapMB: 100, GCCount: 1, GCPauseMs: 4, LiveThreads: 30, VirtualThreads: 5, HikariPending: 1},
			"a second without a scrape adds its CPU (from /proc) but no JVM figure"},
		{"pinned events",
			[]Sample{{Dur: 1, JVM: true, PinnedEvents: 12, Pinned: true}, {Dur: 1, JVM: true, PinnedEvents: 4, Pinned: true}, {Dur: 1, PinnedEvents: 99}},
			Peaks{PinnedEvents: 16},
			"a counter: 12 + 4 over the scraped seconds; a second without a scrape adds nothing"},
		{"JIT time",
			[]Sample{{Dur: 1, JVM: true, JITMs: 40, JIT: true}, {Dur: 1, JVM: true, JITMs: 2.5, JIT: true}, {Dur: 1, JVM: true, JITMs: 99}},
			Peaks{JITMs: 42.5},
			"a counter: 40 + 2.5 ms over the seconds whose scrape had it; a scrape without the counter adds nothing"},
		{"short last interval",
			[]Sample{full(70, 1, 0, 0, 1, 0, 0), {Dur: 0.1, CPUUserPct: 400, JVM: true, HeapUsedMB: 2}},
			Peaks{CPUPct: 70, HeapMB: 2, LiveThreads: 1},
			"a tenth of a second is one scheduler slice: its CPU is not a peak, its heap is"},
	}
	for _, tt := range tests {
		if got := Summarize(tt.samples); got != tt.want {
			t.Errorf("%s: Summarize = %+v, want %+v (%s)", tt.name, got, tt.want, tt.why)
		}
	}
}

// TestServerColumnsHaveFlags keeps the telemetry columns of trials.csv in
// the flag scheme: a column the sampler fills must be spoiled by the flag
// of the failure that leaves it at 0 (a lost pid, a failed scrape), or a
// trial whose claim reads it would stay valid on a 0 nobody measured.
func TestServerColumnsHaveFlags(t *testing.T) {
	for _, d := range metric.Defs {
		if !strings.HasPrefix(d.Source, "telemetry:") || d.Name == "gen_cpu_pct" { // the generator measures itself
			continue
		}
		found := false
		for _, c := range codes {
			for _, col := range Affects(c) {
				found = found || col == d.Name
			}
		}
		if !found {
			t.Errorf("trials.csv column %s comes from the sampler but no flag spoils it: name its flags in SpoiledBy of its metric.Def", d.Name)
		}
	}
	for _, col := range []string{"peak_heap_mb", "gc_count", "gc_pause_ms", "jvm_live_threads", "peak_virtual_threads", "peak_hikari_pending", "pinned_events", "jit_ms"} {
		if _, ok := metric.Lookup(col); !ok {
			t.Errorf("%s is no trials.csv column (measure/metric)", col)
		}
	}
}
