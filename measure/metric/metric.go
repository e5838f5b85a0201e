// Package metric is the one home of what threadlab knows about a measured
// quantity: its column in trials.csv or series.csv, its label and unit for
// tables and axes, which direction is better, its role (Kind), whether it
// is a share of one core, where it is shown without being asked for,
// which telemetry flags spoil it, whether a claim may name it, and how to
// read it from a record.Trial or record.Sample.
//
// Data flow: the load generator and the telemetry sampler fill
// record.Trial and record.Sample; aggregate reads each trials.csv column
// through Def.Value for summary.csv and the claims, from the iterations
// WarmsUp says (verdicts.Reading), and compares the
// Shown(InComparisons) metrics; stats asks HigherIsBetter for the direction
// of the slow-first flag; lint asks Kind for latency; claim validation and
// the seed tables ask PerCore; telemetry.Affects asks Spoiled; diff, the
// comparison page and the run page's trial table show Shown(InDiff) and
// Shown(InTrials); the report's per-second charts take their labels from
// Series.
//
// Adding a metric is one Def below plus, for a newly measured quantity,
// its record.Trial field (with the csv tag of its Name) and the code that
// fills that field (the load generator's result or the sampler's peaks,
// copied into the trial by pipeline/trial). Nothing else: the run
// page's trial table, comparisons.csv, the comparison page and threadlab
// diff (by Default), summary.csv and claim validation (by Claim), lint (by
// Kind), per_core preconditions (by PerCore) and the telemetry flags (by
// SpoiledBy) all ask the Def; TestOneDefIsEnough in render/report adds
// one in a test and finds it in the trial table, the comparison page and
// the diff. TestEveryNumericColumnIsDefined fails when a trials.csv column
// has no Def. A series.csv column is a SeriesDef, its record.Sample field
// and the code that fills it (pipeline/trial, SeriesRows);
// TestEverySeriesColumnIsDefined fails without the SeriesDef, and a chart
// of it is drawn where render/report/charts_series.go lists it.
package metric

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/store/record"
)

// Kind is a metric's role: what kind of number it is. Lint asks it (a
// latency claim under a closed model), and the run page's trial table
// groups its columns by it, in this order.
type Kind int

const (
	Throughput Kind = iota + 1 // completed work: requests, requests per second
	Latency                    // the response time of single requests: percentiles, max, mean
	Duration                   // another elapsed time: a burst's wall time, waits, start-up
	Failure                    // failed requests
	Resource                   // what the target or the generator used: CPU, memory, threads, GC, pinning
	Schedule                   // the open model's and the fleet's own schedule: asked, achieved, missed, late
	Host                       // the host around the trial: busy before it, noise and steal during it
)

var kindNames = [...]string{"", "throughput", "latency", "duration", "failure", "resource", "schedule", "host"}

func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Where is a set of the places that show a metric without being asked
// for it (a diff's --metric, for one, shows any metric).
type Where uint8

const (
	// InTrials is a column of the run page's trial table.
	InTrials Where = 1 << iota
	// InComparisons is compared between variants at every point in
	// comparisons.csv (and the run page's comparison table), after the
	// primary metric.
	InComparisons
	// InDiff is a table of threadlab diff and of a run's comparison page
	// (compare.html), after the runs' primary metrics.
	InDiff
)

// OneCore is the unit of a share of one core: 200% is two cores busy, as
// top and the JVM report a process's CPU.
const OneCore = "% of one core"

// Telemetry flag codes (telemetry.Flag*) that leave a value wrong, by how
// the sampler reads it. telemetry's tests check that each code is one of
// its flags.
var (
	// byProcess: read from the target's /proc entry.
	byProcess = []string{"pid_unreadable", "pid_gone", "pid_reused"}
	// byGauge: a gauge of the per-second scrapes.
	byGauge = []string{"scrape_failed", "malformed_metrics"}
	// byGC: the growth of a GC counter, read at every scrape.
	byGC = []string{"scrape_failed", "malformed_metrics", "no_gc_baseline", "counter_reset"}
	// byCounter: a cumulative counter read as its growth (pinned events, JIT
	// time) that a failed scrape in the middle of the window
	// does not spoil (the next good scrape's delta covers the gap); it
	// needs the baseline and the last scrape. This matters because pinning
	// starves the scrape itself: on JDK 21 a burst of pinned virtual
	// threads holds every carrier, and the actuator's request (a virtual
	// thread too) waits behind them past its time-out.
	byCounter = []string{"malformed_metrics", "no_gc_baseline", "counter_reset", "final_scrape_failed"}
)

