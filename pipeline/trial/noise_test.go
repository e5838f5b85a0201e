package trial

import (
	"math"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/telemetry"
)

const claimed = `name: flags
title: Flags
question: Which flags spoil a claim?
variants:
  fast: {command: [x, "{port}"], ready: /health}
  slow: {command: [x, "{port}"], ready: /health}
load: {model: burst, burst: 4, requests: [{path: /}]}
forks: 3
claims:
  - id: fast-wins
    says: fast finishes the burst sooner
    check: {metric: wall_ms, compare: [slow, fast], at_least: 1.25}
    decision: {when: always, pick: fast}
`

func TestFlagReasons(t *testing.T) {
	m, err := experiments.Parse("flags.yaml", []byte(claimed), "")
	if err != nil && (m == nil || !experiments.HostOnly(err)) {
		t.Fatal(err)
	}
	gone := telemetry.Flag{Code: telemetry.FlagPidGone, Msg: "target pid 7 gone at t=1.0s"}
	if r := FlagReasons(m, []telemetry.Flag{gone}); len(r) != 0 {
		t.Errorf("no claim reads a process column: the flag stays data, got %v", r)
	}
	m.Claims[0].Check.Metric = "target_cpu_pct"
	r := FlagReasons(m, []telemetry.Flag{gone, {Code: telemetry.FlagCounterReset, Msg: "gc"}})
	if len(r) != 1 || !strings.Contains(r[0], "pid_gone spoils target_cpu_pct, which a claim reads") {
		t.Errorf("a claim reads target_cpu_pct: want one reason naming the flag and the column, got %v", r)
	}
}

// TestHostNoise: samples weigh by their length. A 1 s sample at 10% and a
// 0.5 s one at 40% outside: (10·1 + 40·0.5) / 1.5 = 30 / 1.5 = 20%; steal
// (2·1 + 8·0.5) / 1.5 = 6 / 1.5 = 4%.
func TestHostNoise(t *testing.T) {
	outside, steal := HostNoise([]telemetry.Sample{{HostCPUPct: 10, HostStealPct: 2, Dur: 1}, {HostCPUPct: 40, HostStealPct: 8, Dur: 0.5}})
	if math.Abs(outside-20) > 1e-9 || math.Abs(steal-4) > 1e-9 {
		t.Errorf("noise %g%% outside, %g%% steal; want 20 and 4", outside, steal)
	}
	if o, s := HostNoise(nil); o != 0 || s != 0 {
		t.Errorf("no samples: %g, %g; want 0, 0 (nothing measured is no noise)", o, s)
	}
}
