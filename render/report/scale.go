package report

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/threadlab/threadlab/store/record"
)

// measuredAt is the load a run measured its answer at, in a few words,
// for a decision row beside the seed's "when" (whose words keep the
// write-up's scale, "hundreds to thousands of concurrent requests"): the
// measured group's users, rate or burst, the sweep's values where a sweep
// sets them, the other sweep dimensions, and a profile other than the
// default. "" without a manifest.
func measuredAt(mi *record.ManifestInfo, profile string) string {
	if mi == nil {
		return ""
	}
	g := measuredLoad(mi)
	var figure string
	var other []string
	swept := map[string][]string{}
	for _, d := range mi.Sweep {
		switch d.Load {
		case "users", "rate", "connections", "burst":
			swept[d.Load] = d.Values
		default:
			other = append(other, d.Key+" "+strings.Join(d.Values, ", "))
		}
	}
	values := func(load string, own string) string {
		if vs, ok := swept[load]; ok {
			return strings.Join(vs, ", ")
		}
		return own
	}
	switch g.Model {
	case "burst":
		figure = "bursts of " + values("burst", thousands(g.Burst)) + " requests"
	case "open":
		rate := values("rate", strconv.FormatFloat(g.Rate, 'f', -1, 64))
		if vs, ok := swept["connections"]; ok {
			rate = strings.Join(vs, ", ")
		}
		figure = rate + " requests/s"
	case "ramp":
		peak := 0.0
		unit := " users"
		for _, s := range g.Stages {
			if s.Rate > 0 {
				peak, unit = max(peak, s.Rate), " requests/s"
			} else {
				peak = max(peak, float64(s.Users))
			}
		}
		figure = "a ramp up to " + strconv.FormatFloat(peak, 'f', -1, 64) + unit
	default:
		figure = values("users", thousands(g.Users)) + " users"
	}
	s := figure
	if len(other) > 0 {
		s += "; " + strings.Join(other, "; ")
	}
	if p := cmp.Or(profile, "default"); p != "default" {
		s += fmt.Sprintf(" (profile %s)", p)
	}
	return s
}

// measuredLoad is the request group a run answers its question with: the
// only group, or the one load.measure names (the first when it names
// none). The zero group without a manifest.
func measuredLoad(mi *record.ManifestInfo) record.LoadGroupInfo {
	if mi == nil {
		return record.LoadGroupInfo{}
	}
	if len(mi.Load.Groups) == 0 {
		return mi.Load.LoadGroupInfo
	}
	for _, g := range mi.Load.Groups {
		if g.Name == mi.Load.Measure {
			return g
		}
	}
	return mi.Load.Groups[0]
}
