package report

import (
	"strings"
	"testing"

	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// TestNegligibleLead: a direction the test detects is called "better" only
// when the lead can matter; inside the claim's band, or inside ±10% (or a
// superiority claim's own nearer bound) at every unit, the page names the
// size instead of a winner.
func TestNegligibleLead(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	band := stats.Check{Metric: "p50_ms", Compare: []string{"loom-netty", "webflux-netty"}, AtLeast: stats.F(0.9), AtMost: stats.F(1.1)}
	beats := stats.Check{Metric: "wall_ms", Compare: []string{"platform", "webflux"}, AtLeast: stats.F(1.2)}
	beats5 := stats.Check{Metric: "wall_ms", Compare: []string{"platform", "webflux"}, AtLeast: stats.F(1.05)}
	anyLead := stats.Check{Metric: "wall_ms", Compare: []string{"platform", "webflux"}, AtLeast: stats.F(1)}
	for _, c := range []struct {
		why  string
		x    record.Verdict
		c    stats.Check
		want string
	}{
		{"fixed-rate-sweep netty-medians-track: 0.06% with p = 0.024 inside a ±10% band is no winner",
			record.Verdict{Ratio: 1.00064, Low: 1.00025, High: 1.00071, Level: 0.05, Direction: 1, DirectionP: 0.024, Outcome: "supported",
				Points: []record.Point{{Point: "users=2000", Ratio: f(1.00064), Low: f(1.00025), High: f(1.00071)}}},
			band, "webflux-netty ahead by only 0.064%: loom-netty/webflux-netty above 1, one-sided Mann-Whitney U p = 0.024, with its 90% CI inside the claim's band 0.9–1.10, which counts the two as equal"},
		{"a lead of 2.6% on a claim of 1.2x: under the 10% the reports count, not 'better'",
			record.Verdict{Ratio: 1.026, Low: 1.024, High: 1.027, Level: 0.05, Direction: 1, DirectionP: 0.004, Outcome: "smaller"},
			beats, "webflux ahead by only 2.6%: platform/webflux above 1, one-sided Mann-Whitney U p = 0.004, with its 90% CI inside 0.909–1.10, the ±10% under which the reports count two variants as equal"},
		{"a claim of 1.05x counts a 7% lead: better",
			record.Verdict{Ratio: 1.07, Low: 1.06, High: 1.08, Level: 0.05, Direction: 1, DirectionP: 0.004, Outcome: "supported"},
			beats5, "webflux better: platform/webflux above 1, one-sided Mann-Whitney U p = 0.004"},
		{"a claim of 1.05x: a 3% lead is under its own bound",
			record.Verdict{Ratio: 1.03, Low: 1.02, High: 1.04, Level: 0.05, Direction: 1, DirectionP: 0.004, Outcome: "smaller"},
			beats5, "webflux ahead by only 3%: platform/webflux above 1, one-sided Mann-Whitney U p = 0.004, with its 90% CI inside 0.952–1.05, the ±5% under which the reports count two variants as equal"},
		{"a claim that any lead counts (at_least 1) never calls a lead negligible",
			record.Verdict{Ratio: 1.001, Low: 1.0005, High: 1.002, Level: 0.05, Direction: 1, DirectionP: 0.004, Outcome: "supported"},
			anyLead, "webflux better: platform/webflux above 1, one-sided Mann-Whitney U p = 0.004"},
		{"an interval reaching past 10% may hide a real lead: better",
			record.Verdict{Ratio: 1.06, Low: 1.02, High: 1.12, Level: 0.05, Direction: 1, DirectionP: 0.004, Outcome: "smaller"},
			beats, "webflux better: platform/webflux above 1, one-sided Mann-Whitney U p = 0.004"},
		{"one point of two with a large lead: not negligible",
			record.Verdict{Ratio: 1.02, Low: 1.01, High: 1.03, Level: 0.05, Direction: 1, DirectionP: 0.004, Outcome: "smaller",
				Points: []record.Point{{Point: "a", Ratio: f(1.02), Low: f(1.01), High: f(1.03)}, {Point: "b", Ratio: f(1.5), Low: f(1.4), High: f(1.6)}}},
			beats, "webflux better: platform/webflux above 1, one-sided Mann-Whitney U p = 0.004"},
		{"two small points: the larger lead is named, at every point",
			record.Verdict{Ratio: 1.02, Low: 1.01, High: 1.03, Level: 0.05, Direction: 1, DirectionP: 0.004, Outcome: "smaller",
				Points: []record.Point{{Point: "a", Ratio: f(1.02), Low: f(1.01), High: f(1.03)}, {Point: "b", Ratio: f(0.96), Low: f(0.95), High: f(0.97)}}},
			beats, "webflux ahead by only 4%: platform/webflux above 1, one-sided Mann-Whitney U p = 0.004, with its 90% CI at every point inside 0.909–1.10, the ±10% under which the reports count two variants as equal"},
		{"a band claim whose interval leaves the band: the lead is real, better",
			record.Verdict{Ratio: 1.15, Low: 1.12, High: 1.18, Level: 0.05, Direction: 1, DirectionP: 0.004, Outcome: "reversed"},
			band, "webflux-netty better: loom-netty/webflux-netty above 1, one-sided Mann-Whitney U p = 0.004"},
		{"no direction: neither ahead, whatever the size",
			record.Verdict{Ratio: 1.001, Low: 0.99, High: 1.01, Level: 0.05, Direction: 0, DirectionText: "loom-netty/webflux-netty: not significant", Outcome: "supported"},
			band, "neither loom-netty nor webflux-netty significantly ahead (loom-netty/webflux-netty: not significant)"},
	} {
		r := readClaim(c.x, &c.c, seedFigure{})
		if r.Direction != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.why, r.Direction, c.want)
		}
		if strings.Contains(c.want, "only") && r.Outcome != c.x.Outcome {
			t.Errorf("%s: the outcome moved from %s to %s; only the wording may change", c.why, c.x.Outcome, r.Outcome)
		}
	}
}

// TestAnswerNegligibleLead: the index's answer keeps a "smaller than
// claimed" pick whose lead is inside the margin the reports count as
// equal, but says how small the lead is (io-bound: webflux ahead of
// virtual threads by 2.6%, claimed 10%), not just "a smaller effect".
func TestAnswerNegligibleLead(t *testing.T) {
	rows := []decisionRow{
		{Pick: "webflux", When: "Pure non-blocking I/O end to end", Experiment: "io-bound",
			Reading: reading{Outcome: stats.OutcomeSmaller, Dir: 1, Direction: "webflux ahead by only 2.6%: ...", Negligible: "2.6%"}},
		{Pick: "virtual", When: "Blocking I/O", Experiment: "pool-sweep",
			Reading: reading{Outcome: stats.OutcomeSmaller, Dir: 1, Direction: "virtual better: ..."}},
	}
	a := newIndexAnswer(rows)
	if len(a.Picks) != 2 {
		t.Fatalf("picks %+v, want both (a smaller effect keeps its pick)", a.Picks)
	}
	if got := a.Picks[0].Note; got != "ahead by only 2.6%, inside the margin the reports count as equal: close to a tie here" {
		t.Errorf("negligible lead note %q", got)
	}
	if got := a.Picks[1].Note; got != "a smaller effect than claimed" {
		t.Errorf("a real but smaller lead: note %q", got)
	}
}
