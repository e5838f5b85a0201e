package telemetry

import "math"

// Peaks is a trial's server side in one row: the highest value of each
// gauge over the window's samples and the totals of the per-interval
// counters (seed 002 reports heap peak, GC count and time, platform and
// virtual thread counts and CPU per approach; issue 9 asks for the peak of
// the HikariCP queue). trials.csv carries them (measure/metric names the
// columns), so claims can check them like any client figure.
type Peaks struct {
	CPUPct         float64 // highest target CPU of one full interval, % of one core
	HeapMB         float64 // highest heap in use
	GCCount        float64 // GC pauses over the window
	GCPauseMs      float64 // GC pause time over the window
	LiveThreads    float64 // highest live platform threads
	VirtualThreads float64 // highest count of requests on virtual threads
	HikariPending  float64 // highest count of threads waiting for a pooled connection
	PinnedEvents   float64 // jdk.VirtualThreadPinned events over the window
	JITMs          float64 // JIT compilation time over the window, ms
}

// Summarize reduces a window's samples to its Peaks. The JVM figures come
// from samples with a scrape only (JVM true); a window without any leaves
// them 0, and the sampler's flags say why (see Affects). The CPU peak
// skips a last partial interval shorter than half the longest one: CPU
// over a tenth of a second is one scheduler slice, not a rate.
func Summarize(samples []Sample) Peaks {
	var p Peaks
	longest := 0.0
	for _, x := range samples {
		longest = max(longest, x.Dur)
	}
	for _, x := range samples {
		if x.Dur >= longest/2 {
			p.CPUPct = max(p.CPUPct, x.CPUUserPct+x.CPUSysPct)
		}
		if !x.JVM {
			continue
		}
		p.HeapMB = max(p.HeapMB, x.HeapUsedMB)
		p.GCCount += x.GCCount
		p.GCPauseMs += x.GCPauseMs
		p.LiveThreads = max(p.LiveThreads, x.JVMLiveThreads)
		p.VirtualThreads = max(p.VirtualThreads, x.VirtualThreads)
		p.HikariPending = max(p.HikariPending, x.HikariPending)
		p.PinnedEvents += x.PinnedEvents
		if x.JIT {
			p.JITMs += x.JITMs
		}
	}
	p.GCCount = math.Round(p.GCCount) // a sum of counter deltas: whole pauses
	p.PinnedEvents = math.Round(p.PinnedEvents)
	return p
}
