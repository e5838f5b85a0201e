package load

import (
	"context"
	"math"
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
		{"credentials in the URL were dropped and echoed", "http://user:secret@127.0.0.1:8080", []Group{ok}, "user:password@ in the URL is not sent"},
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
		{"a century of load (threadlab load --duration 876000h)", "http://127.0.0.1", with(func(g *Group) { g.Duration = 876000 * time.Hour }), "duration 876000h0m0s is longer than 1h0m0s"},
		{"an hour is the limit, as in a manifest", "http://127.0.0.1", with(func(g *Group) { g.Duration = time.Hour }), ""},
		{"a start past the limit", "http://127.0.0.1", with(func(g *Group) { g.Start = 2 * time.Hour }), "start 2h0m0s is longer"},
		{"a ramp stage past the limit", "http://127.0.0.1", with(func(g *Group) {
			g.Model = Ramp
			g.Stages = []Stage{{Duration: 61 * time.Minute, Users: 1}}
		}), "stage 1: duration 1h1m0s is longer"},
		{"more users than a manifest allows", "http://127.0.0.1", with(func(g *Group) { g.Users = MaxUsers + 1 }), "more than 1000000"},
		{"more groups than a manifest allows (each 140 KB of histograms up front)", "http://127.0.0.1", func() []Group {
			gs := make([]Group, MaxGroups+1)
			for i := range gs {
				gs[i] = ok
				gs[i].Name = "g" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26)
			}
			return gs
		}(), "more than 1000"},
		{"release_at on a closed group", "http://127.0.0.1", with(func(g *Group) { g.ReleaseAt = time.Second }), "release_at applies to a burst"},
		{"negative release_at", "http://127.0.0.1", with(func(g *Group) { g.Model = Burst; g.Burst = 1; g.ReleaseAt = -1 }), "release_at is negative"},
		{"no requests", "http://127.0.0.1", with(func(g *Group) { g.Requests = nil }), "no requests"},
		{"relative path", "http://127.0.0.1", with(func(g *Group) { g.Requests = get("io") }), "must start with /"},
		{"bad template", "http://127.0.0.1", with(func(g *Group) { g.Requests = get("/{random 5..1}") }), "0 <= A <= B"},
		{"header injection", "http://127.0.0.1", with(func(g *Group) {
			g.Requests = []Request{{Path: "/", Headers: map[string]string{"X": "a\r\nEvil: 1"}}}
		}), "line break"},
		{"CR LF before a template: only the text after the last {random} used to be checked", "http://127.0.0.1", with(func(g *Group) {
			g.Requests = get("/a\r\nX-Evil: 1\r\n/{random 1..5}")
		}), "holds control character"},
		{"CR LF with no template at all", "http://127.0.0.1", with(func(g *Group) { g.Requests = get("/a\nX-Evil: 1") }), "holds control character"},
		{"NUL in a path", "http://127.0.0.1", with(func(g *Group) { g.Requests = get("/a\x00b") }), "holds control character"},
		{"line break inside a template", "http://127.0.0.1", with(func(g *Group) { g.Requests = get("/{random\r\n1..5}") }), "holds control character"},
		{"space in a literal before a template", "http://127.0.0.1", with(func(g *Group) { g.Requests = get("/a b/{random 1..5}") }), "holds a space at byte 2"},
		{"a template range whose width overflows int64", "http://127.0.0.1", with(func(g *Group) {
			g.Requests = get("/{random 0..9223372036854775807}")
		}), "B <= 1000000000000000000"},
		{"method with a space smuggles a request line", "http://127.0.0.1", with(func(g *Group) {
			g.Requests = []Request{{Method: "GET / HTTP/1.1\r\nX:", Path: "/"}}
		}), "not an HTTP token"},
		{"header name with a colon", "http://127.0.0.1", with(func(g *Group) {
			g.Requests = []Request{{Path: "/", Headers: map[string]string{"X-A: b": "c"}}}
		}), "not an HTTP token"},
		{"header value with a bare NUL", "http://127.0.0.1", with(func(g *Group) {
			g.Requests = []Request{{Path: "/", Headers: map[string]string{"X": "a\x00"}}}
		}), "control character"},
		{"tab in a header value is allowed (RFC 9110 field-value)", "http://127.0.0.1", with(func(g *Group) {
			g.Requests = []Request{{Path: "/", Headers: map[string]string{"X": "a\tb"}}}
		}), ""},
		{"rate NaN compares false with everything and used to pass", "http://127.0.0.1", with(func(g *Group) { g.Model = Open; g.Rate = math.NaN() }), "needs a rate"},
		{"rate +Inf", "http://127.0.0.1", with(func(g *Group) { g.Model = Open; g.Rate = math.Inf(1) }), "needs a rate"},
		{"ramp stage rate NaN", "http://127.0.0.1", with(func(g *Group) {
			g.Model = Ramp
			g.Stages = []Stage{{Duration: time.Second, Rate: 1}, {Duration: time.Second, Rate: math.NaN()}}
		}), "stage 2"},
		{"two weights of 2^63-1 overflow the sum (rand.IntN panicked)", "http://127.0.0.1", with(func(g *Group) {
			g.Requests = []Request{{Path: "/a", Weight: math.MaxInt64}, {Path: "/b", Weight: math.MaxInt64}}
		}), "weights add up to more than"},
		{"weights summing just past the cap", "http://127.0.0.1", with(func(g *Group) {
			g.Requests = []Request{{Path: "/a", Weight: 999_999}, {Path: "/b", Weight: 2}}
		}), "request 2: weights add up"},
		{"weights at the cap are fine", "http://127.0.0.1", with(func(g *Group) {
			g.Requests = []Request{{Path: "/a", Weight: 999_999}, {Path: "/b", Weight: 1}}
		}), ""},
		{"negative weight", "http://127.0.0.1", with(func(g *Group) { g.Requests = []Request{{Path: "/", Weight: -1}} }), "negative"},
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

