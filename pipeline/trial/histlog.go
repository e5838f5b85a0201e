package trial

import (
	"fmt"

	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/store/record"
)

// SaveHistograms writes a trial's latency histograms to
// histograms/<seq>-<variant>-<point>-t<trial>.hlog in HdrHistogram's
// interval log format: per group, one interval per second (the generator's
// per-second histograms) and one for the whole trial, so a reader can
// compute any percentile, merge trials, or plot the trial over time with
// HdrHistogram's own tools.
func SaveHistograms(dir string, j replicate.Job, seq, trial int, res *load.Result) (string, error) {
	var ivs []record.Interval
	for _, g := range res.Groups {
		for _, s := range g.Series {
			if s.Latency != nil {
				ivs = append(ivs, record.Interval{Tag: g.Name, Start: float64(s.T), Length: 1, Hist: s.Latency})
			}
		}
		if g.Latency != nil {
			ivs = append(ivs, record.Interval{Tag: g.Name + record.TotalSuffix, Start: 0, Length: g.Wall.Seconds(), Hist: g.Latency})
		}
	}
	name := record.HistogramLogName(seq, j.Cell.Variant.Name, j.Cell.PointString(), trial)
	about := fmt.Sprintf("trial %d of %s at %q (run seq %d): latency from the intended send time, per request group (Tag) and second; Tag=<group>%s is the whole trial",
		trial, j.Cell.Variant.Name, j.Cell.PointString(), seq, record.TotalSuffix)
	return name, record.WriteHistogramLog(dir, name, res.Start, about, ivs)
}
