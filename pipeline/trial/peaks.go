package trial

import (
	"math"

	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/measure/telemetry"
	"github.com/threadlab/threadlab/store/record"
)

// setPeaks fills a trials.csv row's seed-002 measures: the group's 2xx
// answers per second over the same window as rps (first send to last
// answer), and the server's peaks and totals over the trial. Every group
// of a trial shares the server figures, as it shares target_cpu_pct.
func setPeaks(r *record.Trial, g load.GroupResult, p telemetry.Peaks) {
	if g.Wall > 0 {
		r.OKRPS = float64(g.OK) / g.Wall.Seconds()
	}
	r.TargetPeakCPUPct = p.CPUPct
	r.PeakHeapMB = p.HeapMB
	r.GCCount = int64(math.Round(p.GCCount))
	r.GCPauseMs = p.GCPauseMs
	r.JVMLiveThreads = int(math.Round(p.LiveThreads))
	r.PeakVirtualThreads = int(math.Round(p.VirtualThreads))
	r.PeakHikariPending = int(math.Round(p.HikariPending))
	r.PinnedEvents = int64(math.Round(p.PinnedEvents))
	r.JITMs = p.JITMs
}
