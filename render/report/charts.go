package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/store/record"
)

// palette is Okabe-Ito, readable by colour-blind readers and in grey
// print; a variant keeps its colour in every chart of a page.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442"}

func (v *runView) color(variant string) string {
	for i, x := range v.layout.Variants {
		if x == variant {
			return palette[i%len(palette)]
		}
	}
	return "#777777"
}

// chart is a rendered chart: a div with a fixed id and the script that
// draws into it.
type chart struct {
	ID      string
	Title   string
	Caption string
	Height  int
	Small   bool
	Script  template.HTML // a whole <script> element, sanitized by scriptFor
	Alt     string        // text alternative: what the chart shows, in words and numbers
}

// optioner is what every go-echarts chart type offers: Validate fills
// defaults (axis data, asset host) and JSONNotEscaped is the option object.
// RenderSnippet().Option is not used: it HTML-escapes the JSON before
// stripping go-echarts' function markers, so JavaScript functions
// (formatters, renderItem) would arrive as plain strings.
type optioner interface {
	Validate()
	JSONNotEscaped() template.HTML
}

// init options shared by every chart: a fixed ChartID keeps the output
// byte-identical between renders (golden tests, reviewable diffs), and the
// AssetsHost points at reports/assets so nothing is fetched from a CDN.
func initOpts(id, assetsHost string) charts.GlobalOpts {
	return charts.WithInitializationOpts(opts.Initialization{ChartID: id, AssetsHost: assetsHost, Width: "100%", Height: "100%"})
}

