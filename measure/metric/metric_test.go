package metric

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// notMetrics are numeric trials.csv columns that identify a row rather than
// measure anything.
var notMetrics = []string{"trial", "seq", "pid", "fork", "iteration"}

// column is one numeric CSV column of a record type, set to a distinct
// value in a record.
type column[R any] struct {
	name, field string
	whole       bool    // an integer field
	want        float64 // the value set
	rec         R       // a record with only this field set
}

// numericColumns lists the numeric CSV columns of record type R, but
// those in skip, each with a record holding a value of its own.
func numericColumns[R any](skip []string) []column[R] {
	var out []column[R]
	typ := reflect.TypeFor[R]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		col := f.Tag.Get("csv")
		switch f.Type.Kind() {
		case reflect.Int, reflect.Int64, reflect.Float64:
		default:
			continue
		}
		if slices.Contains(skip, col) {
			continue
		}
		c := column[R]{name: col, field: f.Name, want: float64(i + 7)} // distinct per field
		v := reflect.ValueOf(&c.rec).Elem().Field(i)
		if c.whole = v.CanInt(); c.whole {
			v.SetInt(int64(c.want))
		} else {
			v.SetFloat(c.want)
		}
		out = append(out, c)
	}
	return out
}

// TestEveryNumericColumnIsDefined sets each numeric field of record.Trial
// to a distinct value and reads it back through its definition: a column
// added to trials.csv without a Def, or a Def reading the wrong field,
// fails here.
func TestEveryNumericColumnIsDefined(t *testing.T) {
	for _, c := range numericColumns[record.Trial](notMetrics) {
		d, ok := Lookup(c.name)
		if !ok {
			t.Errorf("trials.csv column %q (field %s) has no metric.Def; add one to Defs", c.name, c.field)
			continue
		}
		if got := d.Value(c.rec); got != c.want {
			t.Errorf("Def %q reads %g, want %g from field %s", c.name, got, c.want, c.field)
		}
		if d.Name != c.name {
			t.Errorf("Def %q: Name must equal the CSV header %q", d.Name, c.name)
		}
		if d.Whole != c.whole {
			t.Errorf("Def %q: Whole = %v, but field %s is an integer: %v (a count of things is printed without decimals)", c.name, d.Whole, c.field, c.whole)
		}
	}
}

// notSeries are numeric series.csv columns that place a row rather than
// measure anything.
var notSeries = []string{"trial", "t_s", "fork", "iteration"}

// TestEverySeriesColumnIsDefined is TestEveryNumericColumnIsDefined for
// series.csv: a per-second column without a SeriesDef would be drawn with
// a label of its own again.
func TestEverySeriesColumnIsDefined(t *testing.T) {
	cols := numericColumns[record.Sample](notSeries)
	for _, c := range cols {
		d, ok := LookupSeries(c.name)
		if !ok {
			t.Errorf("series.csv column %q (field %s) has no metric.SeriesDef; add one to Series", c.name, c.field)
			continue
		}
		if got := d.Value(c.rec); got != c.want {
			t.Errorf("SeriesDef %q reads %g, want %g from field %s", c.name, got, c.want, c.field)
		}
	}
	if len(cols) != len(Series) {
		t.Errorf("%d numeric series.csv columns, %d SeriesDefs: a SeriesDef names no column", len(cols), len(Series))
	}
	if _, ok := LookupSeries("t_s"); ok {
		t.Errorf("LookupSeries(t_s) found a SeriesDef: the second places a row, it measures nothing")
	}
}

// TestRoles: every Def and SeriesDef has a role, and the attributes that
// restate each other agree: a share of one core says so in its unit and
// label, a count has no unit.
func TestRoles(t *testing.T) {
	type def struct {
		name, label, unit string
		kind              Kind
		perCore           bool
		spoiledBy         []string
	}
	var all []def
	for _, d := range Defs {
		all = append(all, def{d.Name, d.Label, d.Unit, d.Kind, d.PerCore, d.SpoiledBy})
		if d.Whole && d.Unit != "" {
			t.Errorf("%s: a whole count has no unit, got %q", d.Name, d.Unit)
		}
		if d.Default != 0 && d.Kind == 0 {
			t.Errorf("%s is shown by default but has no Kind to order it by", d.Name)
		}
	}
	for _, d := range Series {
		all = append(all, def{"series " + d.Name, d.Label, d.Unit, d.Kind, d.PerCore, d.SpoiledBy})
	}
	for _, d := range all {
		if d.kind < Throughput || d.kind > Host || d.kind.String() == "unknown" {
			t.Errorf("%s: Kind %d is none of the kinds", d.name, d.kind)
		}
		if d.perCore != (d.unit == OneCore) || d.perCore != strings.HasSuffix(d.label, "("+OneCore+")") {
			t.Errorf("%s: PerCore %v, unit %q, label %q disagree", d.name, d.perCore, d.unit, d.label)
		}
		if d.unit != "" && !strings.HasSuffix(d.label, "("+d.unit+")") && d.unit != "%" {
			t.Errorf("%s: label %q does not name its unit %q", d.name, d.label, d.unit)
		}
	}
	if Kind(0).String() != "unknown" || Latency.String() != "latency" {
		t.Errorf("Kind names: %q, %q", Kind(0).String(), Latency.String())
	}
}

