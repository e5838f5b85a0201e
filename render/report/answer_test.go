package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// TestAnswerNamesFewOthersAndRangesMany: the answer names every other
// variant while there are at most three; with more (boot-versions has
// nine) it names the runner-up and gives the rest as a range, so the
// sentence stays readable.
func TestAnswerNamesFewOthersAndRangesMany(t *testing.T) {
	view := func(medians ...float64) *runView {
		r := &record.Run{Meta: record.Meta{Measured: "main"}}
		var names []string
		for i, m := range medians {
			n := fmt.Sprintf("v%d", i+1)
			names = append(names, n)
			r.Summary = append(r.Summary, record.Summary{Variant: n, Group: "main", Metric: "wall_ms", Median: m})
		}
		return &runView{run: r, layout: layout{Variants: names, Points: []string{""}, Measured: "main", Primary: "wall_ms"}}
	}
	for _, tc := range []struct {
		name    string
		medians []float64
		want    string
		notWant string
	}{
		{"two variants: the other named", []float64{900, 350},
			"v2 had the lowest median wall time, 350 ms, against v1 900 ms.", ""},
		{"four variants: all three others named", []float64{900, 350, 360, 370},
			"against v3 360 ms and v4 370 ms and v1 900 ms", "between"},
		{"five variants: runner-up named, the rest a range", []float64{945, 347, 351, 352, 944},
			"v2 had the lowest median wall time, 347 ms, against v3 351 ms and the other 3 between 352 and 945 ms.", "v5 944"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := view(tc.medians...).answer()
			if !strings.Contains(got, tc.want) {
				t.Errorf("answer = %q\nwant it to contain %q", got, tc.want)
			}
			if tc.notWant != "" && strings.Contains(got, tc.notWant) {
				t.Errorf("answer = %q\nwant no %q", got, tc.notWant)
			}
		})
	}
}

// TestAnswerRanksChoicesNotControls: a control (role: control; the same
// service without the load under test) is a reference, not an approach to
// pick, so the answer ranks the others and gives the controls after them,
// even when a control has the best median (event-loop-starvation's
// webflux-baseline did, and the page named it first).
func TestAnswerRanksChoicesNotControls(t *testing.T) {
	type vm struct {
		name    string
		median  float64
		control bool
	}
	view := func(vs ...vm) *runView {
		r := &record.Run{Meta: record.Meta{Measured: "main"}}
		v := &runView{run: r, controls: map[string]bool{}}
		var names []string
		for _, x := range vs {
			names = append(names, x.name)
			r.Summary = append(r.Summary, record.Summary{Variant: x.name, Group: "main", Metric: "wall_ms", Median: x.median})
			if x.control {
				v.controls[x.name] = true
			}
		}
		v.layout = layout{Variants: names, Points: []string{""}, Measured: "main", Primary: "wall_ms"}
		return v
	}
	for _, tc := range []struct {
		name     string
		variants []vm
		want     string
		notWant  string
	}{
		{"one control with the best median: ranked after the choices",
			[]vm{{"webflux", 1439, false}, {"platform", 980, false}, {"webflux-baseline", 304, true}},
			"platform had the lowest median wall time, 980 ms, against webflux 1439 ms; the control webflux-baseline 304 ms.",
			"webflux-baseline had the lowest"},
		{"three controls: a range after the choices",
			[]vm{{"webflux", 1439, false}, {"webflux-baseline", 304, true}, {"platform", 980, false},
				{"platform-baseline", 310, true}, {"virtual", 1100, false}, {"virtual-baseline", 305, true}},
			"platform had the lowest median wall time, 980 ms, against virtual 1100 ms and webflux 1439 ms; the 3 controls between 304 and 310 ms.",
			"baseline had"},
		{"one choice and its control: no ranking, the control beside it",
			[]vm{{"webflux", 1439, false}, {"webflux-baseline", 304, true}},
			"On this host webflux had a median wall time of 1439 ms; the control webflux-baseline 304 ms.",
			"lowest"},
		{"no controls: the ranking as before",
			[]vm{{"a", 900, false}, {"b", 350, false}},
			"b had the lowest median wall time, 350 ms, against a 900 ms.",
			"control"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := view(tc.variants...).answer()
			if !strings.Contains(got, tc.want) {
				t.Errorf("answer = %q\nwant it to contain %q", got, tc.want)
			}
			if strings.Contains(got, tc.notWant) {
				t.Errorf("answer = %q\nwant no %q", got, tc.notWant)
			}
		})
	}
}

