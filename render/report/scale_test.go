package report

import (
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// TestMeasuredAt: a decision row names the load its run measured, so the
// seed's scale words in "when" are not read as this run's.
func TestMeasuredAt(t *testing.T) {
	closed := func(users int) *record.ManifestInfo {
		m := &record.ManifestInfo{}
		m.Load.Model, m.Load.Users = "closed", users
		return m
	}
	usersSwept := closed(100)
	usersSwept.Sweep = record.SweepInfos{{Key: "users", Values: []string{"10", "50", "250"}, Load: "users"}}
	poolSwept := closed(100)
	poolSwept.Sweep = record.SweepInfos{{Key: "pool", Values: []string{"5", "20", "40"}}}
	burst := &record.ManifestInfo{}
	burst.Load.Model, burst.Load.Burst = "burst", 600
	groups := &record.ManifestInfo{}
	groups.Load.Measure = "probe"
	groups.Load.Groups = []record.LoadGroupInfo{{Name: "hog", Model: "closed", Users: 40}, {Name: "probe", Model: "open", Rate: 20}}
	rateSwept := &record.ManifestInfo{}
	rateSwept.Load.Model = "open"
	rateSwept.Sweep = record.SweepInfos{{Key: "rate", Values: []string{"100", "200"}, Load: "rate"}}
	rows := []struct {
		why     string
		mi      *record.ManifestInfo
		profile string
		want    string
	}{
		{"no manifest, nothing to say", nil, "", ""},
		{"a closed model names its users", closed(100), "default", "100 users"},
		{"a users sweep replaces the group's own figure", usersSwept, "", "10, 50, 250 users"},
		{"another sweep dimension follows the load", poolSwept, "", "100 users; pool 5, 20, 40"},
		{"a burst names its size", burst, "", "bursts of 600 requests"},
		{"the measured group answers, not the first", groups, "", "20 requests/s"},
		{"a rate sweep gives its rates", rateSwept, "", "100, 200 requests/s"},
		{"a profile other than the default is named", closed(2000), "full", "2,000 users (profile full)"},
	}
	for _, r := range rows {
		if got := measuredAt(r.mi, r.profile); got != r.want {
			t.Errorf("%s: %q, want %q", r.why, got, r.want)
		}
	}
}