// TestShown pins the default lists as the pages show them: the trial
// table's columns, comparisons.csv's metrics and a diff's tables, grouped
// by kind (throughput, latency, durations, failures, resources, host).
func TestShown(t *testing.T) {
	tests := []struct {
		where Where
		want  []string
		why   string
	}{
		{InTrials, []string{"rps", "p50_ms", "p99_ms", "wall_ms", "errors", "distinct_threads", "target_cpu_pct", "gen_cpu_pct", "host_busy_pct"},
			"the run page's trial table: errors after the times, though errors comes first in table order"},
		{InComparisons, []string{"rps", "p50_ms", "p99_ms", "wall_ms"}, "comparisons.csv, after the primary metric"},
		{InDiff, []string{"rps", "p50_ms", "p99_ms"}, "threadlab diff and compare.html, after the primary metrics"},
		{InComparisons | InDiff, []string{"rps", "p50_ms", "p99_ms", "wall_ms"}, "a set of places is their union"},
		{0, nil, "no place, no metric"},
	}
	for _, tt := range tests {
		if got := Shown(tt.where); !slices.Equal(got, tt.want) {
			t.Errorf("Shown(%b) = %v, want %v (%s)", tt.where, got, tt.want, tt.why)
		}
	}
	heads := map[string]string{"rps": "rps", "distinct_threads": "threads", "host_busy_pct": "host busy (% of all CPUs)", "gen_cpu_pct": "generator CPU (% of one core)"}
	for name, want := range heads {
		if d, _ := Lookup(name); d.Header() != want {
			t.Errorf("Lookup(%q).Header() = %q, want %q", name, d.Header(), want)
		}
	}
}