// TestHugeWeightsDoNotPanic: two weights of 2^63-1 used to overflow the
// mix total, and rand.IntN panicked on the first pick, mid-run.
func TestHugeWeightsDoNotPanic(t *testing.T) {
	p := Plan{Target: "http://127.0.0.1:1", Groups: []Group{{Model: Burst, Burst: 1,
		Requests: []Request{{Path: "/a", Weight: math.MaxInt64}, {Path: "/b", Weight: math.MaxInt64}}}}}
	res, err := Run(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "weights add up to more than") {
		t.Fatalf("Run = %v, %v: want a weights error before anything is sent", res, err)
	}
}

// TestExportedValidators: the manifest loader calls these to report bad
// methods, paths and headers with file and line before anything starts,
// and buildWire applies the same ones (FuzzRequest holds the two together).
func TestExportedValidators(t *testing.T) {
	for _, tc := range []struct {
		why  string
		err  error
		want string // "" = valid
	}{
		{"GET is a token", CheckMethod("GET"), ""},
		{"a custom method is a token too (RFC 9110 9.1)", CheckMethod("PURGE"), ""},
		{"empty method", CheckMethod(""), "not an HTTP token"},
		{"method with CRLF", CheckMethod("GET\r\n"), "not an HTTP token"},
		{"method with a space", CheckMethod("GET /x"), "not an HTTP token"},
		{"plain path", CheckPath("/io?x=1&y=%20"), ""},
		{"templated path", CheckPath("/orders/{random 1..100}?q={random 0..9}"), ""},
		{"relative path", CheckPath("io"), "must start with /"},
		{"LF early in a templated path", CheckPath("/x\n/{random 1..2}"), "holds control character"},
		{"raw UTF-8 must be percent-encoded", CheckPath("/caf\u00e9"), "percent-encode"},
		{"DEL", CheckPath("/a\x7f"), "holds control character"},
		{"unclosed template", CheckPath("/{random 1..2"), "unclosed"},
		{"stray }", CheckPath("/a}"), "'}'"},
		{"a stray % is rejected by servers with 400 (found by FuzzRequest)", CheckPath("/a%zz"), "% must start an escape"},
		{"% at the very end", CheckPath("/100%"), "% must start an escape"},
		{"escapes are fine", CheckPath("/a%2Fb%c3%a9/{random 1..2}%20"), ""},
		{"header ok", CheckHeader("X-Trace-Id", "abc 123"), ""},
		{"obs-text in a value is allowed", CheckHeader("X", "caf\xc3\xa9"), ""},
		{"header name empty", CheckHeader("", "x"), "not an HTTP token"},
		{"header name with a space", CheckHeader("X Y", "x"), "not an HTTP token"},
		{"header value with CR", CheckHeader("X", "a\rb"), "control character"},
		{"header value with LF", CheckHeader("X", "a\nEvil: 1"), "control character"},
		{"Host is the generator's", CheckHeader("host", "x"), "set by the generator"},
		{"so is Content-Length, in any case", CheckHeader("CONTENT-LENGTH", "1"), "set by the generator"},
		{"Connection: close reconnected every request under a keep-alive summary", CheckHeader("connection", "close"), "keepalive: false"},
		{"and Transfer-Encoding: a second framing would smuggle a request", CheckHeader("Transfer-Encoding", "chunked"), "set by the generator"},
		{"a fragment is never sent", CheckPath("/x#y"), "fragment"},
		{"// would name another host", CheckPath("//evil/x"), "would name another host"},
	} {
		switch {
		case tc.want == "" && tc.err != nil:
			t.Errorf("%s: unexpected error %v", tc.why, tc.err)
		case tc.want != "" && (tc.err == nil || !strings.Contains(tc.err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.why, tc.err, tc.want)
		}
	}
}
