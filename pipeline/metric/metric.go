// Package metric is the one home of what threadlab knows about a measured
// quantity: its trials.csv column, its label and unit for tables and axes,
// which direction is better, where it comes from, whether a claim may name
// it, and how to read it from a record.Trial.
//
// Data flow: the load generator and the telemetry sampler fill
// record.Trial; aggregate reads each column through Def.Value for
// summary.csv and the claims; stats asks HigherIsBetter for the direction of
// the slow-first flag; diff and the report take labels, units and
// directions from here. Adding a trials.csv column means adding one Def
// below, and nothing else.
package metric

import (
	"slices"

	"github.com/threadlab/threadlab/pipeline/record"
)

// Def defines one numeric trials.csv column.
type Def struct {
	Name           string // the name claims, diff and summary.csv use; equal to the CSV column
	Column         string // the trials.csv header
	Label          string // for headings and axes, with the unit: "p99 latency (ms)"
	Unit           string // "ms", "req/s", "%", "MiB", "" for counts
	HigherIsBetter bool   // throughput up; latency, errors and resources down
	Source         string // where the number comes from, for the report's glossary
	// Claim is true when a manifest claim may name the metric; the others
	// describe the measurement itself (the generator's schedule, the host).
	Claim bool
	Value func(t record.Trial) float64
}

// Defs lists every numeric trials.csv column in the order tables show them.
// CPU of one process is a share of one core, as top and the JVM report it
// (200% is two cores busy), so its label says "% of one core"; the host's
// busy share before a trial is of all CPUs.
var Defs = []Def{
	{"rps", "rps", "throughput (req/s)", "req/s", true, "load generator: completed requests per second of the measured window", true,
		func(t record.Trial) float64 { return t.RPS }},
	{"requests", "requests", "requests", "", true, "load generator: completed requests in the measured window", true,
		func(t record.Trial) float64 { return float64(t.Requests) }},
	{"ok_rps", "ok_rps", "successful throughput, 2xx only (req/s)", "req/s", true, "load generator: answers with a 2xx status per second of the measured window (seed 002's requests_ok)", true,
		func(t record.Trial) float64 { return t.OKRPS }},
	{"errors", "errors", "errors", "", false, "load generator: failed requests (non-2xx, timeouts, connection errors)", true,
		func(t record.Trial) float64 { return float64(t.Errors) }},
	{"error_pct", "error_pct", "errors (% of requests)", "%", false, "load generator: errors over requests", true,
		func(t record.Trial) float64 { return t.ErrorPct }},
	{"p50_ms", "p50_ms", "p50 latency (ms)", "ms", false, "load generator: HdrHistogram of response times", true,
		func(t record.Trial) float64 { return t.P50Ms }},
	{"p90_ms", "p90_ms", "p90 latency (ms)", "ms", false, "load generator: HdrHistogram of response times", true,
		func(t record.Trial) float64 { return t.P90Ms }},
	{"p99_ms", "p99_ms", "p99 latency (ms)", "ms", false, "load generator: HdrHistogram of response times", true,
		func(t record.Trial) float64 { return t.P99Ms }},
	{"p999_ms", "p999_ms", "p99.9 latency (ms)", "ms", false, "load generator: HdrHistogram of response times", true,
		func(t record.Trial) float64 { return t.P999Ms }},
	{"max_ms", "max_ms", "max latency (ms)", "ms", false, "load generator: slowest response", true,
		func(t record.Trial) float64 { return t.MaxMs }},
	{"mean_ms", "mean_ms", "mean latency (ms)", "ms", false, "load generator: mean response time", true,
		func(t record.Trial) float64 { return t.MeanMs }},
	{"wall_ms", "wall_ms", "wall time (ms)", "ms", false, "load generator: first request sent to last response (bursts)", true,
		func(t record.Trial) float64 { return t.WallMs }},
	{"distinct_threads", "distinct_threads", "server threads used", "", false, "target: distinct thread names reported in responses", true,
		func(t record.Trial) float64 { return float64(t.DistinctThreads) }},
	{"target_cpu_pct", "target_cpu_pct", "target CPU (% of one core)", "% of one core", false, "telemetry: target process CPU over the trial", true,
		func(t record.Trial) float64 { return t.TargetCPUPct }},
	{"target_peak_threads", "target_peak_threads", "target OS threads (peak)", "", false, "telemetry: peak OS threads of the target process", true,
		func(t record.Trial) float64 { return float64(t.TargetThreads) }},
	{"target_peak_rss_mb", "target_peak_rss_mb", "target memory, peak RSS (MiB)", "MiB", false, "telemetry: peak resident memory of the target process", true,
		func(t record.Trial) float64 { return t.TargetRSSMB }},
	{"target_peak_cpu_pct", "target_peak_cpu_pct", "target CPU, busiest second (% of one core)", "% of one core", false, "telemetry: highest per-second CPU of the target process in the window", true,
		func(t record.Trial) float64 { return t.TargetPeakCPUPct }},
	{"peak_heap_mb", "peak_heap_mb", "JVM heap in use, peak (MiB)", "MiB", false, "telemetry: highest jvm_memory_used_bytes{area=\"heap\"} of the per-second scrapes", true,
		func(t record.Trial) float64 { return t.PeakHeapMB }},
	{"gc_count", "gc_count", "GC pauses", "", false, "telemetry: growth of jvm_gc_pause_seconds_count over the window", true,
		func(t record.Trial) float64 { return float64(t.GCCount) }},
	{"gc_pause_ms", "gc_pause_ms", "GC pause time (ms)", "ms", false, "telemetry: growth of jvm_gc_pause_seconds_sum over the window", true,
		func(t record.Trial) float64 { return t.GCPauseMs }},
	{"jvm_live_threads", "jvm_live_threads", "JVM platform threads (peak)", "", false, "telemetry: highest jvm_threads_live_threads of the per-second scrapes (virtual threads are not in it)", true,
		func(t record.Trial) float64 { return float64(t.JVMLiveThreads) }},
	{"peak_virtual_threads", "peak_virtual_threads", "virtual threads handling requests (peak)", "", false, "telemetry: highest threadlab_virtual_inflight of the per-second scrapes (requests in progress on virtual threads; built-in targets)", true,
		func(t record.Trial) float64 { return float64(t.PeakVirtualThreads) }},
	{"peak_hikari_pending", "peak_hikari_pending", "threads waiting for a pooled connection (peak)", "", false, "telemetry: highest hikaricp_connections_pending of the per-second scrapes", true,
		func(t record.Trial) float64 { return float64(t.PeakHikariPending) }},
	{"gen_cpu_pct", "gen_cpu_pct", "generator CPU (% of one core)", "% of one core", false, "telemetry: load generator CPU (a saturated generator measures itself)", true,
		func(t record.Trial) float64 { return t.GenCPUPct }},
	{"asked_rate", "asked_rate", "asked rate (req/s)", "req/s", true, "load generator: the open-model arrival rate asked for", false,
		func(t record.Trial) float64 { return t.AskedRate }},
	{"achieved_rate", "achieved_rate", "achieved rate (req/s)", "req/s", true, "load generator: arrivals actually sent", false,
		func(t record.Trial) float64 { return t.AchievedRate }},
	{"missed", "missed", "missed sends", "", false, "load generator: arrivals dropped because no connection was free", false,
		func(t record.Trial) float64 { return float64(t.Missed) }},
	{"late_pct", "late_pct", "late sends (% of sends)", "%", false, "load generator: arrivals sent behind schedule", false,
		func(t record.Trial) float64 { return t.LatePct }},
	{"release_spread_ms", "release_spread_ms", "burst release spread across generators (ms)", "ms", false, "fleet: the latest generator's release of its share of the burst minus the earliest, on the agreed clock (noise.max_release_spread bounds it)", false,
		func(t record.Trial) float64 { return t.ReleaseSpreadMs }},
	{"host_busy_pct", "host_busy_pct", "host busy before the trial (% of all CPUs)", "% of all CPUs", false, "host check: CPU used outside threadlab before the trial", false,
		func(t record.Trial) float64 { return t.HostBusyPct }},
	{"host_outside_pct", "host_outside_pct", "host CPU outside threadlab during the window (% of one core)", "% of one core", false, "series: host CPU minus threadlab, the target and its services, averaged over the window (the in-trial noise gate)", false,
		func(t record.Trial) float64 { return t.HostOutsidePct }},
	{"host_steal_pct", "host_steal_pct", "CPU stolen by the hypervisor during the window (% of one core)", "% of one core", false, "series: steal time averaged over the window (the in-trial noise gate)", false,
		func(t record.Trial) float64 { return t.HostStealPct }},
	{"cooldown_ms", "cooldown_ms", "cool-down wait (ms)", "ms", false, "pipeline: time waited for the host to go quiet", false,
		func(t record.Trial) float64 { return t.CoolDownMs }},
	{"startup_ms", "startup_ms", "target start-up (ms)", "ms", false, "pipeline: start of the target to its ready probe", false,
		func(t record.Trial) float64 { return t.StartupMs }},
}

// Lookup returns the definition of a metric by name.
func Lookup(name string) (Def, bool) {
	i := slices.IndexFunc(Defs, func(d Def) bool { return d.Name == name })
	if i < 0 {
		return Def{}, false
	}
	return Defs[i], true
}

// HigherIsBetter reports the direction of a metric; false (lower is
// better) for an unknown name, the safe reading for costs.
func HigherIsBetter(name string) bool {
	d, _ := Lookup(name)
	return d.HigherIsBetter
}

// Label is the metric's label with its unit, or the name itself when the
// metric is unknown.
func Label(name string) string {
	if d, ok := Lookup(name); ok {
		return d.Label
	}
	return name
}

// Claimable lists the metrics a claim may name, in table order.
func Claimable() []string {
	var out []string
	for _, d := range Defs {
		if d.Claim {
			out = append(out, d.Name)
		}
	}
	return out
}

// Names lists every metric, claimable or not, in table order.
func Names() []string {
	out := make([]string, len(Defs))
	for i, d := range Defs {
		out[i] = d.Name
	}
	return out
}

// Rank is the metric's position in table order; an unknown name ranks
// after every known one.
func Rank(name string) int {
	if i := slices.IndexFunc(Defs, func(d Def) bool { return d.Name == name }); i >= 0 {
		return i
	}
	return len(Defs)
}

// Primary is the metric that answers an experiment's question, given the
// load model of its measured group: wall time for a burst (seeds 000 and
// 003 measure the time until all are answered), throughput otherwise.
// experiments.Manifest.Primary and the report (for runs whose run.json
// predates primary_metric) both ask here.
func Primary(model string) string {
	if model == "burst" {
		return "wall_ms"
	}
	return "rps"
}

// Value reads metric name from a trial; false when no such metric exists.
func Value(t record.Trial, name string) (float64, bool) {
	d, ok := Lookup(name)
	if !ok {
		return 0, false
	}
	return d.Value(t), true
}
