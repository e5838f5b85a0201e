package report

import (
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/threadlab/threadlab/store/record"
)

// TestBurstChartsPerFork: a cell of 3 forks x 40 bursts draws one thin
// line a fork (its median burst) and a thick one for the cell's median
// burst in each burst chart, and the distribution chart one thin line a
// fork (its bursts merged), the invalid trials dotted (at most
// maxInvalidLines, the rest counted in the caption) and a thick line for
// the cell: not a line per burst (cpu-bound 20261204T034538Z drew 1,270 a
// variant, 13 MB of charts on one page).
func TestBurstChartsPerFork(t *testing.T) {
	const forks, bursts, invalid = 3, 40, 25
	v := &runView{run: &record.Run{Meta: record.Meta{Measured: "main"}}, assetsHost: "assets/", hists: map[trialKey]*record.HistogramLog{}}
	v.layout = layout{Variants: []string{"virtual"}, Points: []string{""}, Measured: "main", Primary: "wall_ms", Models: map[string]string{"main": "burst"}}
	trial := 0
	add := func(fork int, wallMs float64, valid bool) {
		trial++
		h := hdrhistogram.New(1, 60_000_000, 3)
		for i := range 100 {
			h.RecordValue(int64(1000 * (wallMs * float64(i+1) / 100)))
		}
		v.run.Trials = append(v.run.Trials, record.Trial{Variant: "virtual", Group: "main", Trial: trial, Fork: fork, Valid: valid, WallMs: wallMs})
		v.hists[trialKey{"virtual", "", trial}] = &record.HistogramLog{Intervals: []record.Interval{{Tag: record.Tag("main") + record.TotalSuffix, Hist: h}}}
	}
	for f := 1; f <= forks; f++ {
		for b := range bursts {
			add(f, float64(300+10*f+b%7), true)
		}
	}
	for range invalid {
		add(1, 900, false)
	}
	bc := v.burstCharts()
	if len(bc) != 2 {
		t.Fatalf("%d burst charts, want 2", len(bc))
	}
	for _, c := range bc {
		s := string(c.Script)
		if thin, thick := strings.Count(s, `"name":"virtual trials"`), strings.Count(s, `"name":"virtual"`); thin+thick < forks || thin+thick > forks+1 || thick != 1 {
			t.Errorf("%s: %d thin and %d thick lines, want a fork's median burst each (the median fork's may be the cell's) and the cell's", c.ID, thin, thick)
		}
	}
	d := v.distributionChart()
	if d == nil {
		t.Fatal("no distribution chart")
	}
	s := string(d.Script)
	if n := strings.Count(s, `"name":"virtual forks"`); n != forks {
		t.Errorf("%d fork lines, want %d", n, forks)
	}
	if n := strings.Count(s, `"name":"virtual invalid trials"`); n != maxInvalidLines {
		t.Errorf("%d invalid lines, want %d (the cap)", n, maxInvalidLines)
	}
	if !strings.Contains(d.Caption, "(5 more invalid trials not drawn)") {
		t.Errorf("caption does not count the invalid trials not drawn: %s", d.Caption)
	}
}