// scriptFor renders c's option and wraps it in our own script element.
//
// go-echarts marks JavaScript code as a string "__f__code__f__" and its own
// renderer strips every "__f__" from the whole JSON, user strings included:
// a sweep value "__f__alert(1)__f__" would become code. Here the option is
// decoded and re-encoded by encodeOption, which writes raw code only for
// strings that are exactly one of our own function literals (made with fn);
// every other string, whatever it contains, is written as an escaped JSON
// string. "<", ">" and "&" in strings are written as \u003c etc., so data
// cannot end the script element either.
//
// patches edit the option where go-echarts has no typed field for it.
func scriptFor(id string, c optioner, patches ...func(map[string]any)) template.HTML {
	c.Validate()
	option, err := encodeOption(string(c.JSONNotEscaped()), patches)
	if err != nil {
		// go-echarts produced the JSON, so this is a bug in us: draw nothing
		// rather than something half-escaped.
		option = "{}"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<script>\n(function () {\n  var el = document.getElementById(%q);\n", id)
	b.WriteString("  if (typeof echarts === 'undefined') { el.className += ' nojs'; return; }\n")
	b.WriteString("  var c = echarts.init(el, null, {renderer: 'canvas'});\n")
	b.WriteString("  c.setOption(" + option + ");\n")
	b.WriteString(fitLegend)
	b.WriteString("  window.addEventListener('resize', function () { c.resize(); fit(); });\n")
	b.WriteString("  window.addEventListener('beforeprint', function () { c.resize(); fit(); });\n")
	b.WriteString("})();\n</script>")
	return template.HTML(b.String())
}

// fitLegend moves the plot down by the lines a wrapped legend takes (an
// estimate from the names' lengths, at about 7 px a character and 35 px
// for the icon and gap) and grows the chart by as much, so a legend of
// nine variants on a 400 px screen pushes the plot down instead of
// covering it.
const fitLegend = `  var top0 = null, h0 = el.clientHeight;
  var fit = function () {
    var o = c.getOption();
    if (!o.legend || !o.legend.length || o.legend[0].show === false || !o.grid || !o.grid.length) { return; }
    if (top0 === null) { top0 = parseFloat(o.grid[0].top) || 40; }
    var names = (o.legend[0].data && o.legend[0].data.length ? o.legend[0].data : o.series.map(function (s) { return s.name; }));
    var seen = {}, w = el.clientWidth - 20, lines = 1, x = 0;
    names.forEach(function (d) {
      var n = typeof d === 'string' ? d : (d && d.name) || '';
      if (!n || seen[n]) { return; }
      seen[n] = 1;
      var iw = 35 + 7 * n.length;
      if (x > 0 && x + iw > w) { lines++; x = 0; }
      x += iw;
    });
    var extra = (lines - 1) * 22;
    el.style.height = (h0 + extra) + 'px';
    c.resize();
    // Not the one "c.setOption(option);" line per chart that the
    // injection test parses as data: this one only moves the grid.
    c['setOption']({grid: [{top: top0 + extra}]});
  };
  fit();
`

// twoLineLabels sets an explicit line height on the x axis labels: zrender
// measures it from a CJK glyph, and without a CJK font (minimal Linux
// installs, headless CI) the two lines of "platform\npool=50" overlap.
func twoLineLabels(m map[string]any) {
	if xs, ok := m["xAxis"].([]any); ok && len(xs) > 0 {
		if x, ok := xs[0].(map[string]any); ok {
			label, _ := x["axisLabel"].(map[string]any)
			if label == nil {
				label = map[string]any{}
			}
			label["lineHeight"] = 15
			x["axisLabel"] = label
		}
	}
}

// solidLegend lists the variants in the legend with an opaque icon: the
// primary chart's category bars are transparent (the median is a tick),
// and a legend icon takes its style from the first series of a name.
func (v *runView) solidLegend(m map[string]any) {
	legend, ok := m["legend"].(map[string]any)
	if !ok {
		return
	}
	series, _ := m["series"].([]any)
	var items []any
	seen := map[string]bool{}
	for _, x := range series {
		sm, _ := x.(map[string]any)
		name, _ := sm["name"].(string)
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		item := map[string]any{"name": name}
		if slices.Contains(v.layout.Variants, name) {
			item["itemStyle"] = map[string]any{"opacity": 1, "color": v.color(name)}
		}
		items = append(items, item)
	}
	legend["data"] = items
}

// jsFmt is the number formatter charts share (3 significant figures, no exponent).
const jsFmt = `function f(x) { if (x === null || x === undefined || isNaN(x)) { return '-'; } var a = Math.abs(x); return a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : a >= 1 ? x.toFixed(2) : x.toPrecision(3); }`

// baseOpts are shared by every chart; grid is the plot area's margins
// (WithGridOpts appends a grid, so each chart passes exactly one).
func baseOpts(id, assetsHost string, grid opts.Grid) []charts.GlobalOpts {
	grid.ContainLabel = opts.Bool(true)
	return []charts.GlobalOpts{
		initOpts(id, assetsHost),
		charts.WithAnimation(false), // printing and screenshots catch the final state
		// A plain legend wraps onto more lines where a scroll legend would
		// page ("1/3") and hide variants on a phone; fitLegend makes room.
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "0", Type: "plain"}),
		charts.WithGridOpts(grid),
	}
}

// bigGrid leaves room for the legend on top and axis names.
var bigGrid = opts.Grid{Left: "64", Right: "24", Top: "40", Bottom: "40"}

// primaryChart: the median of the primary metric per cell as a bar, its
// 95% CI (or min-max) as a whisker, and every trial as a dot so noise
// is visible next to the summary.
func (v *runView) primaryChart() *chart {
	l := v.layout
	type cell struct {
		variant, point string
	}
	var cells []cell
	var cats []string
	for _, p := range l.Points {
		for _, vr := range l.Variants {
			if len(v.trialsOf(vr, p, l.Measured)) == 0 {
				continue
			}
			cells = append(cells, cell{vr, p})
			label := vr
			if p != "" {
				label += "\n" + pointLabel(p, l.SweepKeys)
			}
			cats = append(cats, label)
		}
	}
	if len(cells) == 0 {
		return nil
	}
	id := "chart_primary"
	name := l.Primary
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(baseOpts(id, v.assetsHost, bigGrid),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item", Formatter: fn(`function (p) {
  ` + jsFmt + `
  var e = echarts.format.encodeHTML; var val = p.value;
  if (p.seriesType === 'custom') { return e(p.seriesName) + ': ' + f(val[1]) + ' to ' + f(val[2]); }
  if (p.seriesType === 'scatter') { return e(p.seriesName) + ', ' + e(p.name) + ': ' + f(val[1]); }
  return e(p.seriesName) + ' median: ' + f(Array.isArray(val) ? val[1] : val);
}`)}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", AxisLabel: &opts.AxisLabel{Interval: "0"}}),
		// Not from zero: the trials' spread is what a reader compares, and
		// a zero baseline squeezed the dots into a sliver at the top.
		charts.WithYAxisOpts(opts.YAxis{Name: metric.Label(name), NameLocation: "middle", NameGap: 56, Type: "value", Scale: opts.Bool(true)}),
	)...)
	bar.SetXAxis(cats)
	var alt []string

	interval := "95% CI"
	var whiskers []opts.CustomData
	// One kind of whisker per chart: when any cell lacks a CI (too few
	// trials), all show min-max, so whiskers are comparable.
	for _, c := range cells {
		s := v.summaryOf(c.variant, c.point, l.Measured, name)
		if s == nil || !hasCI(s) {
			interval = "min–max"
		}
	}
	var scatters []*charts.Scatter
	for _, vr := range l.Variants {
		data := make([]opts.BarData, len(cells))
		dots := []opts.ScatterData{}
		has := false
		for i, c := range cells {
			if c.variant != vr {
				data[i] = opts.BarData{Value: "-"}
				continue
			}
			has = true
			med, lo, hi := v.cellStats(c.variant, c.point, name, interval != "95% CI")
			data[i] = opts.BarData{Value: round(med)}
			alt = append(alt, fmt.Sprintf("%s: median %s (%s %s to %s)", strings.ReplaceAll(cats[i], "\n", " "), num(med), interval, num(lo), num(hi)))
			whiskers = append(whiskers, opts.CustomData{Value: []any{i, round(lo), round(hi)}})
			ts := v.trialsOf(c.variant, c.point, l.Measured)
			for k, t := range ts {
				if !t.Valid {
					continue
				}
				x, ok := metric.Measured(t, name)
				if !ok {
					continue // no measurement (a spoiled 0): no dot
				}
				dots = append(dots, opts.ScatterData{Name: fmt.Sprintf("trial %d", t.Trial), Value: []any{jitter(i, k, len(ts)), round(x)}})
			}
		}
		if !has {
			continue
		}
		color := v.color(vr)
		// The median is a wide tick, not a bar: a bar must start at zero,
		// and the axis does not.
		ticks := make([]opts.ScatterData, 0, len(data))
		for i, d := range data {
			if d.Value != "-" {
				ticks = append(ticks, opts.ScatterData{Name: "median", Value: []any{i, d.Value}})
			}
		}
		bar.AddSeries(vr, data, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.BarGap = "-100%" // one bar per category: each variant fills only its own cells
			s.BarMaxWidth = "56"
			s.ItemStyle = &opts.ItemStyle{Color: color, Opacity: opts.Float(0)}
		}))
		med := charts.NewScatter()
		med.AddSeries(vr, ticks, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.Symbol = "rect"
			s.SymbolSize = []int{44, 4}
			s.ItemStyle = &opts.ItemStyle{Color: color}
		}))
		scatters = append(scatters, med)
		sc := charts.NewScatter()
		sc.AddSeries(vr, dots, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.SymbolSize = 9
			s.ItemStyle = &opts.ItemStyle{Color: color, BorderColor: "#ffffff", BorderWidth: 1}
		}))
		scatters = append(scatters, sc)
	}
	var invalid []opts.ScatterData
	for i, c := range cells {
		ts := v.trialsOf(c.variant, c.point, l.Measured)
		for k, t := range ts {
			if t.Valid {
				continue
			}
			x, ok := metric.Measured(t, name)
			if !ok {
				continue
			}
			invalid = append(invalid, opts.ScatterData{Name: fmt.Sprintf("trial %d", t.Trial), Value: []any{jitter(i, k, len(ts)), round(x)}})
		}
	}
	if len(invalid) > 0 {
		sc := charts.NewScatter()
		sc.AddSeries("invalid trial", invalid, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.Symbol = "emptyCircle"
			s.SymbolSize = 9
			s.ItemStyle = &opts.ItemStyle{Color: "#999999"}
		}))
		scatters = append(scatters, sc)
	}
	cu := charts.NewCustom()
	cu.AddSeries(interval, whiskers, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
		s.RenderItem = fn(`function (params, api) {
  var x = api.value(0), lo = api.coord([x, api.value(1)]), hi = api.coord([x, api.value(2)]);
  var w = Math.min(api.size([1, 0])[0] * 0.08, 14);
  var st = {stroke: '#222222', lineWidth: 1.5};
  return {type: 'group', children: [
    {type: 'line', shape: {x1: lo[0], y1: lo[1], x2: hi[0], y2: hi[1]}, style: st},
    {type: 'line', shape: {x1: lo[0] - w, y1: lo[1], x2: lo[0] + w, y2: lo[1]}, style: st},
    {type: 'line', shape: {x1: hi[0] - w, y1: hi[1], x2: hi[0] + w, y2: hi[1]}, style: st}]};
}`)
		s.Encode = &opts.Encode{X: 0, Y: []int{1, 2}}
		s.ItemStyle = &opts.ItemStyle{Color: "#222222"}
	}))
	// Whiskers before dots, so every trial stays visible on top.
	bar.Overlap(cu)
	for _, sc := range scatters {
		bar.Overlap(sc)
	}

	better := "higher is better"
	if !metric.HigherIsBetter(name) {
		better = "lower is better"
	}
	group := ""
	if len(l.Groups) > 1 {
		group = fmt.Sprintf(" of the %q group", l.Measured)
	}
	whisker := "the 95% confidence interval of the median"
	if interval != "95% CI" {
		whisker = "min–max of the valid trials (too few trials for a 95% CI of the median in some cell)"
	}
	caption := fmt.Sprintf("Wide ticks: median %s%s across valid trials (%s). Whiskers: %s. Dots: each trial; hollow grey dots are invalid trials, excluded from the statistics. The axis does not start at zero.",
		metric.Label(name), group, better, whisker)
	return &chart{ID: id, Title: "Primary metric: " + metric.Label(name), Caption: caption, Height: 380, Script: scriptFor(id, bar, twoLineLabels, v.solidLegend),
		Alt: "Primary metric, " + metric.Label(name) + ". " + strings.Join(alt, "; ") + "."}
}

// cellStats returns the median and its interval for a cell, preferring
// summary.csv (the statistics stage's numbers) and falling back to the
// valid trials when the summary lacks the cell (an interrupted run).
func (v *runView) cellStats(variant, point, name string, minMax bool) (med, lo, hi float64) {
	if s := v.summaryOf(variant, point, v.layout.Measured, name); s != nil {
		if !minMax {
			return s.Median, s.Low, s.High
		}
		return s.Median, s.Min, s.Max
	}
	var xs []float64
	for _, t := range v.trialsOf(variant, point, v.layout.Measured) {
		if x, ok := metric.Value(t, name); ok && t.Valid {
			xs = append(xs, x)
		}
	}
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	m := median(xs) // sorts xs
	return m, xs[0], xs[len(xs)-1]
}

// sweepChart: x is the sweep value, one line of medians per variant, and a
// min-max band around it.
func (v *runView) sweepChart() *chart {
	l := v.layout
	if len(l.SweepKeys) == 0 || len(l.Points) < 2 {
		return nil
	}
	id := "chart_sweep"
	name := l.Primary
	cats := make([]string, len(l.Points))
	xName := strings.Join(l.SweepKeys, ", ")
	for i, p := range l.Points {
		if len(l.SweepKeys) == 1 {
			cats[i] = record.ParsePoint(p)[l.SweepKeys[0]]
		} else {
			cats[i] = pointLabel(p, l.SweepKeys)
		}
	}
	line := charts.NewLine()
	line.SetGlobalOptions(append(baseOpts(id, v.assetsHost, bigGrid),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item", Formatter: fn(`function (p) {
  ` + jsFmt + `
  return echarts.format.encodeHTML(p.seriesName + ' @ ' + p.name) + ': ' + f(p.value);
}`)}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Name: xName, NameLocation: "middle", NameGap: 30, AxisLabel: &opts.AxisLabel{Interval: "0"}}),
		charts.WithYAxisOpts(opts.YAxis{Name: metric.Label(name), NameLocation: "middle", NameGap: 56, Type: "value"}),
	)...)
	line.SetXAxis(cats)
	for _, vr := range l.Variants {
		meds := make([]opts.LineData, len(l.Points))
		lows := make([]opts.LineData, len(l.Points))
		spans := make([]opts.LineData, len(l.Points))
		has := false
		for i, p := range l.Points {
			if len(v.trialsOf(vr, p, l.Measured)) == 0 {
				meds[i], lows[i], spans[i] = opts.LineData{Value: "-"}, opts.LineData{Value: "-"}, opts.LineData{Value: "-"}
				continue
			}
			has = true
			med, lo, hi := v.cellStats(vr, p, name, true)
			meds[i] = opts.LineData{Value: round(med)}
			lows[i] = opts.LineData{Value: round(lo)}
			spans[i] = opts.LineData{Value: round(hi - lo)}
		}
		if !has {
			continue
		}
		color := v.color(vr)
		stack := "band " + vr
		// The band is two stacked series sharing the variant's name, so the
		// legend toggles line and band together: an invisible floor at the
		// minimum and a filled span of max-min on top of it.
		line.AddSeries(vr, lows, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.Stack = stack
			s.ShowSymbol = opts.Bool(false)
			s.Symbol = "none"
			s.LineStyle = &opts.LineStyle{Opacity: opts.Float(0)}
			s.ItemStyle = &opts.ItemStyle{Color: color}
		}))
		line.AddSeries(vr, spans, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.Stack = stack
			s.ShowSymbol = opts.Bool(false)
			s.Symbol = "none"
			s.LineStyle = &opts.LineStyle{Opacity: opts.Float(0)}
			s.AreaStyle = &opts.AreaStyle{Color: color, Opacity: opts.Float(0.15)}
			s.ItemStyle = &opts.ItemStyle{Color: color}
		}))
		line.AddSeries(vr, meds, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.SymbolSize = 7
			s.ItemStyle = &opts.ItemStyle{Color: color}
			s.LineStyle = &opts.LineStyle{Color: color, Width: 2}
		}))
	}
	caption := fmt.Sprintf("Median %s at each sweep point (line) with the min–max range of the valid trials (band).", metric.Label(name))
	var alt []string
	for _, vr := range l.Variants {
		var parts []string
		for i, p := range l.Points {
			if len(v.trialsOf(vr, p, l.Measured)) > 0 {
				med, _, _ := v.cellStats(vr, p, name, true)
				parts = append(parts, cats[i]+" "+num(med))
			}
		}
		if len(parts) > 0 {
			alt = append(alt, vr+": "+strings.Join(parts, ", "))
		}
	}
	return &chart{ID: id, Title: "Sweep: " + metric.Label(name) + " by " + xName, Caption: caption, Height: 380, Script: scriptFor(id, line),
		Alt: "Median " + metric.Label(name) + " by " + xName + ". " + strings.Join(alt, "; ") + "."}
}

// latencyChart: the percentile spectrum on a log x axis of 1/(1-q), as
// HdrHistogram plots it, so p99, p99.9 and p99.99 are evenly spaced and
// the tail is not squeezed into the right edge.
func (v *runView) latencyChart() *chart {
	l := v.layout
	type key struct{ variant, point string }
	byCell := map[key]map[float64][]float64{}
	for _, q := range v.run.Latency {
		if q.Group != l.Measured || q.Percentile >= 100 || q.Ms <= 0 || !v.validTrial(q.Variant, q.Point, q.Group, q.Trial) {
			continue
		}
		k := key{q.Variant, q.Point}
		if byCell[k] == nil {
			byCell[k] = map[float64][]float64{}
		}
		byCell[k][q.Percentile] = append(byCell[k][q.Percentile], q.Ms)
	}
	if len(byCell) == 0 {
		return nil
	}
	id := "chart_latency"
	line := charts.NewLine()
	line.SetGlobalOptions(append(baseOpts(id, v.assetsHost, bigGrid),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item", Formatter: fn(`function (p) {
  ` + jsFmt + `
  var q = 100 - 100 / p.value[0];
  return echarts.format.encodeHTML(p.seriesName) + ' p' + (Math.round(q * 1000) / 1000) + ': ' + f(p.value[1]) + ' ms';
}`)}),
		charts.WithXAxisOpts(opts.XAxis{Type: "log", Name: "percentile", NameLocation: "middle", NameGap: 30, Min: 1,
			AxisLabel: &opts.AxisLabel{Formatter: fn(`function (x) { return 'p' + (Math.round((100 - 100 / x) * 1000) / 1000); }`)}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "log", Name: "latency (ms)", NameLocation: "middle", NameGap: 56}),
	)...)
	for _, p := range l.Points {
		for _, vr := range l.Variants {
			m := byCell[key{vr, p}]
			if m == nil {
				continue
			}
			qs := make([]float64, 0, len(m))
			for q := range m {
				qs = append(qs, q)
			}
			sort.Float64s(qs)
			data := make([]opts.LineData, 0, len(qs))
			for _, q := range qs {
				data = append(data, opts.LineData{Value: []any{round(1 / (1 - q/100)), round(median(m[q]))}})
			}
			name := vr
			if p != "" {
				name += " " + pointLabel(p, l.SweepKeys)
			}
			color := v.color(vr)
			dash := v.dashFor(p)
			line.AddSeries(name, data, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
				s.SymbolSize = 6
				s.ItemStyle = &opts.ItemStyle{Color: color}
				s.LineStyle = &opts.LineStyle{Color: color, Width: 2, Type: dash}
			}))
		}
	}
	caption := "Latency at each percentile, median across valid trials per variant (this run has no HdrHistogram logs, so percentiles cannot be merged); both axes are logarithmic. A closed or burst load under-reports the tail (coordinated omission): compare shapes, and trust absolute tails only from an open model."
	return &chart{ID: id, Title: "Latency percentile spectrum", Caption: caption, Height: 380, Script: scriptFor(id, line),
		Alt: "Latency percentile spectrum: median across trials of each percentile in latency.csv, per variant; the numbers are in the raw data."}
}

// dashFor tells sweep points apart in a chart that already uses colour for
// variants.
func (v *runView) dashFor(point string) string {
	styles := []string{"solid", "dashed", "dotted"}
	for i, p := range v.layout.Points {
		if p == point {
			return styles[i%len(styles)]
		}
	}
	return "solid"
}

// jitter spreads the k-th of n trial dots across the middle of category
// i, so equal results do not hide behind each other; deterministic, unlike
// random jitter, so pages stay byte-identical.
func jitter(i, k, n int) any {
	if n < 2 {
		return i
	}
	return round(float64(i) + (float64(k)/float64(n-1)-0.5)*0.3)
}

// round keeps 4 significant decimals in chart data: the charts cannot show
// more, and shorter JSON keeps pages small.
func round(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return int64(x)
	}
	mag := math.Pow(10, 4-math.Ceil(math.Log10(math.Abs(x))))
	if mag < 1 {
		return math.Round(x)
	}
	return math.Round(x*mag) / mag
}
