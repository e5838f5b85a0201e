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

// TestDescribeSweptLoad: a sweep dimension with load: sets the measured
// group's figure point by point, so the Method names it N and gives the
// sweep's values rather than the group's own figure, which the sweep
// replaced (fixed-rate-sweep's Method read "an open model at 0 requests
// per second").
func TestDescribeSweptLoad(t *testing.T) {
	users := record.SweepInfo{Key: "users", Values: []string{"500", "1000", "2000"}, Load: "connections"}
	for _, tt := range []struct {
		name, reason string
		g            record.LoadGroupInfo
		swept        []record.SweepInfo
		want, not    []string
	}{
		{"fixed rate", "seed 002's shape: the sweep's users are the rate and the connections opened at once",
			record.LoadGroupInfo{Model: "open", Duration: "6s"}, []record.SweepInfo{users},
			[]string{"an open model at N requests per second for 6s", "with N connections opened at once", "N the sweep's users (500, 1000, 2000)"},
			[]string{"at 0 requests"}},
		{"closed users", "a concurrency sweep: the users vary, not the group's own figure",
			record.LoadGroupInfo{Model: "closed", Users: 10, Duration: "10s"}, []record.SweepInfo{{Key: "users", Values: []string{"50", "100"}, Load: "users"}},
			[]string{"a closed model of N users for 10s", "N the sweep's users (50, 100)"},
			[]string{"of 10 users"}},
		{"burst", "a burst sweep sets the burst size",
			record.LoadGroupInfo{Model: "burst"}, []record.SweepInfo{{Key: "size", Values: []string{"1000", "4000"}, Load: "burst"}},
			[]string{"a burst of N requests", "N the sweep's size (1000, 4000)"}, nil},
		{"sweep of something else", "a pool-size sweep does not touch the load: the group's own figure stands",
			record.LoadGroupInfo{Model: "open", Rate: 200, Duration: "30s"}, []record.SweepInfo{{Key: "pool", Values: []string{"10", "40"}}},
			[]string{"an open model at 200 requests per second"}, []string{"N the sweep's", "at N"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := describeGroup(tt.g, tt.swept...)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s: %q lacks %q", tt.reason, got, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("%s: %q says %q", tt.reason, got, n)
				}
			}
		})
	}
}
