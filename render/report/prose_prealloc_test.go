package report

import (
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// TestDescribePreallocate: the Method section says when an open group
// opened its connections before the first send (seed 002's fixed-rate
// shape), and says nothing of it otherwise.
func TestDescribePreallocate(t *testing.T) {
	for _, tt := range []struct {
		name, reason string
		g            record.LoadGroupInfo
		has          bool
	}{
		{"preallocated", "the connections were open before the first request", record.LoadGroupInfo{Model: "open", Rate: 2000, Duration: "60s", Preallocate: 2000}, true},
		{"dialled as needed", "the default: no such claim in the prose", record.LoadGroupInfo{Model: "open", Rate: 2000, Duration: "60s"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := describeGroup(tt.g)
			if has := strings.Contains(got, "with 2000 connections opened at once before the first send"); has != tt.has {
				t.Errorf("%s: %q", tt.reason, got)
			}
		})
	}
}
