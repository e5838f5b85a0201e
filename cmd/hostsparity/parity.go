// Command hostsparity judges whether a multi-host run measures its target
// as a single-machine run of the same manifest does (issue 25), for
// scripts/hosts-parity.sh, which makes the two runs and then calls it:
//
//	go run ./cmd/hostsparity [--tolerance 0.10] [--all] SINGLE-RUN HOSTS-RUN
//
// Data flow: both runs' trials.csv are read back (store/record); per
// variant and metric the trials of the measured group become forks, each
// fork the median of its iterations (a fork is the unit of replication, as
// in the verdicts and `threadlab diff`); the ratio multi-host/single-host
// of the medians of the fork medians gets the verdicts' 90% hierarchical
// bootstrap interval (stats.RatioInterval); and the interval, not the point
// ratio, is judged against the band [1−tolerance, 1+tolerance] (Verdict).
// A point ratio inside ±10% proves little on 3 forks (platform's 0.894 had
// the interval 0.73–1.26): equivalence needs the whole interval inside.
package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/judge/verdicts"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// Verdicts of a ratio's interval against the band.
const (
	OK         = "ok"          // the whole interval inside the band
	NotSettled = "not settled" // the interval straddles a bound: more forks may settle it
	Outside    = "outside"     // the whole interval beyond a bound
	Missing    = "missing"     // no interval: a side without trials or with a median of 0
)

// Verdict judges the interval [lo, hi] of a ratio against the band
// [bandLo, bandHi]: OK when it lies inside (bounds included), Outside when
// it lies wholly above or below (not touching the band), NotSettled when
// it straddles a bound, Missing when it is not a number.
func Verdict(lo, hi, bandLo, bandHi float64) string {
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return Missing
	case lo >= bandLo && hi <= bandHi:
		return OK
	case hi < bandLo || lo > bandHi:
		return Outside
	}
	return NotSettled
}

// Judged are the metrics a parity run is judged on: the target's
// CPU-seconds per trial, peak RSS and peak OS threads. Shown are printed
// beside them and not judged: CPU per request is CPU-seconds over the same
// requests, and target_cpu_pct is a mean of once-a-second samples that a
// sub-second burst moves from 40% to 163% of one core.
var (
	Judged = []string{"target_cpu_s", "target_peak_rss_mb", "target_peak_threads"}
	Shown  = []string{"target_cpu_ms_per_req", "target_cpu_pct"}
)

// Options choose what Compare reads and how it judges.
type Options struct {
	Tolerance float64 // the band is [1−Tolerance, 1+Tolerance]; default 0.10
	All       bool    // every trial, not only valid ones (a trial gated as noisy still measured its target)
	// Steady reads each run as its verdicts do (verdicts.Reading): each
	// fork's steady iterations, for the target's CPU those steady in the
	// CPU's own series too, forks that never settle left out. The runs
	// must carry their manifest.yaml. Not with All.
	Steady    bool
	Resamples int // default stats.Resamples
}

func (o Options) band() (lo, hi float64) {
	t := o.Tolerance
	if !(t > 0) {
		t = 0.10
	}
	return 1 - t, 1 + t
}

// Row is one variant and metric of the comparison.
type Row struct {
	Variant, Metric string
	Judged          bool
	// Single and Hosts are each run's median of fork medians, with the
	// number of forks (and trials) behind it.
	Single, Hosts             float64
	SingleForks, HostsForks   int
	SingleTrials, HostsTrials int
	Ratio, Low, High          float64 // Hosts/Single and its 90% interval
	Verdict                   string
}

