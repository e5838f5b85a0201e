package fleet

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/measure/load"
)

func reqs() []load.Request { return []load.Request{{Path: "/io"}} }

func TestSplit(t *testing.T) {
	closed := load.Group{Name: "c", Model: load.Closed, Users: 10, Duration: time.Second, Requests: reqs()}
	open := load.Group{Name: "o", Model: load.Open, Rate: 300, Duration: 2 * time.Second, Requests: reqs(), Start: time.Second}
	burst := load.Group{Name: "b", Model: load.Burst, Burst: 5, Requests: reqs()}
	rampUsers := load.Group{Name: "ru", Model: load.Ramp, Requests: reqs(), Smooth: true,
		Stages: []load.Stage{{Duration: time.Second, Users: 10}, {Duration: time.Second, Users: 3}, {Duration: time.Second, Users: 0}}}
	rampRate := load.Group{Name: "rr", Model: load.Ramp, Requests: reqs(),
		Stages: []load.Stage{{Duration: time.Second, Rate: 100}, {Duration: time.Second, Rate: 0.5}}}
	prealloc := open
	prealloc.Preallocate, prealloc.MaxInFlight = 10, 21
	dials := closed
	dials.MaxDials = 3
	with := func(g load.Group, f func(*load.Group)) load.Group {
		g.Stages = slices.Clone(g.Stages)
		f(&g)
		return g
	}

	for _, tc := range []struct {
		why   string
		g     load.Group
		n     int
		want  func(p load.Group) int // the integer share to check against shares, if any
		share []int
		err   string // substring of the error; "" means it splits
	}{
		{why: "closed: 10 users among 3 is 4+3+3, the first gets the remainder", g: closed, n: 3,
			want: func(p load.Group) int { return p.Users }, share: []int{4, 3, 3}},
		{why: "closed: one generator gets it all", g: closed, n: 1,
			want: func(p load.Group) int { return p.Users }, share: []int{10}},
		{why: "closed: 10 users among 10 generators, one each", g: closed, n: 10,
			want: func(p load.Group) int { return p.Users }, share: slices.Repeat([]int{1}, 10)},
		{why: "closed: fewer users than generators leaves a generator idle", g: closed, n: 11,
			err: "users 10 cannot be split among 11 generators"},
		{why: "burst: 5 among 2 is 3+2", g: burst, n: 2,
			want: func(p load.Group) int { return p.Burst }, share: []int{3, 2}},
		{why: "burst smaller than the generators", g: with(burst, func(g *load.Group) { g.Burst = 1 }), n: 2,
			err: "burst 1 cannot be split among 2 generators"},
		{why: "open: the rate splits evenly (checked below), with staggered starts", g: open, n: 3},
		{why: "open: under one request per generator cannot be shared",
			g: with(open, func(g *load.Group) { g.Rate, g.Duration = 1, time.Second }), n: 2,
			err: "0.50 requests per generator"},
		{why: "ramp of users: every stage split, peak 10 >= 4 generators", g: rampUsers, n: 4},
		{why: "ramp of users peaking below the generators",
			g: with(rampUsers, func(g *load.Group) { g.Stages[0].Users = 3 }), n: 4,
			err: "the ramp peaks at 3 users, fewer than the 4 generators"},
		{why: "ramp of rates: every stage's rate split, even a small one", g: rampRate, n: 4},
		{why: "preallocate and max_in_flight split the same way", g: prealloc, n: 4,
			want: func(p load.Group) int { return p.Preallocate }, share: []int{3, 3, 2, 2}},
		{why: "preallocate below the generators", g: with(prealloc, func(g *load.Group) { g.Preallocate, g.MaxInFlight = 3, 0 }), n: 4,
			err: "preallocate 3 cannot be split among 4 generators"},
		{why: "max_in_flight below the generators", g: with(open, func(g *load.Group) { g.MaxInFlight = 2 }), n: 3,
			err: "max_in_flight 2 cannot be split among 3 generators"},
		{why: "max_dials never drops below one connect at a time", g: dials, n: 4,
			want: func(p load.Group) int { return p.MaxDials }, share: []int{1, 1, 1, 1}},
		{why: "zero generators", g: closed, n: 0, err: "need at least one"},
		{why: "an invalid group is refused with load's own reason", g: with(closed, func(g *load.Group) { g.Duration = 0 }), n: 2,
			err: "closed model needs a duration"},
	} {
		parts, err := Split(tc.g, tc.n)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one containing %q", tc.why, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.why, err)
			continue
		}
		if len(parts) != tc.n {
			t.Errorf("%s: %d parts, want %d", tc.why, len(parts), tc.n)
			continue
		}
		if tc.want != nil {
			var got []int
			for _, p := range parts {
				got = append(got, tc.want(p))
			}
			if !slices.Equal(got, tc.share) {
				t.Errorf("%s: shares %v, want %v", tc.why, got, tc.share)
			}
		}
		checkSplit(t, tc.why, tc.g, parts)
	}
}