// TestSpoiled: each flag spoils exactly the columns its failure leaves
// wrong (the lists telemetry kept before the metric home had them).
func TestSpoiled(t *testing.T) {
	process := []string{"target_cpu_pct", "target_peak_threads", "target_peak_rss_mb", "target_peak_cpu_pct", "target_rss_mb", "os_threads"}
	gauges := []string{"peak_heap_mb", "gc_count", "gc_pause_ms", "jvm_live_threads", "peak_virtual_threads", "peak_hikari_pending", "heap_used_mb", "hikari_active", "hikari_pending", "virtual_threads"}
	tests := []struct {
		code string
		want []string
		why  string
	}{
		{"pid_gone", process, "a lost pid spoils what /proc of the target gave, never the client's columns"},
		{"pid_unreadable", process, "so does a pid unreadable from the start"},
		{"pid_reused", process, "and a pid that now names another process"},
		{"scrape_failed", gauges, "a failed scrape spoils every JVM gauge and GC delta, not the pinned counter"},
		{"malformed_metrics", append(slices.Clone(gauges), "pinned_events", "jit_ms"), "a malformed scrape spoils everything read from it"},
		{"no_gc_baseline", []string{"gc_count", "gc_pause_ms", "pinned_events", "jit_ms"}, "counters read as growth need their baseline"},
		{"counter_reset", []string{"gc_count", "gc_pause_ms", "pinned_events", "jit_ms"}, "a counter that went backwards spoils its growth"},
		{"final_scrape_failed", []string{"pinned_events", "jit_ms"}, "the pinned and JIT counters need the last scrape; the GC deltas are per interval"},
		{"unknown", nil, "an unknown code spoils nothing"},
	}
	for _, tt := range tests {
		got := Spoiled(tt.code)
		if !sameSet(got, tt.want) {
			t.Errorf("Spoiled(%q) = %v, want %v (%s)", tt.code, got, tt.want, tt.why)
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(a, b)
}

func TestLookupHelpers(t *testing.T) {
	tests := []struct {
		name       string
		higher, ok bool
		label, why string
	}{
		{"rps", true, true, "throughput (req/s)", "throughput is better higher"},
		{"p99_ms", false, true, "p99 latency (ms)", "latency is better lower"},
		{"errors", false, true, "errors", "failures are better lower"},
		{"rsp", false, false, "rsp", "a typo is unknown, labelled by its name"},
	}
	for _, tt := range tests {
		if _, ok := Lookup(tt.name); ok != tt.ok {
			t.Errorf("Lookup(%q) ok = %v, want %v (%s)", tt.name, ok, tt.ok, tt.why)
		}
		if got := HigherIsBetter(tt.name); got != tt.higher {
			t.Errorf("HigherIsBetter(%q) = %v (%s)", tt.name, got, tt.why)
		}
		if got := Label(tt.name); got != tt.label {
			t.Errorf("Label(%q) = %q, want %q (%s)", tt.name, got, tt.label, tt.why)
		}
	}
	if c := Claimable(); !slices.Contains(c, "wall_ms") || slices.Contains(c, "host_busy_pct") {
		t.Errorf("Claimable() = %v: measured columns only, not the host's", c)
	}
}

// TestIdentifiersAreNotMetrics: the columns that name a trial must not be
// compared, diffed or claimed, whatever their type.
func TestIdentifiersAreNotMetrics(t *testing.T) {
	for _, col := range append(notMetrics, "variant", "valid", "point") {
		if _, ok := Lookup(col); ok {
			t.Errorf("Lookup(%q) found a Def: %s identifies a trial, it measures nothing", col, col)
		}
		if Rank(col) != len(Defs) {
			t.Errorf("Rank(%q) = %d, want %d (after every metric)", col, Rank(col), len(Defs))
		}
	}
	names := Names()
	if len(names) != len(Defs) || names[0] != Defs[0].Name || Rank(names[3]) != 3 {
		t.Errorf("Names() = %v: every Def, in table order", names)
	}
}

func TestPrimary(t *testing.T) {
	tests := []struct{ model, want, why string }{
		{"burst", "wall_ms", "a burst is judged by the time until all are answered (seeds 000, 003)"},
		{"closed", "rps", "a steady load is judged by its throughput"},
		{"open", "p99_ms", "an open-model load by its latency: its throughput is the schedule's (wrk2), flat whether the target is warm or not"},
		{"", "rps", "no measured group (an old run): throughput"},
	}
	for _, tt := range tests {
		if got := Primary(tt.model); got != tt.want {
			t.Errorf("Primary(%q) = %q, want %q (%s)", tt.model, got, tt.want, tt.why)
		}
		if _, ok := Lookup(Primary(tt.model)); !ok {
			t.Errorf("Primary(%q) names no Def", tt.model)
		}
	}
}

// TestCPUIsShareOfOneCore: a process's CPU is reported per core (200% is
// two cores busy); a label saying only "%" reads as a share of the machine.
func TestCPUIsShareOfOneCore(t *testing.T) {
	for _, name := range []string{"target_cpu_pct", "target_peak_cpu_pct", "gen_cpu_pct", "host_outside_pct", "host_steal_pct"} {
		d, _ := Lookup(name)
		if !d.PerCore || d.Unit != "% of one core" || !strings.HasSuffix(d.Label, "(% of one core)") {
			t.Errorf("%s: label %q unit %q per core %v, want the share of one core", name, d.Label, d.Unit, d.PerCore)
		}
	}
	// The per-second steal is % of one core too (sampler.go: ticks / dt ×
	// 100): labelled "of all CPUs" it overstated steal 2× on a 2-core VM.
	for _, name := range []string{"host_steal_pct", "host_cpu_pct", "target_cpu_pct"} {
		if d, _ := LookupSeries(name); !d.PerCore || d.Unit != OneCore {
			t.Errorf("series %s: unit %q, want %q", name, d.Unit, OneCore)
		}
	}
	if d, _ := Lookup("host_busy_pct"); d.PerCore {
		t.Errorf("host_busy_pct is a share of all CPUs, not of one core")
	}
}

// TestLatencyKind: the metrics lint warns about under a closed model are
// the response times of single requests; a burst's wall time is not one.
func TestLatencyKind(t *testing.T) {
	var got []string
	for _, d := range Defs {
		if d.Kind == Latency {
			got = append(got, d.Name)
		}
	}
	want := []string{"p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms"}
	if !slices.Equal(got, want) {
		t.Errorf("latency metrics = %v, want %v", got, want)
	}
}

// TestWarmsUp decides, per Def, whether claims on the metric read only
// each fork's steady iterations (it warms up) or every valid measured
// iteration (issue 20). A new Def fails here until it has a row.
func TestWarmsUp(t *testing.T) {
	rows := []struct {
		name  string
		warms bool
		why   string
	}{
		{"rps", true, "throughput rises as the JIT compiles the request path"},
		{"requests", true, "a timed window completes more requests once warm (a burst's count is fixed, but a timed load's is not)"},
		{"ok_rps", true, "throughput"},
		{"errors", false, "a failure is a failure whenever it happens: dropping warm-up bursts would hide it"},
		{"error_pct", false, "as errors"},
		{"p50_ms", true, "latency falls as the JIT warms up"},
		{"p90_ms", true, "latency"},
		{"p99_ms", true, "latency"},
		{"p999_ms", true, "latency"},
		{"max_ms", true, "latency"},
		{"mean_ms", true, "latency"},
		{"wall_ms", true, "a burst's wall time: the primary metric the selection is made on"},
		{"connect_p50_ms", true, "the kernel completes the handshake, but how fast the acceptor drains the listen queue follows its compiled code"},
		{"connect_p99_ms", true, "as connect_p50_ms"},
		{"connect_max_ms", true, "as connect_p50_ms"},
		{"slow_connects", false, "a SYN the listen queue dropped is a failure whenever it happens, as errors"},
		{"connects", false, "set by the load: once per connection, or once per request against a server that closes"},
		{"distinct_threads", false, "set by the pool size, the event-loop count or the burst size, not by compiled code"},
		{"target_cpu_pct", true, "JIT compiler threads burn CPU during warm-up"},
		{"target_peak_threads", false, "a thread count set by the configuration and the load"},
		{"target_peak_rss_mb", true, "the heap and the code cache grow during warm-up"},
		{"target_peak_cpu_pct", true, "CPU, as target_cpu_pct"},
		{"peak_heap_mb", true, "allocation falls as C2's escape analysis removes allocations"},
		{"gc_count", true, "follows allocation, which changes with compilation"},
		{"gc_pause_ms", true, "as gc_count"},
		{"jvm_live_threads", false, "platform threads: pool and event-loop sizes"},
		{"peak_virtual_threads", false, "requests in flight: the burst size or the users"},
		{"peak_hikari_pending", false, "threads waiting for a connection: users beyond the pool"},
		{"pinned_events", false, "a pinning is a property of the code path (a monitor held across blocking), counted per request"},
		{"gen_cpu_pct", true, "the generator's CPU follows the throughput it drives"},
		{"asked_rate", false, "configured by the manifest"},
		{"achieved_rate", true, "follows how fast the target answers"},
		{"missed", true, "follows how fast the target frees connections"},
		{"late_pct", true, "as missed"},
		{"release_spread_ms", false, "the fleet's clocks and start, not the target"},
		{"host_busy_pct", false, "the host before the trial, not the target"},
		{"host_outside_pct", false, "the host around the target"},
		{"host_steal_pct", false, "the hypervisor"},
		{"cooldown_ms", false, "the pipeline's wait"},
		{"startup_ms", false, "one value per fork, the same for each of its iterations"},
		{"target_cpu_s", true, "CPU-seconds per trial: JIT compiler threads burn CPU during warm-up, as target_cpu_pct"},
		{"target_cpu_ms_per_req", true, "CPU per request falls as the request path is compiled"},
		{"jit_ms", true, "the JIT's own work: it is the warm-up, and falls as the request path is compiled"},
		{"host_spin_ns", false, "the machine's speed, timed by threadlab while the target idles"},
	}
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.name] = true
		if got := WarmsUp(r.name); got != r.warms {
			t.Errorf("WarmsUp(%q) = %v, want %v: %s", r.name, got, r.warms, r.why)
		}
	}
	for _, d := range Defs {
		if !seen[d.Name] {
			t.Errorf("metric %q has no row here: decide whether it warms up (Def.NoWarmup) and add the row with the reason", d.Name)
		}
	}
	if !WarmsUp("no-such-metric") {
		t.Error("an unknown metric must read as warming up (the safe reading)")
	}
}
