package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/store/record"
)

// seriesCharts: small multiples of the per-second series through the
// median trial of each variant (at the heaviest sweep point), one chart
// per quantity so variants can be compared on a shared axis.
func (v *runView) seriesCharts() ([]*chart, string) {
	l := v.layout
	if len(v.run.Series) == 0 || len(l.Points) == 0 {
		return nil, ""
	}
	point := l.Points[len(l.Points)-1]
	var picks []seriesPick
	var described []string
	for _, vr := range l.Variants {
		t, ok := v.medianTrial(vr, point)
		if !ok {
			continue
		}
		var rows []record.Sample
		for _, s := range v.run.Series {
			if s.Variant == vr && s.Point == point && s.Trial == t.Trial && s.Group == l.Measured {
				rows = append(rows, s)
			}
		}
		if len(rows) == 0 { // server-only rows, or a group the generator did not split out
			for _, s := range v.run.Series {
				if s.Variant == vr && s.Point == point && s.Trial == t.Trial {
					rows = append(rows, s)
				}
			}
		}
		if len(rows) == 0 {
			continue
		}
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].T < rows[j].T })
		picks = append(picks, seriesPick{vr, t.Trial, rows})
		described = append(described, fmt.Sprintf("%s trial %d", vr, t.Trial))
	}
	if len(picks) == 0 {
		return nil, ""
	}
	type quantity struct {
		id, title string
		get       func(record.Sample) float64
		alt       func(record.Sample) float64 // dashed second line, e.g. OS threads
		altName   string
		more      []extraLine // further lines, each in its own dash
		optional  bool        // shown only when some value is non-zero
		client    bool        // a load-generator column (burst runs draw these from histograms)
	}
	// Labels, units and readers come from the metric home (metric.Series);
	// a chart of two or three lines names which line is which.
	col := func(name string) metric.SeriesDef {
		d, _ := metric.LookupSeries(name)
		return d
	}
	one := func(id, name string) quantity {
		d := col(name)
		return quantity{id: id, title: d.Label, get: d.Value}
	}
	threads := quantity{id: "threads", title: "threads: JVM live (solid), OS (dashed)", get: col("jvm_live_threads").Value,
		alt: col("os_threads").Value, altName: "OS"}
	if measuredAny(picks, col("virtual_threads").Value) {
		// Platform threads and virtual threads on one axis: a
		// thread-per-request server shows one or the other growing with
		// the load (runs recorded before the column keep the old chart).
		threads.title = "threads: JVM platform threads live (solid), " + col("virtual_threads").Label + " (dashed), OS (dotted)"
		threads.alt, threads.altName = col("virtual_threads").Value, "virtual threads"
		threads.more = []extraLine{{name: "OS", dash: "dotted", get: col("os_threads").Value}}
	}
	rps, p99, pool, steal := one("rps", "requests"), one("p99", "p99_ms"), one("pool", "hikari_active"), one("steal", "host_steal_pct")
	rps.client, p99.client = true, true
	pool.title, pool.alt, pool.altName, pool.optional = "connection pool: active (solid), pending (dashed)", col("hikari_pending").Value, "pending", true
	steal.optional = true
	qs := []quantity{rps, p99, one("cpu", "target_cpu_pct"), threads, one("heap", "heap_used_mb"), pool, steal}
	if v.burst() {
		// A burst's client side is drawn from its release at 10 ms
		// (burstCharts); one-second buckets of it said nothing.
		var server []quantity
		for _, q := range qs {
			if !q.client {
				server = append(server, q)
			}
		}
		qs = server
	}
	var out []*chart
	for _, q := range qs {
		if q.optional {
			nonzero := false
			for _, p := range picks {
				for _, s := range p.rows {
					if x := q.get(s); (x != 0 && !math.IsNaN(x)) || (q.alt != nil && q.alt(s) != 0 && !math.IsNaN(q.alt(s))) {
						nonzero = true
					}
				}
			}
			if !nonzero {
				continue
			}
		}
		id := "chart_series_" + q.id
		line := charts.NewLine()
		line.SetGlobalOptions(append(baseOpts(id, v.assetsHost, opts.Grid{Left: "12", Right: "20", Top: "16", Bottom: "8"}),
			// One HTML legend above the grid serves all small charts.
			charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
			charts.WithTooltipOpts(opts.Tooltip{Trigger: "axis", ValueFormatter: fn(`function (x) { ` + jsFmt + ` return f(x); }`)}),
			charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "s", NameLocation: "end", NameGap: 8, MinInterval: 1}),
			charts.WithYAxisOpts(opts.YAxis{Type: "value", Scale: opts.Bool(false)}),
		)...)
		for _, p := range picks {
			color := v.color(p.variant)
			data := make([]opts.LineData, len(p.rows))
			for i, s := range p.rows {
				data[i] = opts.LineData{Value: []any{round(s.T), gap(q.get(s))}}
			}
			// A burst may end within a second or two: with so few points a
			// line without symbols would be invisible.
			few := len(p.rows) <= 3
			line.AddSeries(p.variant, data, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
				s.ShowSymbol = opts.Bool(few)
				s.SymbolSize = 5
				s.ItemStyle = &opts.ItemStyle{Color: color}
				s.LineStyle = &opts.LineStyle{Color: color, Width: 2}
			}))
			if q.alt != nil {
				alt := make([]opts.LineData, len(p.rows))
				for i, s := range p.rows {
					alt[i] = opts.LineData{Value: []any{round(s.T), gap(q.alt(s))}}
				}
				line.AddSeries(p.variant+" "+q.altName, alt, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
					s.ShowSymbol = opts.Bool(few)
					s.Symbol = "emptyCircle"
					s.SymbolSize = 5
					s.ItemStyle = &opts.ItemStyle{Color: color}
					s.LineStyle = &opts.LineStyle{Color: color, Width: 1.5, Type: "dashed"}
				}))
			}
			for _, x := range q.more {
				data := make([]opts.LineData, len(p.rows))
				for i, s := range p.rows {
					data[i] = opts.LineData{Value: []any{round(s.T), gap(x.get(s))}}
				}
				line.AddSeries(p.variant+" "+x.name, data, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
					s.ShowSymbol = opts.Bool(few)
					s.Symbol = "emptyCircle"
					s.SymbolSize = 4
					s.ItemStyle = &opts.ItemStyle{Color: color}
					s.LineStyle = &opts.LineStyle{Color: color, Width: 1, Type: x.dash}
				}))
			}
		}
		alt := seriesAlt(q.title, picks, q.get)
		if q.more != nil { // the lines beyond the solid one, in words too
			alt += " " + seriesAlt(q.altName, picks, q.alt)
			for _, x := range q.more {
				alt += " " + seriesAlt(x.name, picks, x.get)
			}
		}
		out = append(out, &chart{ID: id, Title: q.title, Height: 220, Small: true, Script: scriptFor(id, line), Alt: alt})
	}
	at := ""
	if point != "" {
		at = " at " + pointLabel(point, l.SweepKeys)
	}
	note := fmt.Sprintf("Per-second series through the median trial of each variant%s (%s), by the primary metric. Client columns belong to the %q group; server columns (CPU, threads, heap) are the whole target. A second without a server sample is a gap in the line, not a zero.",
		at, strings.Join(described, ", "), l.Measured)
	if threads.more != nil {
		note += " Virtual threads handling requests is the built-in targets' threadlab_virtual_inflight gauge, read once a second like the JVM's live platform threads (jvm_threads_live_threads, which leaves virtual threads out): 0 on platform threads and on reactive handlers, a gap for a target without the gauge."
	}
	if v.burst() {
		note += " Seconds count from the start of the load run (connections are opened before the burst is released); the server is sampled once a second, so these are coarse next to the 10 ms burst curves above."
	}
	return out, note
}

