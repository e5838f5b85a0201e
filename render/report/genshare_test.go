package report

import (
	"math"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// TestGeneratorShare: Method says how much CPU the unpinned generator
// took beside each variant and the largest gap between variants at one
// point, as a share of the host: a confound of the comparison on a small
// host, not noise.
func TestGeneratorShare(t *testing.T) {
	gen := func(variant, point string, pct float64) record.Summary {
		return record.Summary{Variant: variant, Point: point, Group: "main", Metric: "gen_cpu_pct", N: 5, Median: pct}
	}
	fp := []byte(`{"cpu": {"model": "x", "threads": 2}}`)
	rows := []struct {
		why     string
		sum     []record.Summary
		pinned  bool
		has     []string
		without string
	}{
		{"one point: the range and the gap as a share of the host",
			[]record.Summary{gen("platform", "", 3.2), gen("virtual", "", 4.4), gen("webflux", "", 13.2)}, false,
			[]string{"3.2–13.2% of one core", "busiest beside webflux (13.2%) and least busy beside platform (3.2%)", "a gap of 5% of the host's 2 CPUs that webflux's target did not have"}, " at "},
		{"a sweep: the point with the largest gap between variants, not across points",
			[]record.Summary{gen("platform", "users=10", 3), gen("virtual", "users=10", 3.5), gen("platform", "users=250", 4.8), gen("virtual", "users=250", 21.6)}, false,
			[]string{"3–21.6% of one core", "at users=250", "gap of 8.4% of the host"}, ""},
		{"other groups and other metrics are not the generator beside the measured target",
			[]record.Summary{gen("a", "", 5), gen("b", "", 6), {Variant: "a", Group: "hog", Metric: "gen_cpu_pct", N: 5, Median: 90}, {Variant: "a", Group: "main", Metric: "rps", N: 5, Median: 900}}, false,
			[]string{"5–6% of one core"}, "90"},
		{"a cell without a median is left out", []record.Summary{gen("a", "", 5), gen("b", "", math.NaN())}, false,
			[]string{"used 5% of one core"}, "busiest"},
	}
	for _, r := range rows {
		run := &record.Run{Summary: r.sum, Fingerprint: fp}
		v := &runView{run: run, layout: layout{Measured: "main", SweepKeys: []string{"users"}}}
		got := v.generatorShare(r.pinned)
		for _, h := range r.has {
			if !strings.Contains(got, h) {
				t.Errorf("%s: %q lacks %q", r.why, got, h)
			}
		}
		if r.without != "" && strings.Contains(got, r.without) {
			t.Errorf("%s: %q has %q", r.why, got, r.without)
		}
	}
	v := &runView{run: &record.Run{Summary: []record.Summary{gen("a", "", 5), gen("b", "", 9)}, Fingerprint: fp}, layout: layout{Measured: "main"}}
	if got := v.generatorShare(true); got != "" {
		t.Errorf("a pinned generator has its own CPUs, yet: %q", got)
	}
	v.run.Meta.Hosts = &record.Hosts{}
	if got := v.generatorShare(false); got != "" {
		t.Errorf("a generator on other hosts takes nothing from the target's, yet: %q", got)
	}
}
