package report

import (
	"strings"
	"testing"

	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// TestSupportedCount: the index's tally leaves design facts out of the
// supported claims, whatever their verdict, and says how many it left out.
func TestSupportedCount(t *testing.T) {
	latest := map[string]indexRun{
		"io-bound": {verdicts: []record.Verdict{
			{ID: "a", Status: "supported"},
			{ID: "b", Status: "contradicted"},
			{ID: "capped", Status: "supported", DesignFact: "200 threads"},
		}},
		"cpu-bound": {verdicts: []record.Verdict{
			{ID: "c", Status: "inconclusive"},
			{ID: "loops", Status: "supported", DesignFact: "4 event loops"},
		}},
	}
	// 1 supported (a) of 3 counted (a, b, c); 2 design facts left out.
	want := "1 of 3 claims supported in the latest runs; 2 design facts (checks of the setup that cannot fail) shown but not counted."
	if got := supportedCount(latest); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// Twins: wall, p99 and p50 of the same pair (either order) are one
	// question; rps of that pair, another pair, or another point are not.
	cmp := func(metric string, a, b string, where ...string) *stats.Check {
		c := &stats.Check{Metric: metric, Compare: []string{a, b}}
		if len(where) > 0 {
			c.Where = map[string][]string{"users": where}
		}
		return c
	}
	twins := map[string]indexRun{"io-bound": {
		verdicts: []record.Verdict{
			{ID: "wall", Status: "supported"}, {ID: "p99", Status: "supported"}, {ID: "p50", Status: "contradicted"},
			{ID: "rps", Status: "supported"}, {ID: "other-pair", Status: "supported"}, {ID: "at-250", Status: "supported"},
		},
		checks: map[string]*stats.Check{
			"wall": cmp("wall_ms", "platform", "virtual"), "p99": cmp("p99_ms", "virtual", "platform"), "p50": cmp("p50_ms", "platform", "virtual"),
			"rps": cmp("rps", "platform", "virtual"), "other-pair": cmp("wall_ms", "platform", "webflux"), "at-250": cmp("wall_ms", "platform", "virtual", "250"),
		},
	}}
	// 5 of 6 supported; wall/p99/p50 are 3 twins; 4 questions, of which the
	// twin set is not supported (p50 contradicted): 3 of 4.
	want = "5 of 6 claims supported in the latest runs; 0 design facts (checks of the setup that cannot fail) shown but not counted. 3 of the claims are twins, the same two variants compared on another time metric of the same load (wall time, p99, p50), which move together and do not confirm each other: counting each set once, 3 of 4 questions are supported."
	if got := supportedCount(twins); got != want {
		t.Errorf("twins: got  %q\nwant %q", got, want)
	}
	if got := supportedCount(map[string]indexRun{}); got != "" {
		t.Errorf("no runs: got %q, want nothing", got)
	}
}

// TestSeedTitles: a run cites every write-up its claims draw on, by title,
// not only the manifest's source (io-bound carries seed 003's claims too).
func TestSeedTitles(t *testing.T) {
	figs := map[string]seedFigure{
		"a": {From: "000: platform wall=1325ms; 003: runs took between 1.6 and 2.6 s"},
		"b": {From: "003: \"server threads used: 200\""},
		"c": {From: "no write-up named here"},
	}
	got := seedTitles("000: Virtual Threads vs WebFlux vs Platform Threads on Spring Boot 4.1", figs)
	want := []string{
		"000: Virtual Threads vs WebFlux vs Platform Threads on Spring Boot 4.1: Benchmarks and a Decision Framework",
		"003: Virtual Threads vs WebFlux: Which to Choose in 2026",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