// extraLine is a further line of a small multiple, drawn in the variant's
// colour with its own dash.
type extraLine struct {
	name, dash string
	get        func(record.Sample) float64
}

// measuredAny tells whether get has a measured value in any picked row.
func measuredAny(picks []seriesPick, get func(record.Sample) float64) bool {
	for _, p := range picks {
		for _, s := range p.rows {
			if !math.IsNaN(get(s)) {
				return true
			}
		}
	}
	return false
}

// seriesPick is the trial whose series a variant's line shows.
type seriesPick struct {
	variant string
	trial   int
	rows    []record.Sample
}

// medianTrial is the valid trial of a cell whose primary metric is the
// (lower) median, so the series shown is a typical one, not the best.
// forkMedians is each fork's median valid trial of a cell by the primary
// metric, in fork order (ties by trial number, as medianTrial).
func (v *runView) forkMedians(variant, point string) []record.Trial {
	byFork := map[int][]record.Trial{}
	for _, t := range v.trialsOf(variant, point, v.layout.Measured) {
		if t.Valid {
			byFork[forkOf(t)] = append(byFork[forkOf(t)], t)
		}
	}
	var out []record.Trial
	for _, f := range slices.Sorted(maps.Keys(byFork)) {
		out = append(out, medianOf(byFork[f], v.layout.Primary))
	}
	return out
}

// medianOf is the median of ts by metric, the lower middle one of an even
// count; ts is sorted in place.
func medianOf(ts []record.Trial, primary string) record.Trial {
	sort.SliceStable(ts, func(i, j int) bool {
		a, _ := metric.Value(ts[i], primary)
		b, _ := metric.Value(ts[j], primary)
		if a != b {
			return a < b
		}
		return ts[i].Trial < ts[j].Trial
	})
	return ts[(len(ts)-1)/2]
}

func (v *runView) medianTrial(variant, point string) (record.Trial, bool) {
	var ts []record.Trial
	for _, t := range v.trialsOf(variant, point, v.layout.Measured) {
		if t.Valid {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return record.Trial{}, false
	}
	return medianOf(ts, v.layout.Primary), true
}

// gap is round for series values, with a missing sample as null: ECharts
// breaks the line there instead of drawing a fall to zero.
func gap(x float64) any {
	if math.IsNaN(x) {
		return nil
	}
	return round(x)
}

// seriesAlt sums up a small multiple in words: each variant's range.
func seriesAlt(title string, picks []seriesPick, get func(record.Sample) float64) string {
	var parts []string
	for _, p := range picks {
		lo, hi, missing := math.Inf(1), math.Inf(-1), 0
		for _, s := range p.rows {
			x := get(s)
			if math.IsNaN(x) {
				missing++
				continue
			}
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		part := p.variant + ": no samples"
		if !math.IsInf(lo, 1) {
			part = fmt.Sprintf("%s: %s to %s over %d s", p.variant, num(lo), num(hi), len(p.rows))
		}
		if missing > 0 {
			part += fmt.Sprintf(" (%d s missing)", missing)
		}
		parts = append(parts, part)
	}
	return title + " through a trial. " + strings.Join(parts, "; ") + "."
}
