package fleet

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/threadlab/threadlab/measure/load"
)

// Merge combines what several generators measured for the same plan (each
// ran its Split share of every group, in the same order) into one Result:
//
//   - latency: the HdrHistograms are added, so every percentile is that of
//     all requests together; percentiles are never averaged.
//   - counts, error classes, counted headers, open-model asked and achieved
//     rates, misses and in-flight caps: summed. LatePct is weighted by each
//     generator's sends.
//   - per-second series: summed by second after aligning each generator's
//     seconds on the earliest Start (rounded to whole seconds; Drive starts
//     them at one instant, so the shift is normally 0), with each second's
//     histograms added and its p50/p99 read from the sum.
//   - Wall: the longest generator's; RPS is the summed requests over it.
//   - bursts: each generator's release instant (Releases), the earliest as
//     Release and the spread between the first and the last share to leave
//     (ReleaseSpread), which the pipeline bounds.
//   - Self: CPU seconds, CPU percent, cores and sockets summed; Saturated if
//     any generator was, and Reason names which ("generator 2: ...").
//
// Start is the earliest Start, which is only meaningful when the parts'
// clocks agree (Drive converts them to its own clock first).
func Merge(parts []*load.Result) (*load.Result, error) {
	names := make([]string, len(parts))
	for i := range names {
		names[i] = fmt.Sprintf("generator %d", i+1)
	}
	return merge(parts, names)
}

func merge(parts []*load.Result, names []string) (*load.Result, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("nothing to merge: no generator results")
	}
	for i, p := range parts {
		if p == nil {
			return nil, fmt.Errorf("%s has no result", names[i])
		}
		if len(p.Groups) != len(parts[0].Groups) {
			return nil, fmt.Errorf("%s measured %d groups, %s %d: the parts are not shares of one plan", names[i], len(p.Groups), names[0], len(parts[0].Groups))
		}
	}
	out := &load.Result{Start: parts[0].Start}
	for _, p := range parts[1:] {
		if p.Start.Before(out.Start) {
			out.Start = p.Start
		}
	}
	shift := make([]int, len(parts))
	for i, p := range parts {
		shift[i] = int(p.Start.Sub(out.Start).Round(time.Second) / time.Second)
		out.Wall = max(out.Wall, p.Wall)
	}
	for gi := range parts[0].Groups {
		g, err := mergeGroup(parts, gi, shift, names)
		if err != nil {
			return nil, err
		}
		out.Groups = append(out.Groups, g)
	}
	for gi := range out.Groups {
		if out.Groups[gi].Model == load.Burst {
			releases(&out.Groups[gi], parts, gi, out.Start)
		}
	}
	out.Self = mergeSelf(parts, names)
	var stalled []string
	for i, p := range parts {
		if p.Stalled != "" {
			stalled = append(stalled, names[i]+": "+p.Stalled)
		}
	}
	out.Stalled = strings.Join(stalled, "; ")
	return out, nil
}

