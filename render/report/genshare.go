package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/threadlab/threadlab/store/digits"
)

// generatorShare says how much CPU an unpinned load generator took beside
// the target, per cell, and how far that differed between variants at one
// point: on a small host the generator competes with the target, and a
// variant that keeps it busier (a shorter burst, more requests a second)
// leaves its own target less of the host, a confound of the comparison
// rather than noise (review statistics.md 3; seed 001 pinned each tier
// with taskset for this reason). "" when the generator was pinned, ran on
// other hosts, or the run has no generator CPU in its summary.
func (v *runView) generatorShare(pinned bool) string {
	if pinned || v.run.Meta.Hosts != nil {
		return ""
	}
	type cell struct {
		variant string
		pct     float64
	}
	byPoint := map[string][]cell{}
	var points []string
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range v.run.Summary {
		if s.Metric != "gen_cpu_pct" || s.Group != v.layout.Measured || math.IsNaN(s.Median) || s.N == 0 {
			continue
		}
		if _, ok := byPoint[s.Point]; !ok {
			points = append(points, s.Point)
		}
		byPoint[s.Point] = append(byPoint[s.Point], cell{s.Variant, s.Median})
		lo, hi = min(lo, s.Median), max(hi, s.Median)
	}
	if len(points) == 0 {
		return ""
	}
	var gapPoint string
	var least, most cell
	gap := -1.0
	for _, p := range points {
		cs := byPoint[p]
		if len(cs) < 2 {
			continue
		}
		l, m := cs[0], cs[0]
		for _, c := range cs[1:] {
			if c.pct < l.pct {
				l = c
			}
			if c.pct > m.pct {
				m = c
			}
		}
		if d := m.pct - l.pct; d > gap {
			gap, gapPoint, least, most = d, p, l, m
		}
	}
	s := fmt.Sprintf("The unpinned load generator used %s%% of one core per cell (median over forks of generator CPU over the measured window)", cpuShare(lo))
	if hi > lo {
		s = fmt.Sprintf("The unpinned load generator used %s–%s%% of one core per cell (median over forks of generator CPU over the measured window)", cpuShare(lo), cpuShare(hi))
	}
	if gap <= 0 {
		return s + "."
	}
	at := ""
	if gapPoint != "" {
		at = " at " + pointLabel(gapPoint, v.layout.SweepKeys)
	}
	s += fmt.Sprintf("; it was busiest beside %s (%s%%) and least busy beside %s (%s%%)%s", most.variant, cpuShare(most.pct), least.variant, cpuShare(least.pct), at)
	if cpus := v.hostCPUs(); cpus > 0 {
		s += fmt.Sprintf(", a gap of %s%% of the host's %d CPUs that %s's target did not have", cpuShare(gap/float64(cpus)), cpus, most.variant)
	}
	return s + "."
}

// hostCPUs is the fingerprint's count of CPUs, 0 when it has none.
func (v *runView) hostCPUs() int {
	if len(v.run.Fingerprint) == 0 {
		return 0
	}
	n, err := parseJSON(v.run.Fingerprint)
	if err != nil {
		return 0
	}
	for _, f := range flatten(n, "", nil) {
		if f.Key == "cpu.threads" || strings.HasSuffix(f.Key, ".cpu.threads") {
			if n, err := strconv.Atoi(strings.TrimSpace(f.Value)); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// cpuShare writes a percentage of a core or of the host to a tenth: 3.2, 13.2, 5.
func cpuShare(x float64) string { return digits.Format(x, digits.Tenths) }
