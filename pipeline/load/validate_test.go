package load

import (
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	ok := Group{Model: Closed, Users: 1, Duration: time.Second, Requests: get("/")}
	with := func(f func(*Group)) []Group { g := ok; f(&g); return []Group{g} }
	for _, tc := range []struct {
		why    string
		target string
		groups []Group
		want   string // substring of the error; "" = valid
	}{
		{"a minimal closed plan is valid", "http://127.0.0.1:8080", []Group{ok}, ""},
		{"a target path prefix is allowed", "http://127.0.0.1:8080/api/", []Group{ok}, ""},
		{"no scheme: the usual typo", "127.0.0.1:8080", []Group{ok}, "write it as http://HOST:PORT"},
		{"TLS is out of scope", "https://127.0.0.1", []Group{ok}, "only plain http://"},
		{"port out of range", "http://127.0.0.1:70000", []Group{ok}, "1..65535"},
		{"nothing to run", "http://127.0.0.1", nil, "no groups"},
		{"zero users", "http://127.0.0.1", with(func(g *Group) { g.Users = 0 }), "users > 0"},
		{"closed without duration", "http://127.0.0.1", with(func(g *Group) { g.Duration = 0 }), "duration > 0"},
		{"inverted think range", "http://127.0.0.1", with(func(g *Group) { g.ThinkMin = 2; g.ThinkMax = 1 }), "think_min <= think_max"},
		{"open with rate 0", "http://127.0.0.1", with(func(g *Group) { g.Model = Open; g.Rate = 0 }), "needs a rate"},
		{"burst of nothing", "http://127.0.0.1", with(func(g *Group) { g.Model = Burst }), "burst > 0"},
		{"ramp of users and rate at once", "http://127.0.0.1", with(func(g *Group) {
			g.Model = Ramp
			g.Stages = []Stage{{Duration: time.Second, Users: 1, Rate: 1}}
		}), "either users (closed) or rate (open)"},
		{"ramp stage without duration", "http://127.0.0.1", with(func(g *Group) {
			g.Model = Ramp
			g.Stages = []Stage{{Users: 1}}
		}), "stage 1: duration"},
		{"unknown model", "http://127.0.0.1", with(func(g *Group) { g.Model = "poisson" }), `unknown model "poisson"`},
		{"negative start", "http://127.0.0.1", with(func(g *Group) { g.Start = -1 }), "start is negative"},
		{"no requests", "http://127.0.0.1", with(func(g *Group) { g.Requests = nil }), "no requests"},
		{"relative path", "http://127.0.0.1", with(func(g *Group) { g.Requests = get("io") }), "must start with /"},
		{"bad template", "http://127.0.0.1", with(func(g *Group) { g.Requests = get("/{random 5..1}") }), "0 <= A <= B"},
		{"header injection", "http://127.0.0.1", with(func(g *Group) {
			g.Requests = []Request{{Path: "/", Headers: map[string]string{"X": "a\r\nEvil: 1"}}}
		}), "line break"},
		{"duplicate names", "http://127.0.0.1", []Group{{Name: "a", Model: Burst, Burst: 1, Requests: get("/")},
			{Name: "a", Model: Burst, Burst: 1, Requests: get("/")}}, "name used twice"},
	} {
		err := Plan{Target: tc.target, Groups: tc.groups}.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.why, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.why, err, tc.want)
		case err != nil && (strings.Contains(err.Error(), "\n") || err.Error()[0] >= 'A' && err.Error()[0] <= 'Z'):
			t.Errorf("%s: error %q should be one lowercase line", tc.why, err)
		}
	}
}