// TestAnswerForTies: a run whose claims are all equalities between pairs
// (aot-cache: io-aot vs io-nocache, cpu-aot vs cpu-nocache, each within
// 0.9–1.1) leads with the pairs' ratios, not a ranking of every variant by
// the primary metric, which set a CPU burst against an I/O burst ("cpu-aot
// had the lowest median wall time, 189 ms, against … io-aot 312 ms"). One
// claim that is not a tie brings the ranking back.
func TestAnswerForTies(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	tie := func(a, b string) *stats.Check {
		return &stats.Check{Metric: "wall_ms", Compare: []string{a, b}, AtLeast: f(0.9), AtMost: f(1.1)}
	}
	view := func(checks map[string]*stats.Check, ratios map[string]float64) *runView {
		r := &record.Run{Meta: record.Meta{Measured: "main"}}
		names := []string{"io-nocache", "io-aot", "cpu-nocache", "cpu-aot"}
		for i, n := range names {
			r.Summary = append(r.Summary, record.Summary{Variant: n, Group: "main", Metric: "wall_ms", Median: []float64{311, 312, 192, 189}[i]})
		}
		v := &runView{run: r, checks: checks, layout: layout{Variants: names, Points: []string{""}, Measured: "main", Primary: "wall_ms"}}
		for _, id := range []string{"io-wall-same", "cpu-wall-same", "cpu-rps-same"} {
			if _, ok := checks[id]; !ok {
				continue
			}
			v.recorded = append(v.recorded, record.Verdict{ID: id, Status: "supported", Ratio: ratios[id]})
			v.readings = append(v.readings, reading{Outcome: stats.OutcomeSupported})
		}
		return v
	}
	for _, tc := range []struct {
		name          string
		checks        map[string]*stats.Check
		ratios        map[string]float64
		want, notWant string
	}{
		{"all ties: the range of the ratios and the pairs, no ranking",
			map[string]*stats.Check{"io-wall-same": tie("io-aot", "io-nocache"), "cpu-wall-same": tie("cpu-aot", "cpu-nocache"), "cpu-rps-same": tie("cpu-aot", "cpu-nocache")},
			map[string]float64{"io-wall-same": 1.003, "cpu-wall-same": 0.986, "cpu-rps-same": 1.014},
			"Each of its 3 claims asks whether two variants are the same within the band 0.90–1.10; on this host the ratios came out between 0.986 and 1.014 (io-aot/io-nocache, cpu-aot/cpu-nocache). Of its 3 claims, 3 held",
			"lowest median"},
		{"one tie: its ratio",
			map[string]*stats.Check{"io-wall-same": tie("io-aot", "io-nocache")},
			map[string]float64{"io-wall-same": 1.003},
			"Its claim asks whether two variants are the same within the band 0.90–1.10; on this host the ratio came out at 1.003 (io-aot/io-nocache).",
			"lowest median"},
		{"a one-sided claim among the ties: the ranking",
			map[string]*stats.Check{"io-wall-same": tie("io-aot", "io-nocache"), "cpu-wall-same": {Metric: "wall_ms", Compare: []string{"cpu-aot", "cpu-nocache"}, AtLeast: f(1.1)}},
			map[string]float64{"io-wall-same": 1.003, "cpu-wall-same": 0.986},
			"cpu-aot had the lowest median wall time, 189 ms",
			"same within"},
		{"ties without ratios (not computed): the ranking",
			map[string]*stats.Check{"io-wall-same": tie("io-aot", "io-nocache")},
			map[string]float64{},
			"cpu-aot had the lowest median wall time",
			"same within"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := view(tc.checks, tc.ratios).answer()
			if !strings.Contains(got, tc.want) {
				t.Errorf("answer = %q\nwant it to contain %q", got, tc.want)
			}
			if strings.Contains(got, tc.notWant) {
				t.Errorf("answer = %q\nwant no %q", got, tc.notWant)
			}
		})
	}
}