// Def defines one numeric trials.csv column.
type Def struct {
	Name  string // the trials.csv column; claims, diff and summary.csv use it
	Label string // for headings and axes, with the unit: "p99 latency (ms)"
	Unit  string // "ms", "req/s", "%", "MiB", OneCore, "" for counts
	Kind  Kind
	// HigherIsBetter: throughput up; latency, errors and resources down.
	HigherIsBetter bool
	// PerCore: the value is a share of one core (Unit is OneCore), so a
	// precondition may read it per core and a table beside a seed's share
	// of the whole host names its unit.
	PerCore bool
	// Whole: a count of things (requests, threads, events), printed
	// without decimals.
	Whole bool
	// Claim is true when a manifest claim may name the metric; the others
	// describe the measurement itself (the generator's schedule, the host).
	Claim bool
	// Default is where the metric is shown without being asked for.
	Default Where
	// Head is the metric's header in the run page's trial table; the Name
	// when empty.
	Head string
	// SpoiledBy lists the telemetry flag codes that leave the value wrong:
	// a trial carrying one is invalid for a claim on the metric, and the
	// value is left out of the statistics.
	SpoiledBy []string
	// NoWarmup: the value does not change as the JVM warms up (a count set
	// by the configuration or the load: pool and event-loop threads,
	// requests in flight, threads waiting for a connection; a failure
	// count, which must be counted wherever it happens; the host and the
	// pipeline around the target). Claims and summary.csv then read every
	// valid measured iteration of each fork, including forks whose primary
	// metric never settled; a metric that warms up (false, the zero value
	// and the safe reading for a new metric) reads only each fork's steady
	// iterations of the primary metric (verdicts/steady.go, issue 20).
	NoWarmup bool
	// OwnSteady: the metric keeps warming up after the primary metric has
	// settled, so the primary's steady start does not cover it. The
	// target's CPU is one: a burst's wall time is bounded by what its
	// requests wait for and settles within a few bursts, while the CPU the
	// server spends on the same requests still falls as the JIT compiles
	// its code paths (hosts-parity: CPU-seconds per io-bound burst fell
	// from 1.05 to 0.48 over 10 bursts on flat wall times; boot-versions
	// 20261201T194927Z: platform CPU from about 90% to 22% of a core over
	// 20 bursts). A claim or summary on such a metric reads each fork's
	// iterations that are steady in the primary metric and then in the
	// metric's own series (verdicts.Reading).
	OwnSteady bool
	// Events: the value counts (or sums) events that most windows see
	// none of, so a fork's value is the mean of its windows (the events'
	// rate per window, which is what a total over a scenario measures),
	// not their median. With a 2 GiB heap a GC pause comes every 10-30 s
	// of load: connection-burst 20261203T070155Z recorded 0 or 1 per 8-s
	// window, 34 of its 40 forks had a median of 0 and a mean above it,
	// and a ratio of two such medians was 0/0. The median's robustness is
	// for timings with outliers; a count of rare events has none, and its
	// fork total is the whole information. Errors are such events too: a
	// claim of "zero errors" (at_most: 0) read on each fork's median window
	// let a fork that failed requests in fewer than half its windows count
	// as 0 (review statistics.md, 6-5); its mean is above 0, so the sign
	// test no longer supports the claim on it.
	Events bool
	Source string // where the number comes from, for the report's glossary
	Value  func(t record.Trial) float64
}

// Header is the metric's header in the run page's trial table.
func (d Def) Header() string { return cmp.Or(d.Head, d.Name) }

