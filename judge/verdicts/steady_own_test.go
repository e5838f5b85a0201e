package verdicts

import (
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// cpuManifest: two variants with the same flat wall time, and claims on
// the target's CPU beside one on the wall time.
const cpuManifest = `name: cpuown
title: the target's CPU has its own steady state
question: which bursts does a CPU claim read?
variants:
  platform: {command: [p, "{port}"]}
  webflux: {command: [w, "{port}"]}
load: {model: burst, burst: 600, requests: [{path: /}], warmup: 1s}
forks: 6
iterations: 20
claims:
  - {id: platform-costs-more, says: Platform spends at least 1.1x WebFlux's CPU on a burst, check: {metric: target_cpu_s, compare: [platform, webflux], at_least: 1.1}}
  - {id: same-wall, says: the two finish a burst alike, check: {metric: wall_ms, compare: [platform, webflux], at_least: 0.9, at_most: 1.1}}
`

// ramp falls linearly from hi to lo over n points.
func ramp(hi, lo float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = hi - (hi-lo)*float64(i)/float64(n-1)
	}
	return out
}

// TestOwnSteadyCPU: the target's CPU warms up after the wall time has
// settled (metric.Def.OwnSteady; the hosts-parity and boot-versions runs
// METHODOLOGY cites). Both variants cost the same CPU in steady state;
// platform's CPU falls from 2x over its first bursts while both wall
// times are flat from the first burst. Read through the wall time's
// selection, the warm-up makes "platform costs more" supported; read
// through its own, it is not, and a CPU that never settles holds the
// claim back as not steady.
func TestOwnSteadyCPU(t *testing.T) {
	m, err := experiments.Parse("cpuown.yaml", []byte(cpuManifest), "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		platform  func(fork int) []float64 // platform's CPU-seconds per burst
		status    string
		reason    string // part of the verdict's reason
		evidence  string // part of its evidence
		primaryOK bool   // the primary's selection alone would support it (the premise)
	}{
		{"platform settles after 12 bursts", func(int) []float64 { return cat(ramp(1.0, 0.55, 12), jitter(0.5, 8)) },
			stats.Contradicted, "", "target_cpu_s keeps warming up after wall_ms settles", true},
		{"platform never settles in 4 of 6 forks", func(f int) []float64 {
			if f <= 4 {
				return ramp(1.0, 0.5, 20)
			}
			return cat(ramp(1.0, 0.55, 12), jitter(0.5, 8))
		}, stats.Inconclusive, "not in steady state in target_cpu_s", "fork 1, 2, 3, 4 never steady in it", true},
		{"both flat: nothing left out, nothing said", func(int) []float64 { return jitter(0.5, 20) },
			stats.Contradicted, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ts []record.Trial
			seq := 0
			for f := 1; f <= 6; f++ {
				for _, v := range []string{"platform", "webflux"} {
					cpu := jitter(0.5, 20)
					if v == "platform" {
						cpu = tt.platform(f)
					}
					seq++
					for i, x := range cpu {
						ts = append(ts, record.Trial{Variant: v, Group: "main", Trial: seq*100 + i, Seq: seq, Fork: f, Iteration: i + 1,
							Valid: true, WallMs: jitter(900, 20)[i], Requests: 600, TargetCPUSec: x})
					}
				}
			}
			r := read(m, GroupTrials(ts), nil)
			claim := m.Claims[0]
			primary := stats.EvaluateWith(claim.ID, claim.Says, claim.Check, claimCells(m, claim, r.steady), stats.Options{Seed: 1})
			if got := primary.Status == stats.Supported; got != tt.primaryOK {
				t.Fatalf("premise: read through the wall time's selection the claim is %s (ratio %.2f), want supported %v", primary.Status, primary.Ratio, tt.primaryOK)
			}
			byID := map[string]record.Verdict{}
			for _, v := range Evaluate(m, ts, stats.Options{Seed: 1}, Host{}) {
				byID[v.ID] = v
			}
			v := byID["platform-costs-more"]
			if v.Status != tt.status || !strings.Contains(v.Reason, tt.reason) {
				t.Errorf("platform-costs-more: %s (%s), want %s with reason containing %q", v.Status, v.Reason, tt.status, tt.reason)
			}
			ev := strings.Join(v.Evidence, "\n")
			if tt.evidence == "" && strings.Contains(ev, "keeps warming up") {
				t.Errorf("evidence %q: nothing was left out, so nothing should be said", ev)
			}
			if !strings.Contains(ev, tt.evidence) {
				t.Errorf("evidence %q: want %q", ev, tt.evidence)
			}
			if w := byID["same-wall"]; w.Status != stats.Supported || strings.Contains(strings.Join(w.Evidence, "\n"), "keeps warming up") {
				t.Errorf("same-wall: %s (%s), %q: a wall-time claim reads the primary's selection, untouched by the CPU's", w.Status, w.Reason, w.Evidence)
			}
			own := r.Own(m, []record.CellKey{{Variant: "platform", Group: "main"}, {Variant: "webflux", Group: "main"}}, nil)
			if len(own) != 1 || own[0].Metric != "target_cpu_s" || len(own[0].Cells) != 2 {
				t.Fatalf("Own = %+v, want target_cpu_s's selection of both cells (the one own metric a claim reads)", own)
			}
			for _, c := range own[0].Cells {
				for _, f := range c.Forks {
					if f.Values != nil {
						t.Errorf("Own %s fork %d keeps its values: steady.json leaves them to trials.csv", c.Variant, f.Fork)
					}
				}
			}
		})
	}
}