// checkSplit asserts what every split must keep: each part is a valid
// group, and the parts add up to the whole.
func checkSplit(t *testing.T, why string, g load.Group, parts []load.Group) {
	t.Helper()
	var users, burst, prealloc, inflight int
	var rate float64
	stageUsers := make([]int, len(g.Stages))
	stageRate := make([]float64, len(g.Stages))
	for i, p := range parts {
		if err := (load.Plan{Target: "http://127.0.0.1:1", Groups: []load.Group{p}}).Validate(); err != nil {
			t.Errorf("%s: part %d is not a valid group: %v", why, i, err)
		}
		if p.Name != g.Name || p.Model != g.Model || p.Duration != g.Duration || len(p.Requests) != len(g.Requests) {
			t.Errorf("%s: part %d changed name, model, duration or requests: %+v", why, i, p)
		}
		if p.MaxInFlight > 0 && p.MaxInFlight < p.Preallocate {
			t.Errorf("%s: part %d has max_in_flight %d below preallocate %d", why, i, p.MaxInFlight, p.Preallocate)
		}
		users += p.Users
		burst += p.Burst
		prealloc += p.Preallocate
		inflight += p.MaxInFlight
		rate += p.Rate
		for j, s := range p.Stages {
			stageUsers[j] += s.Users
			stageRate[j] += s.Rate
		}
		if g.Model == load.Open {
			// Generator i starts i/Rate after the group: the merged
			// sends are evenly spaced, 1/Rate apart.
			if want := g.Start + time.Duration(float64(i)/g.Rate*1e9); p.Start != want {
				t.Errorf("%s: part %d starts at %v, want %v", why, i, p.Start, want)
			}
		} else if p.Start != g.Start {
			t.Errorf("%s: part %d starts at %v, want %v like the group", why, i, p.Start, g.Start)
		}
	}
	closeTo := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	if users != g.Users || burst != g.Burst || prealloc != g.Preallocate || inflight != g.MaxInFlight || !closeTo(rate, g.Rate) {
		t.Errorf("%s: parts sum to users %d burst %d preallocate %d max_in_flight %d rate %g, want %d %d %d %d %g",
			why, users, burst, prealloc, inflight, rate, g.Users, g.Burst, g.Preallocate, g.MaxInFlight, g.Rate)
	}
	for j, s := range g.Stages {
		if stageUsers[j] != s.Users || !closeTo(stageRate[j], s.Rate) {
			t.Errorf("%s: stage %d parts sum to users %d rate %g, want %d %g", why, j+1, stageUsers[j], stageRate[j], s.Users, s.Rate)
		}
	}
}

// Split must not share the group's slices with its parts: one part's
// stages changing would change the others'.
func TestSplitCopies(t *testing.T) {
	g := load.Group{Name: "r", Model: load.Ramp, Requests: reqs(), Stages: []load.Stage{{Duration: time.Second, Users: 4}}}
	parts, err := Split(g, 2)
	if err != nil {
		t.Fatal(err)
	}
	parts[0].Stages[0].Users = 99
	if parts[1].Stages[0].Users != 2 || g.Stages[0].Users != 4 {
		t.Errorf("parts share stages: part 2 has %d users, the group %d", parts[1].Stages[0].Users, g.Stages[0].Users)
	}
}

func TestSplitPlanSeeds(t *testing.T) {
	p := load.Plan{Target: "http://127.0.0.1:1", Seed: 42, Groups: []load.Group{
		{Name: "a", Model: load.Closed, Users: 4, Duration: time.Second, Requests: reqs()},
		{Name: "b", Model: load.Burst, Burst: 3, Requests: reqs()},
	}}
	plans, err := splitPlan(p, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range plans {
		if q.Seed != 42+int64(i) || q.Target != p.Target || len(q.Groups) != 2 || q.Groups[0].Name != "a" || q.Groups[1].Name != "b" {
			t.Errorf("generator %d: plan %+v, want seed %d, the target and groups a, b in order", i, q, 42+i)
		}
	}
	p.Groups[1].Burst = 2
	if _, err := splitPlan(p, 3); err == nil || !strings.Contains(err.Error(), "group b: burst 2") {
		t.Errorf("a plan whose second group cannot be split: %v, want an error naming group b", err)
	}
}
