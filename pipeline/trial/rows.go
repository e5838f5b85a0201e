package trial

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/measure/telemetry"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/store/record"
)

// Rows turns a window's load result and the server samples into
// trials.csv rows, one per request group, the measured group first.
// reasons make every row invalid; a group without a completed request is
// invalid too.
func Rows(measured string, j replicate.Job, seq int, started string, res *load.Result, samples []telemetry.Sample, reasons []string) []record.Trial {
	// CPU over the window: each sample's share weighted by its length (the
	// last one is the partial interval up to the window's end), over the
	// samples that read the process (a live one has a thread; a multi-host
	// run's seconds that only this machine sampled have no process here).
	var cpu, rss, span float64
	var threads int
	for _, x := range samples {
		rss = max(rss, x.RSSMB)
		threads = max(threads, x.Threads)
		if x.Threads > 0 && x.Dur > 0 {
			cpu += (x.CPUUserPct + x.CPUSysPct) * x.Dur
			span += x.Dur
		}
	}
	if span > 0 {
		cpu /= span
	}
	var rows []record.Trial
	for _, g := range res.Groups {
		r := record.Trial{
			Variant: j.Cell.Variant.Name, Point: j.Cell.PointString(), Group: g.Name, Trial: j.Fork, Fork: j.Fork, Seq: seq,
			Started: started, Requests: g.Requests, Errors: g.Errors, RPS: g.RPS,
			P50Ms: g.QuantileMs(50), P90Ms: g.QuantileMs(90), P99Ms: g.QuantileMs(99), P999Ms: g.QuantileMs(99.9),
			MaxMs: g.MaxMs(), WallMs: ms(g.Wall), DistinctThreads: len(g.Headers),
			ErrorClasses: classes(g.ErrorsByClass), AskedRate: g.AskedRate, AchievedRate: g.AchievedRate,
			Missed: g.Missed, LatePct: g.LatePct, GenCPUPct: res.Self.CPUPct, GenSaturated: res.Self.Saturated,
			TargetCPUPct: cpu, TargetThreads: threads, TargetRSSMB: rss,
			Connects: g.Connects(), ConnectP50Ms: g.ConnectMs(50), ConnectP99Ms: g.ConnectMs(99),
			ConnectMaxMs: g.ConnectMs(100), SlowConnects: g.SlowConnects,
		}
		setPeaks(&r, g, telemetry.Summarize(samples))
		if g.Latency != nil && g.Latency.TotalCount() > 0 {
			r.MeanMs = g.Latency.Mean() / 1000
		}
		if g.Requests > 0 {
			r.ErrorPct = 100 * float64(g.Errors) / float64(g.Requests)
		}
		rr := slices.Clone(reasons)
		if g.Requests == 0 {
			rr = append(rr, "no request completed")
		}
		r.Valid = len(rr) == 0
		r.Reason = strings.Join(rr, "; ")
		rows = append(rows, r)
	}
	// The measured group first: it is the row that answers the question.
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].Group == measured && rows[b].Group != measured })
	return rows
}

func classes(m map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
		}
	}
	return strings.Join(parts, ";")
}

// SeriesRows joins the client's per-second series with the server samples
// of the same second. A second without a server sample (or without a JVM
// scrape, for the JVM columns) keeps its server columns missing: empty in
// series.csv, a gap in the charts, never a fall to 0.
func SeriesRows(j replicate.Job, trial, fork, it int, res *load.Result, samples []telemetry.Sample) []record.Sample {
	bySec := map[int]telemetry.Sample{}
	for _, x := range samples {
		bySec[int(x.T)] = x
	}
	g := func(x float64) record.Gauge { return record.Gauge(x) }
	var out []record.Sample
	for _, gr := range res.Groups {
		for _, sec := range gr.Series {
			m := record.Missing()
			r := record.Sample{Variant: j.Cell.Variant.Name, Point: j.Cell.PointString(), Trial: trial, Fork: fork, Iteration: it, Group: gr.Name,
				T: float64(sec.T), Requests: sec.Requests, Errors: sec.Errors, P50Ms: sec.P50Ms, P99Ms: sec.P99Ms,
				TargetCPUPct: m, TargetRSSMB: m, OSThreads: m, JVMThreads: m, VirtualThreads: m, HeapUsedMB: m, GCCount: m, GCPauseMs: m,
				HikariActive: m, HikariPending: m, GenCPUPct: m, HostCPUPct: m, HostStealPct: m, JITMs: m}
			if x, ok := bySec[sec.T]; ok {
				r.TargetCPUPct, r.TargetRSSMB, r.OSThreads = g(x.CPUUserPct+x.CPUSysPct), g(x.RSSMB), g(float64(x.Threads))
				r.GenCPUPct, r.HostCPUPct, r.HostStealPct = g(x.GenCPUPct), g(x.HostCPUPct), g(x.HostStealPct)
				if x.JVM {
					r.JVMThreads, r.HeapUsedMB, r.GCCount, r.GCPauseMs = g(x.JVMLiveThreads), g(x.HeapUsedMB), g(x.GCCount), g(x.GCPauseMs)
					r.HikariActive, r.HikariPending = g(x.HikariActive), g(x.HikariPending)
					if x.Virtual {
						r.VirtualThreads = g(x.VirtualThreads)
					}
					if x.JIT {
						r.JITMs = g(x.JITMs)
					}
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// Spectrum is the percentile ladder stored per trial for the latency chart.
var Spectrum = []float64{50, 75, 90, 95, 99, 99.9, 99.99, 100}

// LatencyRows are a window's Spectrum of latency percentiles per group.
func LatencyRows(j replicate.Job, trial, fork, it int, res *load.Result) []record.Quantile {
	var out []record.Quantile
	for _, g := range res.Groups {
		for _, q := range Spectrum {
			out = append(out, record.Quantile{Variant: j.Cell.Variant.Name, Point: j.Cell.PointString(), Group: g.Name, Trial: trial, Fork: fork, Iteration: it, Percentile: q, Ms: g.QuantileMs(q)})
		}
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
