package trial

import (
	"fmt"
	"math"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/measure/telemetry"
)

// HostNoise averages the host CPU used outside threadlab and the steal
// over a window's samples, weighted by their length, in % of one core.
func HostNoise(samples []telemetry.Sample) (outside, steal float64) {
	var dur float64
	for _, x := range samples {
		outside += x.HostCPUPct * x.Dur
		steal += x.HostStealPct * x.Dur
		dur += x.Dur
	}
	if dur <= 0 {
		return 0, 0
	}
	return outside / dur, steal / dur
}

// WindowReasons are the reasons a measured window is invalid for what
// happened in it: the target died (exited, nil while it runs), the load
// generator saturated, or its stall watchdog gave up on a frozen or
// hopeless target.
func WindowReasons(exited error, res *load.Result) []string {
	var out []string
	if exited != nil {
		out = append(out, "the target died during the trial: "+exited.Error())
	}
	if res.Self.Saturated {
		out = append(out, "load generator saturated: "+res.Self.Reason)
	}
	if res.Stalled != "" {
		out = append(out, res.Stalled)
	}
	return out
}

// NoiseReasons are the reasons a window on this machine is invalid for its
// host's noise over the manifest's bounds (HostNoise's averages, % of one
// core): CPU used outside threadlab, and CPU stolen by the hypervisor.
func NoiseReasons(n experiments.Noise, outside, steal float64) []string {
	var out []string
	if outside > n.MaxOutsidePct {
		out = append(out, fmt.Sprintf("host noise: %.0f%% of one core used outside threadlab during the window (noise.max_outside_pct %g)", outside, n.MaxOutsidePct))
	}
	if steal > n.MaxStealPct {
		out = append(out, fmt.Sprintf("host noise: %.0f%% of one core stolen by the hypervisor during the window (noise.max_steal_pct %g)", steal, n.MaxStealPct))
	}
	return out
}

// FlagReasons turns sampler flags into reasons a trial is invalid, for
// flags that spoil a column some claim of m reads; other flags stay
// recorded in the telemetry_flags column only.
func FlagReasons(m *experiments.Manifest, flags []telemetry.Flag) []string {
	read := map[string]bool{}
	for _, c := range m.Claims {
		read[c.Check.Metric] = true
	}
	var out []string
	for _, f := range flags {
		for _, col := range telemetry.Affects(f.Code) {
			if read[col] {
				out = append(out, fmt.Sprintf("telemetry %s spoils %s, which a claim reads: %s", f.Code, col, f.Msg))
				break
			}
		}
	}
	return out
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }
