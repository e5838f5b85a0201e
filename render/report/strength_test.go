package report

import (
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// TestStrength: a supported claim is solid only with no noise flag and on
// a host that passed its host check; design-size flags do not weaken it.
func TestStrength(t *testing.T) {
	failed := []string{"host check load: 3.1 (want < 1.0); fix: wait for the host to go quiet"}
	other := []string{"telemetry flag scrape_failed: metrics: scrape failed"}
	rows := []struct {
		why      string
		v        record.Verdict
		warnings []string
		want     string
	}{
		{"clean", record.Verdict{Status: "supported"}, nil, "solid"},
		{"a design-size flag: the test already passed", record.Verdict{Status: "supported", Flags: []string{"few-trials-ci (a)"}}, nil, "solid"},
		{"a noise flag", record.Verdict{Status: "supported", Flags: []string{"noisy-cv (a)"}}, nil, "directional"},
		{"forks in two groups", record.Verdict{Status: "supported", Flags: []string{"bimodal (a)"}}, nil, "directional"},
		{"a host that failed its host check", record.Verdict{Status: "supported"}, failed, "directional"},
		{"a warning that is not about the host", record.Verdict{Status: "supported"}, other, "solid"},
		{"not supported: the status stands", record.Verdict{Status: "contradicted"}, failed, "contradicted"},
		{"no status", record.Verdict{}, nil, "inconclusive"},
	}
	for _, r := range rows {
		if got := strength(r.v, r.warnings); got != r.want {
			t.Errorf("%s: %q, want %q", r.why, got, r.want)
		}
	}
}
