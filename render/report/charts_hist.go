package report

import (
	"fmt"
	"math"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/threadlab/threadlab/measure/metric"
)

// spectrumChart: the full percentile spectrum of each cell's merged
// HdrHistogram, on a log axis of 1/(1-q) as HdrHistogram plots it, so
// p90, p99 and p99.9 are evenly spaced. Points with fewer than minAbove
// requests above them are hollow and joined by a dotted line: they are
// the few slowest requests, not a percentile the sample can estimate.
func (v *runView) spectrumChart() *chart {
	l := v.layout
	id := "chart_latency"
	line := charts.NewLine()
	line.SetGlobalOptions(append(baseOpts(id, v.assetsHost, bigGrid),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item", Formatter: fn(`function (p) {
  ` + jsFmt + `
  var q = 100 - 100 / p.value[0];
  return echarts.format.encodeHTML(p.seriesName) + ' p' + (Math.round(q * 1000) / 1000) + ': ' + f(p.value[1]) + ' ms' + (p.value[2] ? ' (fewer than 10 requests above: not a stable estimate)' : '');
}`)}),
		charts.WithXAxisOpts(opts.XAxis{Type: "log", Name: "percentile", NameLocation: "middle", NameGap: 30, Min: 1,
			AxisLabel: &opts.AxisLabel{Formatter: fn(`function (x) { return 'p' + (Math.round((100 - 100 / x) * 1000) / 1000); }`)}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "log", Name: "latency (ms)", NameLocation: "middle", NameGap: 56}),
	)...)
	cells, trials := 0, 0
	var alt []string
	hollowFrom, hollowTo := math.Inf(1), 0.0 // where some cell's percentiles turn hollow
	for _, p := range l.Points {
		for _, vr := range l.Variants {
			h, n := v.mergedHist(vr, p, l.Measured)
			if h == nil || h.TotalCount() == 0 {
				continue
			}
			cells++
			trials += n
			pts := spectrum(h)
			name := vr
			if p != "" {
				name += " " + pointLabel(p, l.SweepKeys)
			}
			var solid, hollow []opts.LineData
			for i, sp := range pts {
				val := []any{round(sp.X), round(sp.Ms)}
				if sp.Solid {
					solid = append(solid, opts.LineData{Value: val})
					continue
				}
				hollowFrom, hollowTo = math.Min(hollowFrom, sp.X), math.Max(hollowTo, sp.X)
				if len(hollow) == 0 && i > 0 { // join the hollow tail to the last solid point
					prev := pts[i-1]
					hollow = append(hollow, opts.LineData{Value: []any{round(prev.X), round(prev.Ms), 0}, Symbol: "none"})
				}
				hollow = append(hollow, opts.LineData{Value: append(val, 1)})
			}
			color, dash := v.color(vr), v.dashFor(p)
			line.AddSeries(name, solid, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
				s.Symbol = "circle" // filled: a line's default symbol is hollow
				s.SymbolSize = 5
				s.ItemStyle = &opts.ItemStyle{Color: color}
				s.LineStyle = &opts.LineStyle{Color: color, Width: 2, Type: dash}
			}))
			line.AddSeries(name, hollow, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
				s.Symbol = "emptyCircle"
				s.SymbolSize = 7
				s.ItemStyle = &opts.ItemStyle{Color: color}
				s.LineStyle = &opts.LineStyle{Color: color, Width: 1, Type: "dotted"}
			}))
			alt = append(alt, fmt.Sprintf("%s: p50 %s ms, p99 %s ms, max %s ms over %d requests", name,
				num(float64(h.ValueAtQuantile(50))/1000), num(float64(h.ValueAtQuantile(99))/1000), num(float64(h.Max())/1000), h.TotalCount()))
		}
	}
	if cells == 0 {
		return nil
	}
	caption := fmt.Sprintf("Latency at every percentile of all requests of a cell (its trials' histograms merged, %s); both axes are logarithmic. Hollow points on a dotted line have fewer than %d requests above them: they are the few slowest requests, not a stable estimate of that percentile. A closed or burst load under-reports the tail (coordinated omission): compare shapes, and trust absolute tails only from an open model.",
		histNote(cells, trials), minAbove)
	// Shade and label the percentiles the sample cannot support, from where
	// the first cell's turn hollow.
	shade := func(m map[string]any) {
		series, _ := m["series"].([]any)
		if len(series) == 0 || math.IsInf(hollowFrom, 1) {
			return
		}
		s0, _ := series[0].(map[string]any)
		s0["markArea"] = map[string]any{
			"silent":    true,
			"itemStyle": map[string]any{"color": "rgba(128,128,128,0.10)"},
			"label":     map[string]any{"show": true, "position": "insideTop", "color": "#555555", "fontSize": 11},
			"data": []any{[]any{
				map[string]any{"xAxis": round(hollowFrom), "name": fmt.Sprintf("fewer than %d requests above", minAbove)},
				map[string]any{"xAxis": round(hollowTo)},
			}},
		}
	}
	return &chart{ID: id, Title: "Latency percentile spectrum", Caption: caption, Height: 380, Script: scriptFor(id, line, shade),
		Alt: "Latency percentile spectrum. " + strings.Join(alt, "; ") + "."}
}

// distributionChart: the latency distribution of each variant at the
// heaviest sweep point, one thin line per trial (so every trial is
// visible, and an odd one stands out) and a thick line for the merged
// trials: the share of requests in each of 48 log-spaced latency bins.
func (v *runView) distributionChart() *chart {
	l := v.layout
	if len(l.Points) == 0 {
		return nil
	}
	point := l.Points[len(l.Points)-1]
	lo, hi := math.Inf(1), 0.0
	for _, vr := range l.Variants {
		if h, _ := v.mergedHist(vr, point, l.Measured); h != nil && h.TotalCount() > 0 {
			lo = math.Min(lo, float64(h.Min()))
			hi = math.Max(hi, float64(h.Max()))
		}
	}
	if hi == 0 {
		return nil
	}
	const bins = 48
	lo = math.Max(lo, 1)
	step := math.Log(hi*1.001/lo) / bins
	if step <= 0 {
		step = math.Log(2) / bins
	}
	share := func(bars []hdrBar, total int64) []opts.LineData {
		counts := make([]float64, bins)
		for _, b := range bars {
			mid := float64(b.From+b.To) / 2
			i := int(math.Log(math.Max(mid, lo)/lo) / step)
			counts[min(max(i, 0), bins-1)] += float64(b.Count)
		}
		out := make([]opts.LineData, bins)
		for i, c := range counts {
			centre := lo * math.Exp((float64(i)+0.5)*step) / 1000
			out[i] = opts.LineData{Value: []any{round(centre), round(100 * c / float64(total))}}
		}
		return out
	}
	id := "chart_distribution"
	line := charts.NewLine()
	line.SetGlobalOptions(append(baseOpts(id, v.assetsHost, bigGrid),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item", Formatter: fn(`function (p) {
  ` + jsFmt + `
  return echarts.format.encodeHTML(p.seriesName) + ': ' + f(p.value[1]) + '% of requests near ' + f(p.value[0]) + ' ms';
}`)}),
		charts.WithXAxisOpts(opts.XAxis{Type: "log", Name: "latency (ms)", NameLocation: "middle", NameGap: 30}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "share of requests (%)", NameLocation: "middle", NameGap: 44}),
	)...)
	var alt []string
	drawn, skipped := 0, 0
	for _, vr := range l.Variants {
		merged, n := v.mergedHist(vr, point, l.Measured)
		if merged == nil || merged.TotalCount() == 0 {
			continue
		}
		color := v.color(vr)
		thin := func(name string, h *hdrhistogram.Histogram, opacity float32, dash string) {
			line.AddSeries(name, share(bars(h), h.TotalCount()), charts.WithSeriesOpts(func(s *charts.SingleSeries) {
				s.ShowSymbol = opts.Bool(false)
				s.Symbol = "none"
				s.ItemStyle = &opts.ItemStyle{Color: color}
				s.LineStyle = &opts.LineStyle{Color: color, Width: 1, Opacity: opts.Float(opacity), Type: dash}
			}))
			drawn++
		}
		forks, invalid := v.forkHists(vr, point, l.Measured)
		for _, f := range forks {
			thin(vr+" forks", f.h, 0.45, "solid")
		}
		for i, t := range invalid {
			if i == maxInvalidLines {
				skipped += len(invalid) - i
				break
			}
			thin(vr+" invalid trials", t, 0.35, "dotted")
		}
		line.AddSeries(vr, share(bars(merged), merged.TotalCount()), charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.ShowSymbol = opts.Bool(false)
			s.Symbol = "none"
			s.ItemStyle = &opts.ItemStyle{Color: color}
			s.LineStyle = &opts.LineStyle{Color: color, Width: 3}
		}))
		alt = append(alt, fmt.Sprintf("%s: %d trials, median %s ms, p99 %s ms", vr, n,
			num(float64(merged.ValueAtQuantile(50))/1000), num(float64(merged.ValueAtQuantile(99))/1000)))
	}
	if drawn == 0 {
		return nil
	}
	at := ""
	if point != "" {
		at = " at " + pointLabel(point, l.SweepKeys)
	}
	more := ""
	if skipped > 0 {
		more = fmt.Sprintf(" (%d more invalid trials not drawn)", skipped)
	}
	caption := fmt.Sprintf("Share of requests in each latency bin (48 bins, log-spaced)%s: a thin line per fork (a JVM: its valid iterations' requests merged), dotted lines for invalid trials (at most %d a variant%s), a thick line for all valid trials merged. Forks that disagree show as lines apart.", at, maxInvalidLines, more)
	return &chart{ID: id, Title: "Latency distribution by variant" + at, Caption: caption, Height: 340, Script: scriptFor(id, line),
		Alt: "Latency distribution" + at + ". " + strings.Join(alt, "; ") + "."}
}

// burstCharts: for a burst, time from its release at 10 ms steps:
// completed requests (how long until all are answered) and requests in
// flight, every valid trial a thin line and the median trial thick. They
// come from the trials' histograms: a burst's latencies are measured from
// the release, so the histogram is the distribution of completion times.
func (v *runView) burstCharts() []*chart {
	l := v.layout
	if !v.burst() || len(l.Points) == 0 {
		return nil
	}
	point := l.Points[len(l.Points)-1]
	const stepMs = 10
	type curve struct {
		variant string
		median  bool
		ts      []float64
		done    []int64
		total   int64
	}
	var curves []curve
	var alt []string
	for _, vr := range l.Variants {
		med, ok := v.medianTrial(vr, point)
		if !ok {
			continue
		}
		// Each fork's median burst, and the cell's: a line per burst drew
		// 1,270 a variant on cpu-bound 20261204T034538Z (5 forks x 254
		// bursts), 3 MB of chart for each of the two.
		shown := append(v.forkMedians(vr, point), med)
		for i, t := range shown {
			h := v.trialHist(vr, point, l.Measured, t.Trial)
			median := i == len(shown)-1
			if h == nil || (!median && t.Trial == med.Trial) {
				continue
			}
			ts, done := completions(h, stepMs)
			curves = append(curves, curve{vr, median, ts, done, h.TotalCount()})
			if median {
				alt = append(alt, fmt.Sprintf("%s (trial %d): half answered by %s ms, all %d by %s ms", vr, t.Trial,
					num(float64(h.ValueAtQuantile(50))/1000), h.TotalCount(), num(float64(h.Max())/1000)))
			}
		}
	}
	if len(curves) == 0 {
		return nil
	}
	mk := func(id, title, yName string, y func(c curve, i int) int64, caption string) *chart {
		line := charts.NewLine()
		line.SetGlobalOptions(append(baseOpts(id, v.assetsHost, bigGrid),
			charts.WithTooltipOpts(opts.Tooltip{Trigger: "item", Formatter: fn(`function (p) {
  return echarts.format.encodeHTML(p.seriesName) + ': ' + p.value[1] + ' at ' + p.value[0] + ' ms';
}`)}),
			charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "ms since the burst was released", NameLocation: "middle", NameGap: 30}),
			charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: yName, NameLocation: "middle", NameGap: 50}),
		)...)
		for _, c := range curves {
			data := make([]opts.LineData, len(c.ts))
			for i := range c.ts {
				data[i] = opts.LineData{Value: []any{round(c.ts[i]), y(c, i)}}
			}
			name, width, opacity := c.variant+" trials", float32(1), float32(0.4)
			if c.median {
				name, width, opacity = c.variant, 3, 1
			}
			color := v.color(c.variant)
			line.AddSeries(name, data, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
				s.ShowSymbol = opts.Bool(false)
				s.Symbol = "none"
				s.Step = "end"
				s.ItemStyle = &opts.ItemStyle{Color: color}
				s.LineStyle = &opts.LineStyle{Color: color, Width: width, Opacity: opts.Float(opacity)}
			}))
		}
		return &chart{ID: id, Title: title, Caption: caption, Height: 320, Script: scriptFor(id, line),
			Alt: title + ". " + strings.Join(alt, "; ") + "."}
	}
	at := ""
	if point != "" {
		at = " at " + pointLabel(point, l.SweepKeys)
	}
	src := "Each fork's median valid burst (by " + metric.Label(l.Primary) + ") is a thin line, the cell's median trial a thick one; 10 ms steps, from each trial's HdrHistogram (a burst's latencies run from its release, so the histogram is the distribution of completion times)."
	return []*chart{
		mk("chart_burst_done", "Burst: requests answered since the release"+at, "requests answered",
			func(c curve, i int) int64 { return c.done[i] }, "Where a line reaches the top, the whole burst has been answered. "+src),
		mk("chart_burst_inflight", "Burst: requests in flight since the release"+at, "requests in flight",
			func(c curve, i int) int64 { return c.total - c.done[i] }, "Requests sent and not yet answered; a server with fewer threads than the burst drains it in waves of its thread count. "+src),
	}
}

// burst tells whether the measured group is a burst.
func (v *runView) burst() bool {
	l := v.layout
	if m, ok := l.Models[l.Measured]; ok {
		return m == "burst"
	}
	if len(l.Models) == 1 {
		for _, m := range l.Models {
			return m == "burst"
		}
	}
	return false
}