// Defs lists every numeric trials.csv column in the order tables show them.
// CPU of one process is a share of one core, as top and the JVM report it
// (200% is two cores busy), so its label says "% of one core"; the host's
// busy share before a trial is of all CPUs.
var Defs = []Def{
	{Name: "rps", Label: "throughput (req/s)", Unit: "req/s", Kind: Throughput, HigherIsBetter: true, Claim: true, Default: InTrials | InComparisons | InDiff, Source: "load generator: completed requests per second of the measured window",
		Value: func(t record.Trial) float64 { return t.RPS }},
	{Name: "requests", Label: "requests", Kind: Throughput, HigherIsBetter: true, Whole: true, Claim: true, Source: "load generator: completed requests in the measured window",
		Value: func(t record.Trial) float64 { return float64(t.Requests) }},
	{Name: "ok_rps", Label: "successful throughput, 2xx only (req/s)", Unit: "req/s", Kind: Throughput, HigherIsBetter: true, Claim: true, Source: "load generator: answers with a 2xx status per second of the measured window (seed 002's requests_ok)",
		Value: func(t record.Trial) float64 { return t.OKRPS }},
	{Name: "errors", Label: "errors", Kind: Failure, Whole: true, Claim: true, Default: InTrials, NoWarmup: true, Events: true, Source: "load generator: failed requests (non-2xx, timeouts, connection errors)",
		Value: func(t record.Trial) float64 { return float64(t.Errors) }},
	{Name: "error_pct", Label: "errors (% of requests)", Unit: "%", Kind: Failure, Claim: true, NoWarmup: true, Events: true, Source: "load generator: errors over requests",
		Value: func(t record.Trial) float64 { return t.ErrorPct }},
	{Name: "p50_ms", Label: "p50 latency (ms)", Unit: "ms", Kind: Latency, Claim: true, Default: InTrials | InComparisons | InDiff, Source: "load generator: HdrHistogram of response times",
		Value: func(t record.Trial) float64 { return t.P50Ms }},
	{Name: "p90_ms", Label: "p90 latency (ms)", Unit: "ms", Kind: Latency, Claim: true, Source: "load generator: HdrHistogram of response times",
		Value: func(t record.Trial) float64 { return t.P90Ms }},
	{Name: "p99_ms", Label: "p99 latency (ms)", Unit: "ms", Kind: Latency, Claim: true, Default: InTrials | InComparisons | InDiff, Source: "load generator: HdrHistogram of response times",
		Value: func(t record.Trial) float64 { return t.P99Ms }},
	{Name: "p999_ms", Label: "p99.9 latency (ms)", Unit: "ms", Kind: Latency, Claim: true, Source: "load generator: HdrHistogram of response times",
		Value: func(t record.Trial) float64 { return t.P999Ms }},
	{Name: "max_ms", Label: "max latency (ms)", Unit: "ms", Kind: Latency, Claim: true, Source: "load generator: slowest response",
		Value: func(t record.Trial) float64 { return t.MaxMs }},
	{Name: "mean_ms", Label: "mean latency (ms)", Unit: "ms", Kind: Latency, Claim: true, Source: "load generator: mean response time",
		Value: func(t record.Trial) float64 { return t.MeanMs }},
	{Name: "wall_ms", Label: "wall time (ms)", Unit: "ms", Kind: Duration, Claim: true, Default: InTrials | InComparisons, Source: "load generator: first request sent to last response (bursts)",
		Value: func(t record.Trial) float64 { return t.WallMs }},
	{Name: "connect_p50_ms", Label: "p50 TCP connect time (ms)", Unit: "ms", Kind: Duration, Claim: true, Source: "load generator: HdrHistogram of the connects that succeeded, SYN sent to the handshake's completion on the client (inside the requests' latency too)",
		Value: func(t record.Trial) float64 { return t.ConnectP50Ms }},
	{Name: "connect_p99_ms", Label: "p99 TCP connect time (ms)", Unit: "ms", Kind: Duration, Claim: true, Source: "load generator: HdrHistogram of the connects that succeeded; 1 s and more is a SYN sent again after the server's listen queue dropped it",
		Value: func(t record.Trial) float64 { return t.ConnectP99Ms }},
	{Name: "connect_max_ms", Label: "slowest TCP connect (ms)", Unit: "ms", Kind: Duration, Claim: true, Source: "load generator: the slowest connect that succeeded",
		Value: func(t record.Trial) float64 { return t.ConnectMaxMs }},
	{Name: "slow_connects", Label: "TCP connects of 1 s or more (SYN sent again)", Kind: Failure, Whole: true, Claim: true, NoWarmup: true, Events: true, Source: "load generator: connects that took at least 1 s, Linux's initial retransmission timeout for a SYN: the server's listen queue was full (seed 002's Tomcat at 20k connections refused them outright)",
		Value: func(t record.Trial) float64 { return float64(t.SlowConnects) }},
	{Name: "connects", Label: "TCP connects", Kind: Resource, Whole: true, Claim: true, NoWarmup: true, Source: "load generator: TCP connects that succeeded in the window (once per connection with keep-alive; once per request against a server that closes after each answer)",
		Value: func(t record.Trial) float64 { return float64(t.Connects) }},
	{Name: "distinct_threads", Label: "server threads used", Kind: Resource, Whole: true, Claim: true, Default: InTrials, Head: "threads", NoWarmup: true, Source: "target: distinct thread names reported in responses",
		Value: func(t record.Trial) float64 { return float64(t.DistinctThreads) }},
	{Name: "target_cpu_pct", Label: "target CPU (% of one core)", Unit: OneCore, Kind: Resource, PerCore: true, Claim: true, Default: InTrials, Head: "target CPU (% of one core)", SpoiledBy: byProcess, OwnSteady: true, Source: "telemetry: target process CPU over the trial",
		Value: func(t record.Trial) float64 { return t.TargetCPUPct }},
	{Name: "target_peak_threads", Label: "target OS threads (peak)", Kind: Resource, Whole: true, Claim: true, SpoiledBy: byProcess, NoWarmup: true, Source: "telemetry: peak OS threads of the target process",
		Value: func(t record.Trial) float64 { return float64(t.TargetThreads) }},
	{Name: "target_peak_rss_mb", Label: "target memory, peak RSS (MiB)", Unit: "MiB", Kind: Resource, Claim: true, SpoiledBy: byProcess, Source: "telemetry: peak resident memory of the target process",
		Value: func(t record.Trial) float64 { return t.TargetRSSMB }},
	{Name: "target_peak_cpu_pct", Label: "target CPU, busiest second (% of one core)", Unit: OneCore, Kind: Resource, PerCore: true, Claim: true, SpoiledBy: byProcess, OwnSteady: true, Source: "telemetry: highest per-second CPU of the target process in the window",
		Value: func(t record.Trial) float64 { return t.TargetPeakCPUPct }},
	{Name: "peak_heap_mb", Label: "JVM heap in use, peak (MiB)", Unit: "MiB", Kind: Resource, Claim: true, SpoiledBy: byGauge, Source: "telemetry: highest jvm_memory_used_bytes{area=\"heap\"} of the per-second scrapes",
		Value: func(t record.Trial) float64 { return t.PeakHeapMB }},
	{Name: "gc_count", Label: "GC pauses", Kind: Resource, Whole: true, Claim: true, SpoiledBy: byGC, Events: true, Source: "telemetry: growth of jvm_gc_pause_seconds_count over the window",
		Value: func(t record.Trial) float64 { return float64(t.GCCount) }},
	{Name: "gc_pause_ms", Label: "GC pause time (ms)", Unit: "ms", Kind: Resource, Claim: true, SpoiledBy: byGC, Events: true, Source: "telemetry: growth of jvm_gc_pause_seconds_sum over the window",
		Value: func(t record.Trial) float64 { return t.GCPauseMs }},
	{Name: "jvm_live_threads", Label: "JVM platform threads (peak)", Kind: Resource, Whole: true, Claim: true, SpoiledBy: byGauge, NoWarmup: true, Source: "telemetry: highest jvm_threads_live_threads of the per-second scrapes (virtual threads are not in it)",
		Value: func(t record.Trial) float64 { return float64(t.JVMLiveThreads) }},
	{Name: "peak_virtual_threads", Label: "virtual threads handling requests (peak)", Kind: Resource, Whole: true, Claim: true, SpoiledBy: byGauge, NoWarmup: true, Source: "telemetry: highest threadlab_virtual_inflight of the per-second scrapes (requests in progress on virtual threads; built-in targets)",
		Value: func(t record.Trial) float64 { return float64(t.PeakVirtualThreads) }},
	{Name: "peak_hikari_pending", Label: "threads waiting for a pooled connection (peak)", Kind: Resource, Whole: true, Claim: true, SpoiledBy: byGauge, NoWarmup: true, Source: "telemetry: highest hikaricp_connections_pending of the per-second scrapes",
		Value: func(t record.Trial) float64 { return float64(t.PeakHikariPending) }},
	{Name: "pinned_events", Label: "virtual threads pinned (JFR events)", Kind: Resource, Whole: true, Claim: true, SpoiledBy: byCounter, NoWarmup: true, Source: "telemetry: growth of threadlab_virtual_pinned_total over the window, the jdk.VirtualThreadPinned events (JFR, 20 ms threshold) the spring-mvc target counts with a RecordingStream when threadlab.pinned-events.enabled=true; 0 for any other target",
		Value: func(t record.Trial) float64 { return float64(t.PinnedEvents) }},
	{Name: "gen_cpu_pct", Label: "generator CPU (% of one core)", Unit: OneCore, Kind: Resource, PerCore: true, Claim: true, Default: InTrials, Head: "generator CPU (% of one core)", Source: "telemetry: load generator CPU (a saturated generator measures itself)",
		Value: func(t record.Trial) float64 { return t.GenCPUPct }},
	{Name: "asked_rate", Label: "asked rate (req/s)", Unit: "req/s", Kind: Schedule, HigherIsBetter: true, NoWarmup: true, Source: "load generator: the open-model arrival rate asked for",
		Value: func(t record.Trial) float64 { return t.AskedRate }},
	{Name: "achieved_rate", Label: "achieved rate (req/s)", Unit: "req/s", Kind: Schedule, HigherIsBetter: true, Source: "load generator: arrivals actually sent",
		Value: func(t record.Trial) float64 { return t.AchievedRate }},
	{Name: "missed", Label: "missed sends", Kind: Schedule, Whole: true, Source: "load generator: arrivals dropped because no connection was free",
		Value: func(t record.Trial) float64 { return float64(t.Missed) }},
	{Name: "late_pct", Label: "late sends (% of sends)", Unit: "%", Kind: Schedule, Source: "load generator: arrivals sent behind schedule",
		Value: func(t record.Trial) float64 { return t.LatePct }},
	{Name: "release_spread_ms", Label: "burst release spread across generators (ms)", Unit: "ms", Kind: Schedule, NoWarmup: true, Source: "fleet: the latest generator's release of its share of the burst minus the earliest, on the agreed clock (noise.max_release_spread bounds it)",
		Value: func(t record.Trial) float64 { return t.ReleaseSpreadMs }},
	{Name: "host_busy_pct", Label: "host busy before the trial (% of all CPUs)", Unit: "% of all CPUs", Kind: Host, Default: InTrials, Head: "host busy (% of all CPUs)", NoWarmup: true, Source: "host check: CPU used outside threadlab before the trial",
		Value: func(t record.Trial) float64 { return t.HostBusyPct }},
	{Name: "host_outside_pct", Label: "host CPU outside threadlab during the window (% of one core)", Unit: OneCore, Kind: Host, PerCore: true, NoWarmup: true, Source: "series: host CPU minus threadlab, the target and its services, averaged over the window (the in-trial noise gate)",
		Value: func(t record.Trial) float64 { return t.HostOutsidePct }},
	{Name: "host_steal_pct", Label: "CPU stolen by the hypervisor during the window (% of one core)", Unit: OneCore, Kind: Host, PerCore: true, NoWarmup: true, Source: "series: steal time averaged over the window (the in-trial noise gate)",
		Value: func(t record.Trial) float64 { return t.HostStealPct }},
	{Name: "host_spin_ns", Label: "host speed probe before the window, per 1000 steps, lower is faster (ns)", Unit: "ns", Kind: Host, NoWarmup: true, Source: "pipeline: a fixed chain of dependent integer steps on this machine just before the window, the fastest of 7 runs (telemetry.SpinNs), so a change in the virtual CPU's own speed, which steal does not show, is told from a change in the target; 0 for a target on another host and in runs recorded before the column",
		Value: func(t record.Trial) float64 { return t.HostSpinNs }},
	{Name: "cooldown_ms", Label: "cool-down wait (ms)", Unit: "ms", Kind: Duration, NoWarmup: true, Source: "pipeline: time waited for the host to go quiet",
		Value: func(t record.Trial) float64 { return t.CoolDownMs }},
	{Name: "startup_ms", Label: "target start-up (ms)", Unit: "ms", Kind: Duration, NoWarmup: true, Source: "pipeline: start of the target to its ready probe",
		Value: func(t record.Trial) float64 { return t.StartupMs }},
	// CPU-seconds from cumulative counters (issue 25): read at the load's
	// release and at its last answer, so no sampling cadence is in them
	// (target_cpu_pct's once-a-second samples read a 0.46 s burst at 40% to
	// 163% of one core). Shown when asked for: runs recorded before the
	// columns lack them.
	{Name: "target_cpu_s", Label: "target CPU time of the trial (CPU-s)", Unit: "CPU-s", Kind: Resource, Claim: true, SpoiledBy: []string{"cpu_window_lost"}, OwnSteady: true, Source: "telemetry: the target process's cumulative CPU time, all threads, user+system (the kernel's process CPU clock, else /proc utime+stime), read at the load's release and at its last answer, on the target's host; the difference",
		Value: func(t record.Trial) float64 { return t.TargetCPUSec }},
	{Name: "target_cpu_ms_per_req", Label: "target CPU per request (CPU-ms)", Unit: "CPU-ms", Kind: Resource, Claim: true, SpoiledBy: []string{"cpu_window_lost"}, OwnSteady: true, Source: "telemetry: target_cpu_s over the requests the trial completed in all its groups (the target served them all), in milliseconds: what a request costs the server",
		Value: func(t record.Trial) float64 { return t.TargetCPUMsPerReq }},
	// JIT compilation time (wave 3): a fork whose level moves while the JIT
	// is still compiling is warming up, one whose level moves without it
	// is not (cpu-bound 20261203T102928Z: 30-40% steps in per-request CPU
	// on a flat host). Shown when asked for and in the steady-state table:
	// runs recorded before the column lack it.
	{Name: "jit_ms", Label: "JIT compilation time (ms)", Unit: "ms", Kind: Resource, Claim: true, SpoiledBy: byCounter, Events: true, Source: "telemetry: growth of jvm_compilation_time_ms_total over the window (Micrometer's JvmCompilationMetrics: the JVM's CompilationMXBean, compile time summed over the JIT's threads); 0 for a target without the counter",
		Value: func(t record.Trial) float64 { return t.JITMs }},
}

