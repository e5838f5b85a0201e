package report

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/threadlab/threadlab/store/record"
)

// trialKey names one trial of one cell (all its groups share a log).
type trialKey struct {
	variant, point string
	trial          int
}

// minAbove is how many requests must lie above a percentile for it to be
// drawn solid: with fewer, the value is one of the few slowest requests
// (p99.99 of 600 requests is just the maximum), so it is drawn hollow and
// the caption says so.
const minAbove = 10

// readHists reads the HdrHistogram log of every trial that has one. A
// missing log (a run recorded before logs existed) is no error; an
// unreadable one is reported on the page and the trial is drawn from
// latency.csv alone.
func readHists(r *record.Run) (map[trialKey]*record.HistogramLog, []string) {
	out := map[trialKey]*record.HistogramLog{}
	var problems []string
	if r.Dir == "" {
		return out, nil
	}
	for _, t := range r.Trials {
		k := trialKey{t.Variant, t.Point, t.Trial}
		if _, done := out[k]; done {
			continue
		}
		name := record.HistogramLogName(t.Seq, t.Variant, t.Point, t.Trial)
		l, err := record.ReadHistogramLogTags(filepath.Join(r.Dir, name), func(tag string) bool { return strings.HasSuffix(tag, record.TotalSuffix) })
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out[k] = l
	}
	return out, problems
}

// trialHist is the whole-trial histogram of one group of one trial.
func (v *runView) trialHist(variant, point, group string, trial int) *hdrhistogram.Histogram {
	l := v.hists[trialKey{variant, point, trial}]
	if l == nil {
		return nil
	}
	return l.Total(group)
}

// mergedHist adds up the histograms of a cell's valid trials, so its
// quantiles are quantiles of every request rather than medians of
// per-trial percentiles. n is the number of trials merged.
func (v *runView) mergedHist(variant, point, group string) (h *hdrhistogram.Histogram, n int) {
	for _, t := range v.trialsOf(variant, point, group) {
		if !t.Valid {
			continue
		}
		th := v.trialHist(variant, point, group, t.Trial)
		if th == nil {
			continue
		}
		if h == nil {
			h = hdrhistogram.New(th.LowestTrackableValue(), th.HighestTrackableValue(), int(th.SignificantFigures()))
		}
		h.Merge(th)
		n++
	}
	return h, n
}

// maxInvalidLines bounds the invalid trials a distribution chart draws one
// by one for a variant; the caption counts the rest.
const maxInvalidLines = 20

// forkOf is a trial's fork; runs recorded before the fork column have one
// trial a fork, numbered as the fork.
func forkOf(t record.Trial) int {
	if t.Fork > 0 {
		return t.Fork
	}
	return t.Trial
}

// forkHist is one fork's valid trials of a cell merged.
type forkHist struct {
	fork int
	h    *hdrhistogram.Histogram
}

// forkHists merges a cell's valid trials fork by fork, in fork order, and
// returns the invalid trials' histograms apart: a fork (a JVM) is the
// unit a reader compares, and a line per iteration drew thousands.
func (v *runView) forkHists(variant, point, group string) (forks []forkHist, invalid []*hdrhistogram.Histogram) {
	at := map[int]int{}
	for _, t := range v.trialsOf(variant, point, group) {
		th := v.trialHist(variant, point, group, t.Trial)
		if th == nil || th.TotalCount() == 0 {
			continue
		}
		if !t.Valid {
			invalid = append(invalid, th)
			continue
		}
		f := forkOf(t)
		i, ok := at[f]
		if !ok {
			i = len(forks)
			at[f] = i
			forks = append(forks, forkHist{f, hdrhistogram.New(th.LowestTrackableValue(), th.HighestTrackableValue(), int(th.SignificantFigures()))})
		}
		forks[i].h.Merge(th)
	}
	sort.SliceStable(forks, func(i, j int) bool { return forks[i].fork < forks[j].fork })
	return forks, invalid
}

// spectrumPoint is one percentile of a merged histogram: x is 1/(1-q),
// the axis HdrHistogram plots on, ms the latency, solid whether enough
// requests lie above it.
type spectrumPoint struct {
	X, Ms float64
	Solid bool
}

// spectrum walks percentiles at five per decade of 1/(1-q) (p0, p36.9,
// p60.2 ... p90, p99, p99.9 ...) up to the last one the count reaches,
// then the maximum.
func spectrum(h *hdrhistogram.Histogram) []spectrumPoint {
	n := float64(h.TotalCount())
	if n == 0 {
		return nil
	}
	var out []spectrumPoint
	for k := 0; ; k++ {
		x := math.Pow(10, float64(k)/5)
		if x > n {
			break
		}
		q := 100 * (1 - 1/x)
		out = append(out, spectrumPoint{X: x, Ms: float64(h.ValueAtQuantile(q)) / 1000, Solid: n/x >= minAbove})
	}
	out = append(out, spectrumPoint{X: n, Ms: float64(h.Max()) / 1000, Solid: false})
	return out
}

// completions returns, at step resolution from 0 to the last answer, how
// many requests had completed by then: for a burst, whose latencies are
// measured from the release of the burst, this is completed requests
// against time since the release. The histogram's resolution (3
// significant digits: 1 ms at 1 s) is finer than the 10 ms step.
func completions(h *hdrhistogram.Histogram, stepMs float64) (ts []float64, done []int64) {
	if h == nil || h.TotalCount() == 0 {
		return nil, nil
	}
	// Clamped to the range threadlab records (60 s): the chart's size must
	// not follow whatever maximum a histogram claims.
	maxMs := math.Min(float64(h.Max()), record.HistHighest) / 1000
	steps := int(math.Ceil(maxMs/stepMs)) + 1
	counts := make([]int64, steps+1)
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		// A bucket's requests completed at most at its upper edge.
		i := int(math.Ceil(float64(b.To) / 1000 / stepMs))
		if i > steps {
			i = steps
		}
		counts[i] += b.Count
	}
	var sum int64
	for i := 0; i <= steps; i++ {
		sum += counts[i]
		ts = append(ts, float64(i)*stepMs)
		done = append(done, sum)
	}
	return ts, done
}

// histNote describes the histograms the page used, for captions.
func histNote(cells, trials int) string {
	return fmt.Sprintf("from the HdrHistogram logs of %d valid trials in %d cells (histograms/ in the raw data)", trials, cells)
}

type hdrBar = hdrhistogram.Bar

// bars are the histogram's non-empty buckets.
func bars(h *hdrhistogram.Histogram) []hdrBar {
	var out []hdrBar
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			out = append(out, b)
		}
	}
	return out
}

// mergedQuantiles are the columns of the merged-percentiles table.
var mergedQuantiles = []float64{50, 90, 99, 99.9, 99.99}

// mergedRow is one cell of the merged-percentiles table.
type mergedRow struct {
	Variant, Point string
	Trials         int
	Requests       int64
	Cells          []mergedCell
	Max            string
}

type mergedCell struct {
	Value  string
	Hollow bool // fewer than minAbove requests above this percentile
}

// mergedTable lists each cell's percentiles from its merged histogram:
// the summaries' quantiles of all requests, not medians of per-trial
// percentiles, and the data behind the spectrum chart.
func (v *runView) mergedTable() ([]mergedRow, []string) {
	l := v.layout
	var rows []mergedRow
	for _, p := range l.Points {
		for _, vr := range l.Variants {
			h, n := v.mergedHist(vr, p, l.Measured)
			if h == nil || h.TotalCount() == 0 {
				continue
			}
			row := mergedRow{Variant: vr, Point: p, Trials: n, Requests: h.TotalCount(), Max: num(float64(h.Max()) / 1000)}
			for _, q := range mergedQuantiles {
				above := float64(h.TotalCount()) * (1 - q/100)
				row.Cells = append(row.Cells, mergedCell{Value: num(float64(h.ValueAtQuantile(q)) / 1000), Hollow: above < minAbove})
			}
			rows = append(rows, row)
		}
	}
	cols := make([]string, len(mergedQuantiles))
	for i, q := range mergedQuantiles {
		cols[i] = "p" + strconv.FormatFloat(q, 'f', -1, 64)
	}
	return rows, cols
}
