package report

import (
	"fmt"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/threadlab/threadlab/store/record"
)

// forkCharts draws, per cell of the measured group, each fork's classified
// points (its iterations, or the seconds of its windows) as one line, with
// the first steady point marked; a fork with no steady state has no mark
// and a dashed line. The values are steady.json's, exactly what was
// classified (issue 20).
func (v *runView) forkCharts(st record.Steady) []*chart {
	var out []*chart
	for i, c := range st.Cells {
		if c.Group != v.run.Meta.Measured && v.run.Meta.Measured != "" {
			continue
		}
		var forks []record.SteadyFork
		basis := ""
		for _, f := range c.Forks {
			if len(f.Values) > 0 {
				forks = append(forks, f)
				basis = f.Basis
			}
		}
		if len(forks) == 0 {
			continue
		}
		id := fmt.Sprintf("chart_steady_%d", i)
		title := c.Variant
		if c.Point != "" {
			title += " " + strings.ReplaceAll(c.Point, ";", ", ")
		}
		unit := "iteration"
		if basis == "seconds" {
			unit = "second"
		}
		line := charts.NewLine()
		line.SetGlobalOptions(append(baseOpts(id, v.assetsHost, opts.Grid{Left: "12", Right: "20", Top: "16", Bottom: "8"}),
			charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
			charts.WithTooltipOpts(opts.Tooltip{Trigger: "axis", ValueFormatter: fn(`function (x) { ` + jsFmt + ` return f(x); }`)}),
			charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: unit, NameLocation: "end", NameGap: 8, MinInterval: 1}),
			charts.WithYAxisOpts(opts.YAxis{Type: "value", Scale: opts.Bool(true)}),
		)...)
		color := v.color(c.Variant)
		var words []string
		for _, f := range forks {
			data := make([]opts.LineData, len(f.Values))
			for j, x := range f.Values {
				data[j] = opts.LineData{Value: []any{j + 1, round(x)}}
			}
			so := []charts.SeriesOpts{charts.WithSeriesOpts(func(s *charts.SingleSeries) {
				s.ShowSymbol = opts.Bool(len(f.Values) <= 40)
				s.SymbolSize = 3
				s.ItemStyle = &opts.ItemStyle{Color: color}
				dash := "solid"
				if f.Dropped {
					dash = "dashed"
				}
				s.LineStyle = &opts.LineStyle{Color: color, Width: 1, Type: dash, Opacity: opts.Float(0.7)}
			})}
			word := fmt.Sprintf("fork %d %s", f.Fork, orDash(f.Class))
			if sp := f.SteadyPoint; sp >= 0 && sp < len(f.Values) && !f.Dropped {
				so = append(so, charts.WithMarkPointNameCoordItemOpts(opts.MarkPointNameCoordItem{
					Name: "steady", Coordinate: []any{sp + 1, round(f.Values[sp])}, Symbol: "pin", SymbolSize: 18,
					Label: &opts.Label{Show: opts.Bool(false)}}))
				word += fmt.Sprintf(", steady from %s %d of %d", unit, sp+1, len(f.Values))
			} else {
				word += ", never steady: excluded"
			}
			line.AddSeries(fmt.Sprintf("fork %d", f.Fork), data, so...)
			words = append(words, word)
		}
		alt := fmt.Sprintf("%s of %s per %s, one line per fork: %s.", st.Metric, title, unit, strings.Join(words, "; "))
		if basis == "seconds" {
			alt = fmt.Sprintf("per-second %s of %s, one line per fork: %s.", secondQuantity(st.Metric), title, strings.Join(words, "; "))
		}
		out = append(out, &chart{ID: id, Title: title, Height: 180, Small: true, Script: scriptFor(id, line), Alt: alt})
	}
	return out
}

// secondQuantity is what a per-second series of metric name shows (the
// pipeline's steady selection picks it the same way).
func secondQuantity(name string) string {
	switch name {
	case "p99_ms", "p50_ms":
		return name
	}
	return "requests"
}
