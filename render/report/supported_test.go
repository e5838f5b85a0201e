package report

import (
	"strings"
	"testing"

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
