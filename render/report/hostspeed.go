package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// The host speed section: did the machine itself change speed during the
// run, and did a claim's metric follow it? Every window is preceded by a
// host speed probe (trials.csv host_spin_ns: a fixed chain of integer
// steps, the fastest of 7 runs), which catches what steal does not: a
// virtual CPU that runs slower for minutes because of its neighbours or
// its clock. Interleaved forks spread such drift over every variant, so
// it does not favour one, but a metric that follows it varies between
// forks for the machine's sake, and the interval of a comparison widens:
// aot-cache 20261205T225134Z's fork means of the probe moved 28% and its
// three CPU-bound claims were inconclusive at ratios of 0.996-1.004. The
// section says how far the probe moved and, per claim, whether the
// claim's metric followed it (Kendall's rank correlation of the fork
// medians, each cell's forks taken relative to the cell's median so the
// variants' own difference does not count) by enough to matter (the move
// Theil–Sen's slope implies over the probe's range, spinFollow); the
// claim's card repeats it where it did. It reads trials.csv alone, so
// every run with the column has it, however old its verdicts.

// SpinDrift is how far apart the slowest and the fastest fork's probe may
// be (each the median of the fork's windows) before the section says the
// host's speed moved: windows of one fork on a quiet host differ by a few
// % (telemetry.SpinNs), so 10% is the machine, not the probe; it is also
// the ±10% band of the tie claims, the size a drift must reach to matter
// to them. Over the 13 published headline runs with the probe the fork
// means spread 3-8% in seven and 12-41% in six (METHODOLOGY.md).
const SpinDrift = 0.10

// spinTrackP is the p-value below which a claim's metric is said to have
// followed the probe. It is a diagnosis beside the verdict, not a verdict,
// read once per claim: 1% keeps a page of ten claims from naming one by
// chance more than about one time in ten.
const spinTrackP = 0.01

// spinFork is one fork of a cell: the medians of its valid windows' probe
// and of a metric.
type spinFork struct {
	cell        string // variant|point
	spin, value float64
}

// spinForks are the forks of the cells check c reads (its compare:
// variants, or its variant:, at its where: points, in its group: or the
// measured one), each with the median probe and the median of c's metric
// over its valid windows; forks without a probed window are left out, and
// a value is NaN where the metric has no measurement.
func (v *runView) spinForks(c *stats.Check) []spinFork {
	variants := slices.Clone(c.Compare)
	if c.Variant != "" {
		variants = append(variants, c.Variant)
	}
	group := cmp.Or(c.Group, v.run.Meta.Measured)
	type key struct {
		variant, point string
		fork           int
	}
	spins, values := map[key][]float64{}, map[key][]float64{}
	for _, t := range v.run.Trials {
		if !t.Valid || t.HostSpinNs <= 0 || (group != "" && t.Group != group) {
			continue
		}
		if len(variants) > 0 && !slices.Contains(variants, t.Variant) {
			continue
		}
		if len(c.Where) > 0 && !stats.MatchWhere(record.ParsePoint(t.Point), c.Where) {
			continue
		}
		k := key{t.Variant, t.Point, forkOf(t)}
		spins[k] = append(spins[k], t.HostSpinNs)
		if x, ok := metric.Measured(t, c.Metric); ok {
			values[k] = append(values[k], x)
		}
	}
	out := make([]spinFork, 0, len(spins))
	for _, k := range slices.SortedFunc(maps.Keys(spins), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.variant, b.variant), cmp.Compare(a.point, b.point), cmp.Compare(a.fork, b.fork))
	}) {
		f := spinFork{cell: k.variant + "|" + k.point, spin: median(spins[k]), value: math.NaN()}
		if xs := values[k]; len(xs) > 0 {
			f.value = median(xs)
		}
		out = append(out, f)
	}
	return out
}

// spinTrack is what the probe says of one claim's forks.
type spinTrack struct {
	Forks            int     // forks with a probe and a value
	Fastest, Slowest float64 // the fork medians of the probe, ns
	Moved            float64 // Slowest/Fastest - 1
	K                stats.Kendall
	// Elasticity is how the metric moves with the probe: Theil–Sen's
	// slope of the log of one on the log of the other (1: in proportion;
	// -1: a rate that falls in proportion); Follow is the move it implies
	// over the probe's range, (1+Moved)^|Elasticity| - 1.
	Elasticity, Follow float64
	// Tracks: the metric followed the probe, significantly (K.P <
	// spinTrackP) and by enough to matter (Follow >= spinFollow).
	Tracks bool
	Faster bool // the metric rises as the host gets faster (rps), not slower
}

// spinFollow is the least move over the probe's range for a metric to be
// said to follow it: 5%, the tolerance within which the steady-state
// classifier calls two levels one. An I/O burst's wall time follows the
// probe's rank closely (it is slower when the host is) but moves about 1%
// when the probe moves 38% (aot-cache 20261205T225134Z): its interval is
// not the machine's.
const spinFollow = 0.05

// trackOf correlates each fork's probe with its metric, both relative to
// the median of their cell's forks.
func trackOf(forks []spinFork) spinTrack {
	byCell := map[string][]spinFork{}
	for _, f := range forks {
		if !math.IsNaN(f.value) {
			byCell[f.cell] = append(byCell[f.cell], f)
		}
	}
	var tr spinTrack
	var x, y []float64
	for _, cell := range slices.Sorted(maps.Keys(byCell)) {
		fs := byCell[cell]
		spins, values := make([]float64, len(fs)), make([]float64, len(fs))
		for i, f := range fs {
			spins[i], values[i] = f.spin, f.value
		}
		ms, mv := median(spins), median(values)
		if ms <= 0 || mv == 0 {
			continue
		}
		for _, f := range fs {
			x, y = append(x, f.spin/ms), append(y, f.value/mv)
			if tr.Forks == 0 || f.spin < tr.Fastest {
				tr.Fastest = f.spin
			}
			tr.Slowest = max(tr.Slowest, f.spin)
			tr.Forks++
		}
	}
	if tr.Forks == 0 {
		tr.K = stats.Kendall{Tau: math.NaN(), P: math.NaN()}
		return tr
	}
	tr.Moved = tr.Slowest/tr.Fastest - 1
	tr.K = stats.KendallOf(x, y)
	tr.Elasticity = elasticity(x, y)
	tr.Follow = math.Pow(1+tr.Moved, math.Abs(tr.Elasticity)) - 1
	tr.Tracks = tr.K.P < spinTrackP && tr.Follow >= spinFollow // false for NaN
	tr.Faster = tr.K.Tau < 0
	return tr
}

// elasticity is Theil–Sen's slope of log y on log x: the median over
// pairs with different x of the ratio of their log differences; NaN with
// no such pair or a value that is not positive.
func elasticity(x, y []float64) float64 {
	var slopes []float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if x[i] <= 0 || x[j] <= 0 || y[i] <= 0 || y[j] <= 0 || x[i] == x[j] {
				continue
			}
			slopes = append(slopes, math.Log(y[j]/y[i])/math.Log(x[j]/x[i]))
		}
	}
	return median(slopes)
}

// spinClaimNote is the line a claim's card shows when its metric followed
// the probe; "" otherwise.
func (v *runView) spinClaimNote(c *stats.Check) string {
	if c == nil || c.Metric == "" {
		return ""
	}
	tr := trackOf(v.spinForks(c))
	if !tr.Tracks {
		return ""
	}
	name, _, _ := strings.Cut(metric.Label(c.Metric), " (") // "wall time", not "wall time (ms)"
	way := "slower host, larger " + name
	if tr.Faster {
		way = "faster host, larger " + name
	}
	p := "p = " + pval(tr.K.P)
	if strings.HasPrefix(pval(tr.K.P), "<") {
		p = "p " + pval(tr.K.P)
	}
	return fmt.Sprintf("The host's own speed moved during this claim's forks (the speed probe's fork medians %s–%s ns, %s apart) and %s followed it (%s: by about %s over that range; Kendall τ = %s over %d forks, %s). "+
		"Interleaved forks keep the drift from favouring a variant, but it makes the forks differ for the machine's sake, so the interval is wider than the variants alone would make it: an inconclusive verdict here may be the host's, and a quieter host may decide it.",
		num(tr.Fastest), num(tr.Slowest), wholePct(tr.Moved), name, way, wholePct(tr.Follow), fmt.Sprintf("%.2f", tr.K.Tau), tr.K.N, p)
}