func mergeGroup(parts []*load.Result, gi int, shift []int, names []string) (load.GroupResult, error) {
	first := parts[0].Groups[gi]
	out := load.GroupResult{Name: first.Name, Model: first.Model, ErrorsByClass: map[string]int64{}, Headers: map[string]int64{}}
	seconds := map[int]*load.Second{}
	var sends, lateSends float64
	var stalled []string
	for i, p := range parts {
		g := p.Groups[gi]
		if g.Name != first.Name || g.Model != first.Model {
			return out, fmt.Errorf("group %d is %s (%s) at %s but %s (%s) at %s: the parts are not shares of one plan",
				gi+1, first.Name, first.Model, names[0], g.Name, g.Model, names[i])
		}
		out.Requests += g.Requests
		out.Errors += g.Errors
		out.OK += g.OK
		for k, v := range g.ErrorsByClass {
			out.ErrorsByClass[k] += v
		}
		for k, v := range g.Headers {
			out.Headers[k] += v
		}
		out.Wall = max(out.Wall, g.Wall)
		var err error
		if out.Latency, err = addHist(out.Latency, g.Latency); err != nil {
			return out, fmt.Errorf("group %s, %s: latency: %w", g.Name, names[i], err)
		}
		if g.Connect != nil {
			if out.Connect, err = addHist(out.Connect, g.Connect); err != nil {
				return out, fmt.Errorf("group %s, %s: connects: %w", g.Name, names[i], err)
			}
		}
		out.SlowConnects += g.SlowConnects
		for _, s := range g.Series {
			t := s.T + shift[i]
			m := seconds[t]
			if m == nil {
				m = &load.Second{T: t}
				seconds[t] = m
			}
			m.Requests += s.Requests
			m.Errors += s.Errors
			if m.Latency, err = addHist(m.Latency, s.Latency); err != nil {
				return out, fmt.Errorf("group %s, %s: second %d: %w", g.Name, names[i], s.T, err)
			}
		}
		out.AskedRate += g.AskedRate
		out.AchievedRate += g.AchievedRate
		out.Missed += g.Missed
		out.MaxInFlight += g.MaxInFlight
		sends += g.AchievedRate
		lateSends += g.AchievedRate * g.LatePct
		if g.Stalled != "" {
			stalled = append(stalled, names[i]+": "+g.Stalled)
		}
	}
	if sends > 0 {
		out.LatePct = lateSends / sends
	}
	if out.Wall > 0 {
		out.RPS = float64(out.Requests) / out.Wall.Seconds()
	}
	for _, t := range slices.Sorted(maps.Keys(seconds)) {
		s := seconds[t]
		if s.Latency != nil && s.Latency.TotalCount() > 0 {
			s.P50Ms = float64(s.Latency.ValueAtQuantile(50)) / 1000
			s.P99Ms = float64(s.Latency.ValueAtQuantile(99)) / 1000
		}
		out.Series = append(out.Series, *s)
	}
	out.Stalled = strings.Join(stalled, "; ")
	return out, nil
}

// releases sets a merged burst's release instants: each part's release
// (its Start plus its group's Release) as an offset from the merged start,
// the earliest as the group's Release, and with several parts their
// spread, the latest minus the earliest. Parts are on one clock (Drive
// converted them), so the spread is as good as the clock offsets, each
// within half its ping's round trip.
func releases(g *load.GroupResult, parts []*load.Result, gi int, start time.Time) {
	at := make([]time.Duration, len(parts))
	for i, p := range parts {
		at[i] = p.Start.Add(p.Groups[gi].Release).Sub(start)
	}
	g.Release = slices.Min(at)
	if len(parts) > 1 {
		g.Releases = at
		g.ReleaseSpread = slices.Max(at) - g.Release
		// The burst's wall runs from the first share's release to the last
		// answer of any share: a late share lengthens it, as it would one
		// generator's.
		var end time.Duration
		for i, p := range parts {
			end = max(end, at[i]+p.Groups[gi].Wall)
		}
		g.Wall = end - g.Release
		if g.Wall > 0 {
			g.RPS = float64(g.Requests) / g.Wall.Seconds()
		}
	}
}

// addHist returns sum + h without changing either (sum is a fresh copy the
// first time). Histograms of one group share one geometry; a different one
// is an error rather than a silent loss of values.
func addHist(sum, h *hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	if h == nil {
		return sum, nil
	}
	if sum == nil {
		return h.Clone(), nil
	}
	if sum.LowestTrackableValue() != h.LowestTrackableValue() || sum.HighestTrackableValue() != h.HighestTrackableValue() ||
		sum.SignificantFigures() != h.SignificantFigures() {
		return nil, fmt.Errorf("histograms of different geometry (%d..%d, %d digits vs %d..%d, %d digits): generators of different threadlab versions?",
			sum.LowestTrackableValue(), sum.HighestTrackableValue(), sum.SignificantFigures(),
			h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures())
	}
	if dropped := sum.Merge(h); dropped > 0 {
		return nil, fmt.Errorf("%d values lost adding histograms", dropped)
	}
	return sum, nil
}

// mergeSelf adds the generators' self-checks. Each generator was judged on
// its own (a saturated generator is not excused by an idle one), so the
// merged check is saturated when any part is, and says which.
func mergeSelf(parts []*load.Result, names []string) load.SelfCheck {
	var s load.SelfCheck
	var why []string
	for i, p := range parts {
		s.CPUSeconds += p.Self.CPUSeconds
		s.CPUPct += p.Self.CPUPct
		s.Cores += p.Self.Cores
		s.Sockets += p.Self.Sockets
		if p.Self.Saturated {
			s.Saturated = true
			why = append(why, names[i]+": "+p.Self.Reason)
		}
	}
	s.Reason = strings.Join(why, "; ")
	return s
}