// Lookup returns the definition of a trials.csv metric by name.
func Lookup(name string) (Def, bool) {
	i := slices.IndexFunc(Defs, func(d Def) bool { return d.Name == name })
	if i < 0 {
		return Def{}, false
	}
	return Defs[i], true
}

// WarmsUp reports whether claims on a metric read only each fork's steady
// iterations (Def.NoWarmup false); true for an unknown name, the safe
// reading.
func WarmsUp(name string) bool {
	d, _ := Lookup(name)
	return !d.NoWarmup
}

// OwnSteady reports whether claims on a metric also need each fork's
// steady state in the metric itself (Def.OwnSteady); false for an unknown
// name, which the primary's steady selection covers.
func OwnSteady(name string) bool {
	d, _ := Lookup(name)
	return d.OwnSteady && !d.NoWarmup
}

// Events reports whether a fork's value of the metric is the mean of its
// windows (Def.Events) rather than their median; false for an unknown name.
func Events(name string) bool {
	d, _ := Lookup(name)
	return d.Events
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
func Names() []string { return names(Defs) }

func names(ds []Def) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Name
	}
	return out
}

// Shown lists the metrics whose Default includes any place of where,
// grouped by Kind in Kind order and in table order within a kind: for
// InTrials rps, p50_ms, p99_ms, wall_ms, errors, distinct_threads,
// target_cpu_pct, gen_cpu_pct, host_busy_pct.
func Shown(where Where) []string {
	var ds []Def
	for _, d := range Defs {
		if d.Default&where != 0 {
			ds = append(ds, d)
		}
	}
	slices.SortStableFunc(ds, func(a, b Def) int { return cmp.Compare(a.Kind, b.Kind) })
	return names(ds)
}

