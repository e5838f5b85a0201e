package trial

import (
	"fmt"
	"math"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/telemetry"
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
