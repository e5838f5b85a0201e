package trial

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/measure/telemetry"
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

// TestNoiseReasons: each bound is strict (at the bound is still quiet),
// and each reason quotes the value and the bound it broke.
func TestNoiseReasons(t *testing.T) {
	n := experiments.Noise{MaxOutsidePct: 25, MaxStealPct: 5}
	for _, c := range []struct {
		outside, steal float64
		want           []string
		why            string
	}{
		{25, 5, nil, "at the bounds: quiet"},
		{40, 1, []string{"host noise: 40% of one core used outside threadlab during the window (noise.max_outside_pct 25)"}, "a busy neighbour"},
		{10, 12.4, []string{"host noise: 12% of one core stolen by the hypervisor during the window (noise.max_steal_pct 5)"}, "a hypervisor taking CPU"},
		{30, 6, []string{"outside", "stolen"}, "both, outside first"},
	} {
		got := NoiseReasons(n, c.outside, c.steal)
		if len(got) != len(c.want) {
			t.Errorf("%s: %q, want %d reason(s)", c.why, got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: reason %q, want it to say %q", c.why, got[i], w)
			}
		}
	}
}

// TestWindowReasons: a dead target, a saturated generator and a stalled
// load each make the window invalid, in that order; a clean window has none.
func TestWindowReasons(t *testing.T) {
	if r := WindowReasons(nil, &load.Result{}); r != nil {
		t.Errorf("clean window: %q, want none", r)
	}
	res := &load.Result{Stalled: "no answer for 10s: the target is frozen"}
	res.Self.Saturated, res.Self.Reason = true, "CPU 98% of its cores"
	got := WindowReasons(errors.New("target exited: signal: killed"), res)
	want := []string{"the target died during the trial: target exited: signal: killed", "load generator saturated: CPU 98% of its cores", "no answer for 10s: the target is frozen"}
	if !slices.Equal(got, want) {
		t.Errorf("reasons %q, want %q", got, want)
	}
}