// Compare judges every variant of the single-machine run on every metric
// of Judged, and shows those of Shown.
func Compare(single, hosts *record.Run, o Options) ([]Row, error) {
	for _, name := range slices.Concat(Judged, Shown) {
		if _, ok := metric.Lookup(name); !ok {
			return nil, fmt.Errorf("metric %s is not a column of trials.csv", name)
		}
	}
	lo, hi := o.band()
	var rd [2]*verdicts.Reading
	if o.Steady {
		if o.All {
			return nil, fmt.Errorf("--steady reads the valid trials the verdicts read; --all reads every trial: choose one")
		}
		for i, r := range []*record.Run{single, hosts} {
			m, err := experiments.Parse(filepath.Join(r.Dir, record.ManifestFile), r.Manifest, "")
			if len(r.Manifest) == 0 || err != nil {
				return nil, fmt.Errorf("--steady reads %s as its verdicts do and needs its manifest.yaml: %v", r.Dir, cmp.Or(err, errors.New("the run has none")))
			}
			rd[i] = verdicts.Read(m, r.Trials, r.Series)
		}
	}
	var rows []Row
	for _, v := range variants(single) {
		for _, name := range slices.Concat(Judged, Shown) {
			a, na := forks(single, rd[0], v, name, o.All)
			b, nb := forks(hosts, rd[1], v, name, o.All)
			r := Row{Variant: v, Metric: name, Judged: slices.Contains(Judged, name),
				SingleForks: len(a), HostsForks: len(b), SingleTrials: na, HostsTrials: nb,
				Single: medianOfForks(a), Hosts: medianOfForks(b)}
			r.Ratio, r.Low, r.High = math.NaN(), math.NaN(), math.NaN()
			if len(a) > 0 && len(b) > 0 && r.Single > 0 {
				r.Ratio = r.Hosts / r.Single
				r.Low, r.High = stats.RatioInterval(a, b, stats.Alpha, o.Resamples, 1, "hosts-parity|"+v+"|"+name)
			}
			r.Verdict = Verdict(r.Low, r.High, lo, hi)
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// variants are the run's variants in the order its trials first name them.
func variants(r *record.Run) []string {
	var out []string
	for _, t := range r.Trials {
		if !slices.Contains(out, t.Variant) {
			out = append(out, t.Variant)
		}
	}
	return out
}

// forks are the values of metric name in the trials of variant v's
// measured group, valid ones only unless all, grouped by fork in the
// order the run made them (verdicts.ByFork, as the claims and the diff
// group them); n counts the trials. With a reading (Options.Steady), the
// trials are those the run's verdicts read for the metric.
func forks(r *record.Run, rd *verdicts.Reading, v, name string, all bool) (fs [][]float64, n int) {
	var ts []record.Trial
	source := r.Trials
	if rd != nil {
		source = nil
		for k, cell := range rd.Cells(name) {
			if k.Variant == v {
				source = append(source, cell...)
			}
		}
	}
	for _, t := range source {
		if t.Variant == v && (r.Meta.Measured == "" || t.Group == r.Meta.Measured) && (all || t.Valid) {
			ts = append(ts, t)
		}
	}
	slices.SortStableFunc(ts, func(x, y record.Trial) int { return x.Seq - y.Seq })
	_, fs = verdicts.ByFork(ts, func(t record.Trial) (float64, bool) {
		x, ok := metric.Measured(t, name)
		if ok {
			n++
		}
		return x, ok
	})
	return fs, n
}

// medianOfForks is the median of the forks' medians; NaN without forks.
func medianOfForks(fs [][]float64) float64 {
	if len(fs) == 0 {
		return math.NaN()
	}
	var meds []float64
	for _, f := range fs {
		meds = append(meds, stats.Median(f))
	}
	return stats.Median(meds)
}

// Text writes the rows as an aligned table, the judged metrics of each
// variant first, and returns whether any judged row is Outside or Missing.
func Text(w io.Writer, rows []Row, o Options) (failed bool, err error) {
	lo, hi := o.band()
	which := "valid trials"
	if o.All {
		which = "every trial"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "== parity: multi-host / single-machine, median of fork medians over %s; 90%% bootstrap interval of the ratio, ok inside [%.2f, %.2f]\n", which, lo, hi)
	fmt.Fprintf(&b, "%-10s %-22s %11s %11s %9s %7s  %-13s  %s\n", "variant", "metric", "single", "hosts", "forks s/h", "ratio", "90% interval", "verdict")
	for _, r := range rows {
		verdict := r.Verdict
		if !r.Judged {
			verdict = "(" + verdict + ": shown, not judged)"
		} else if r.Verdict == Outside || r.Verdict == Missing {
			failed = true
		}
		fmt.Fprintf(&b, "%-10s %-22s %11s %11s %9s %7s  %-13s  %s\n", r.Variant, r.Metric, num(r.Single), num(r.Hosts),
			fmt.Sprintf("%d/%d", r.SingleForks, r.HostsForks), fixed(r.Ratio), interval(r.Low, r.High), verdict)
	}
	_, err = io.WriteString(w, b.String())
	return failed, err
}

func num(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.4g", x)
}

func fixed(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.3f", x)
}

func interval(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "-"
	}
	return fmt.Sprintf("%.3f–%.3f", lo, hi)
}