// hostSpeedView is the template data of the "hostspeed" block.
type hostSpeedView struct {
	Forks            int
	Fastest, Slowest string // fork medians of the probe over the run
	Moved            string // how far apart, "28%"
	Drifted          bool   // Moved reaches SpinDrift
	Limit            string // SpinDrift as text
	TrackP           string // spinTrackP as text
	Follow           string // spinFollow as text
	Rows             []hostSpeedRow
}

// hostSpeedRow is one claim's forks against the probe.
type hostSpeedRow struct {
	Claim, Metric string
	Forks         int
	Moved         string
	Tau, P        string // "–" when not tested
	Follow        string // the metric's move over the probe's range (spinTrack.Follow), "–" when not tested
	Tracks        bool
	Why           string // why not tested
}

// HostSpeed returns the host speed section, or nil for a run without a
// probed window (before the column, or a target on another host).
func (v *runView) HostSpeed() *hostSpeedView {
	if v.run == nil {
		return nil
	}
	all := v.spinForks(&stats.Check{Metric: v.run.Meta.Primary})
	if len(all) == 0 {
		return nil
	}
	out := &hostSpeedView{Forks: len(all), Limit: wholePct(SpinDrift), TrackP: fmt.Sprintf("%g", spinTrackP), Follow: wholePct(spinFollow)}
	lo, hi := all[0].spin, all[0].spin
	for _, f := range all {
		lo, hi = min(lo, f.spin), max(hi, f.spin)
	}
	out.Fastest, out.Slowest, out.Moved = num(lo), num(hi), wholePct(hi/lo-1)
	out.Drifted = hi/lo-1 >= SpinDrift
	for _, x := range v.recorded {
		c := v.checks[x.ID]
		if c == nil || c.Metric == "" {
			continue
		}
		tr := trackOf(v.spinForks(c))
		row := hostSpeedRow{Claim: x.ID, Metric: metric.Label(c.Metric), Forks: tr.Forks, Tau: "–", P: "–", Follow: "–", Tracks: tr.Tracks}
		if tr.Forks > 0 {
			row.Moved = wholePct(tr.Moved)
		}
		switch {
		case tr.Forks < stats.KendallMinN:
			row.Why = fmt.Sprintf("fewer than %d forks with a probe and a value", stats.KendallMinN)
		case math.IsNaN(tr.K.Tau):
			row.Why = "the metric or the probe did not vary between forks"
		default:
			row.Tau, row.P = fmt.Sprintf("%.2f", tr.K.Tau), pval(tr.K.P)
			if !math.IsNaN(tr.Follow) {
				row.Follow = wholePct(tr.Follow)
			}
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// Followed lists the claims whose metric followed the probe.
func (h *hostSpeedView) Followed() []string {
	var out []string
	for _, r := range h.Rows {
		if r.Tracks {
			out = append(out, r.Claim)
		}
	}
	return out
}

// Sentence is the section in one sentence, for the Markdown summary.
func (h *hostSpeedView) Sentence() string {
	s := fmt.Sprintf("the probe's fork medians ran from %s to %s ns over %d forks, %s apart", h.Fastest, h.Slowest, h.Forks, h.Moved)
	if h.Drifted {
		s = "The host's speed moved during this run: " + s + fmt.Sprintf(" (a quiet host stays within %s)", h.Limit)
	} else {
		s = "T" + s[1:]
	}
	if f := h.Followed(); len(f) > 0 {
		s += "; the metric of " + strings.Join(f, ", ") + " followed it, which widens their intervals"
	}
	return s + "."
}

// wholePct is a share as a whole percentage, "28%": the probe's moves are
// read against a 10% line, and its own jitter is a few %.
func wholePct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }
