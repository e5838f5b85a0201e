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
	// Twins, in a burst run: wall, p99 and p50 of the same pair and sign
	// (platform above virtual, written either way round) are one question;
	// rps of that pair, another pair, another point or the other sign are
	// not.
	cmp := func(metric string, a, b string, atLeast bool, where ...string) *stats.Check {
		c := &stats.Check{Metric: metric, Compare: []string{a, b}}
		if atLeast {
			c.AtLeast = stats.F(1.5)
		} else {
			c.AtMost = stats.F(0.67)
		}
		if len(where) > 0 {
			c.Where = map[string][]string{"users": where}
		}
		return c
	}
	checks := map[string]*stats.Check{
		"wall": cmp("wall_ms", "platform", "virtual", true), "p99": cmp("p99_ms", "virtual", "platform", false), "p50": cmp("p50_ms", "platform", "virtual", true),
		"rps": cmp("rps", "platform", "virtual", true), "other-pair": cmp("wall_ms", "platform", "webflux", true),
		"at-250": cmp("wall_ms", "platform", "virtual", true, "250"), "other-sign": cmp("p90_ms", "platform", "virtual", false),
	}
	verdicts := []record.Verdict{
		{ID: "wall", Status: "supported"}, {ID: "p99", Status: "supported"}, {ID: "p50", Status: "contradicted"},
		{ID: "rps", Status: "supported"}, {ID: "other-pair", Status: "supported"}, {ID: "at-250", Status: "supported"},
		{ID: "other-sign", Status: "contradicted"},
	}
	burst := &record.ManifestInfo{}
	burst.Load.Model = "burst"
	// 5 of 7 supported; wall/p99/p50 are 3 twins; 5 questions, of which the
	// twin set is not supported (p50 contradicted): 3 of 5.
	want = "5 of 7 claims supported in the latest runs; 0 design facts (checks of the setup that cannot fail) shown but not counted. 3 of the claims are twins, the same two variants compared on another time metric of the same load (wall time, p99, p50), which move together and do not confirm each other: counting each set once, 3 of 5 questions are supported."
	if got := supportedCount(map[string]indexRun{"io-bound": {manifest: burst, verdicts: verdicts, checks: checks}}); got != want {
		t.Errorf("twins: got  %q\nwant %q", got, want)
	}
	// The same claims in a closed-model run: wall time is the window, not
	// the slowest requests, so no twins.
	closed := &record.ManifestInfo{}
	closed.Load.Model = "closed"
	want = "5 of 7 claims supported in the latest runs; 0 design facts (checks of the setup that cannot fail) shown but not counted."
	if got := supportedCount(map[string]indexRun{"io-bound": {manifest: closed, verdicts: verdicts, checks: checks}}); got != want {
		t.Errorf("closed model: got  %q\nwant %q", got, want)
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