// Spoiled lists the columns a telemetry flag code leaves wrong: the
// trials.csv metrics first, in table order, then the series.csv columns
// not named already. Nil for a code that spoils nothing.
func Spoiled(code string) []string {
	var out []string
	for _, d := range Defs {
		if slices.Contains(d.SpoiledBy, code) {
			out = append(out, d.Name)
		}
	}
	for _, d := range Series {
		if slices.Contains(d.SpoiledBy, code) && !slices.Contains(out, d.Name) {
			out = append(out, d.Name)
		}
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
// load model of its measured group, and the one each fork's steady state is
// classified on: wall time for a burst (seeds 000 and 003 measure the time
// until all are answered); p99 latency for an open model, whose throughput
// is the schedule's (wrk2: at a fixed rate, latency is the response, and a
// target still warming up answers the same requests a second, later); and
// throughput for a closed model, whose users send as fast as they are
// answered. experiments.Manifest.Primary asks here.
func Primary(model string) string {
	switch model {
	case "burst":
		return "wall_ms"
	case "open":
		return "p99_ms"
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

// Measured is the trial's value of a metric when there is one to read:
// false for an unknown name, a NaN, or a column a telemetry flag of the
// trial spoils (a lost pid leaves target_cpu_pct at 0, which is no
// measurement). Verdicts, steady-state classification and the trials table
// all read values through it, so a spoiled 0 is neither counted nor shown.
func Measured(t record.Trial, name string) (float64, bool) {
	d, ok := Lookup(name)
	if !ok {
		return 0, false
	}
	x := d.Value(t)
	if math.IsNaN(x) {
		return x, false
	}
	if t.Flags != "" {
		for _, code := range strings.Split(t.Flags, ";") {
			if code != "" && slices.Contains(d.SpoiledBy, code) {
				return x, false
			}
		}
	}
	return x, true
}

// SeriesDef defines one numeric series.csv column: a per-second value
// of one trial, drawn by the report's per-second charts.
type SeriesDef struct {
	Name      string // the series.csv column
	Label     string // for chart titles, with the unit
	Unit      string // as Def.Unit
	Kind      Kind
	PerCore   bool     // a share of one core (Unit is OneCore)
	SpoiledBy []string // as Def.SpoiledBy
	Source    string
	Value     func(s record.Sample) float64 // NaN for a second without a sample
}

// Series lists every numeric series.csv column. A Gauge column is NaN for
// a second the sampler did not measure; the client's columns are per load
// group, the server's repeat in every group's row.
var Series = []SeriesDef{
	{Name: "requests", Label: "throughput (req/s)", Unit: "req/s", Kind: Throughput, Source: "load generator: requests completed in the second",
		Value: func(s record.Sample) float64 { return float64(s.Requests) }},
	{Name: "errors", Label: "errors per second", Kind: Failure, Source: "load generator: requests failed in the second",
		Value: func(s record.Sample) float64 { return float64(s.Errors) }},
	{Name: "p50_ms", Label: "p50 latency (ms)", Unit: "ms", Kind: Latency, Source: "load generator: HdrHistogram of the second's response times",
		Value: func(s record.Sample) float64 { return s.P50Ms }},
	{Name: "p99_ms", Label: "p99 latency (ms)", Unit: "ms", Kind: Latency, Source: "load generator: HdrHistogram of the second's response times",
		Value: func(s record.Sample) float64 { return s.P99Ms }},
	{Name: "target_cpu_pct", Label: "target CPU (% of one core)", Unit: OneCore, Kind: Resource, PerCore: true, SpoiledBy: byProcess, Source: "telemetry: target process CPU in the second",
		Value: func(s record.Sample) float64 { return float64(s.TargetCPUPct) }},
	{Name: "target_rss_mb", Label: "target memory, RSS (MiB)", Unit: "MiB", Kind: Resource, SpoiledBy: byProcess, Source: "telemetry: resident memory of the target process",
		Value: func(s record.Sample) float64 { return float64(s.TargetRSSMB) }},
	{Name: "os_threads", Label: "target OS threads", Kind: Resource, SpoiledBy: byProcess, Source: "telemetry: OS threads of the target process",
		Value: func(s record.Sample) float64 { return float64(s.OSThreads) }},
	{Name: "jvm_live_threads", Label: "JVM platform threads live", Kind: Resource, SpoiledBy: byGauge, Source: "telemetry: jvm_threads_live_threads at the second's scrape (virtual threads are not in it)",
		Value: func(s record.Sample) float64 { return float64(s.JVMThreads) }},
	{Name: "heap_used_mb", Label: "heap used (MiB)", Unit: "MiB", Kind: Resource, SpoiledBy: byGauge, Source: "telemetry: jvm_memory_used_bytes{area=\"heap\"} at the second's scrape",
		Value: func(s record.Sample) float64 { return float64(s.HeapUsedMB) }},
	{Name: "gc_count", Label: "GC pauses in the second", Kind: Resource, SpoiledBy: byGC, Source: "telemetry: growth of jvm_gc_pause_seconds_count since the previous scrape",
		Value: func(s record.Sample) float64 { return float64(s.GCCount) }},
	{Name: "gc_pause_ms", Label: "GC pause time in the second (ms)", Unit: "ms", Kind: Resource, SpoiledBy: byGC, Source: "telemetry: growth of jvm_gc_pause_seconds_sum since the previous scrape",
		Value: func(s record.Sample) float64 { return float64(s.GCPauseMs) }},
	{Name: "hikari_active", Label: "pooled connections in use", Kind: Resource, SpoiledBy: byGauge, Source: "telemetry: hikaricp_connections_active at the second's scrape",
		Value: func(s record.Sample) float64 { return float64(s.HikariActive) }},
	{Name: "hikari_pending", Label: "threads waiting for a pooled connection", Kind: Resource, SpoiledBy: byGauge, Source: "telemetry: hikaricp_connections_pending at the second's scrape",
		Value: func(s record.Sample) float64 { return float64(s.HikariPending) }},
	{Name: "gen_cpu_pct", Label: "generator CPU (% of one core)", Unit: OneCore, Kind: Resource, PerCore: true, Source: "telemetry: load generator CPU in the second",
		Value: func(s record.Sample) float64 { return float64(s.GenCPUPct) }},
	{Name: "host_cpu_pct", Label: "host CPU outside threadlab (% of one core)", Unit: OneCore, Kind: Host, PerCore: true, Source: "series: host CPU minus threadlab, the target and its services, in the second",
		Value: func(s record.Sample) float64 { return float64(s.HostCPUPct) }},
	{Name: "host_steal_pct", Label: "host CPU steal (% of one core)", Unit: OneCore, Kind: Host, PerCore: true, Source: "series: CPU time the hypervisor gave to other guests in the second",
		Value: func(s record.Sample) float64 { return float64(s.HostStealPct) }},
	{Name: "virtual_threads", Label: "virtual threads handling requests", Kind: Resource, SpoiledBy: byGauge, Source: "telemetry: threadlab_virtual_inflight at the second's scrape (built-in targets)",
		Value: func(s record.Sample) float64 { return float64(s.VirtualThreads) }},
	{Name: "jit_ms", Label: "JIT compilation time in the second (ms)", Unit: "ms", Kind: Resource, SpoiledBy: byCounter, Source: "telemetry: growth of jvm_compilation_time_ms_total since the previous scrape",
		Value: func(s record.Sample) float64 { return float64(s.JITMs) }},
}

// LookupSeries returns the definition of a series.csv column by name.
func LookupSeries(name string) (SeriesDef, bool) {
	i := slices.IndexFunc(Series, func(d SeriesDef) bool { return d.Name == name })
	if i < 0 {
		return SeriesDef{}, false
	}
	return Series[i], true
}
