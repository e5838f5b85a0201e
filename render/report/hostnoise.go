package report

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The hosts section (issue 25): on a multi-host run, each host's CPU used
// outside threadlab and its steal during the measured windows, as the
// samplers on the hosts measured them (trials.csv hosts_noise), and how
// far apart split bursts left their generators (release_spread_ms). Runs
// on one machine, and multi-host runs made before these columns, have
// neither: the section is left out.

// hostNoiseView is the template data of the "hostnoise" block.
type hostNoiseView struct {
	Rows []hostNoiseRow
	// Spread: the release spread of split bursts over the measured
	// group's trials; empty when no trial split a burst.
	Spread string
}

// hostNoiseRow is one host over the run's measured trials, % of one core.
type hostNoiseRow struct {
	Host                    string
	Trials                  int
	Median, Max, StealMax   float64
	MedianText, MaxText, St string
}

var noiseEntry = regexp.MustCompile(`^(.+) ([0-9.]+)% \(steal ([0-9.]+)%\)$`)

// HostNoise returns the hosts section, or nil for a run without host figures.
func (v *runView) HostNoise() *hostNoiseView {
	by := map[string][]float64{}
	steal := map[string]float64{}
	var order []string
	var spreads []float64
	for _, t := range v.run.Trials {
		if t.Group != v.run.Meta.Measured && v.run.Meta.Measured != "" {
			continue
		}
		if t.ReleaseSpreadMs > 0 {
			spreads = append(spreads, t.ReleaseSpreadMs)
		}
		for _, e := range strings.Split(t.HostsNoise, "; ") {
			m := noiseEntry.FindStringSubmatch(e)
			if m == nil {
				continue
			}
			out, _ := strconv.ParseFloat(m[2], 64)
			st, _ := strconv.ParseFloat(m[3], 64)
			if _, seen := by[m[1]]; !seen {
				order = append(order, m[1])
			}
			by[m[1]] = append(by[m[1]], out)
			steal[m[1]] = max(steal[m[1]], st)
		}
	}
	if len(order) == 0 && len(spreads) == 0 {
		return nil
	}
	out := &hostNoiseView{}
	for _, h := range order {
		xs := slices.Sorted(slices.Values(by[h]))
		r := hostNoiseRow{Host: h, Trials: len(xs), Median: median(xs), Max: xs[len(xs)-1], StealMax: steal[h]}
		r.MedianText, r.MaxText, r.St = share(r.Median), share(r.Max), share(r.StealMax)
		out.Rows = append(out.Rows, r)
	}
	if len(spreads) > 0 {
		s := slices.Sorted(slices.Values(spreads))
		out.Spread = fmt.Sprintf("median %s ms, largest %s ms over %d trials", trim(median(s)), trim(s[len(s)-1]), len(s))
	}
	return out
}

func share(x float64) string { return trim(x) + "%" }

func trim(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
