package experiments

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/measure/load"
)

// openValid is seed 002's fixed-rate shape written as k6 runs it: an open
// arrival rate whose connections are all open before the first send.
const openValid = `name: demo
title: A demo
question: Does it work?
variants:
  platform: {target: spring-mvc}
load:
  model: open
  rate: 200
  preallocate: 200
  duration: 2s
  requests: [{path: "/io?ms=10"}]
  warmup: 1s
trials: 3
profiles:
  smoke: {trials: 2, load: {rate: 50, preallocate: 50}}
`

// TestPreallocateAccepted: the field reaches the generator's group on the
// models that use it, under profiles too, and survives the manifest as run.
func TestPreallocateAccepted(t *testing.T) {
	tests := []struct {
		name, reason, edit, profile string
		want                        int
	}{
		{"open", "k6's constant arrival rate with preAllocatedVUs = N", "", "", 200},
		{"smoke profile", "a profile sets its own count beside its own rate", "", "smoke", 50},
		{"ramp of rates", "a spike of arrival rates may open its connections ahead too",
			"  model: ramp\n  stages: [{duration: 1s, rate: 100}, {duration: 1s, rate: 200}]\n  preallocate: 200\n", "", 200},
		{"max_in_flight above it", "a cap above the preallocated connections lets more be dialled as needed",
			"  model: open\n  rate: 200\n  max_in_flight: 400\n  preallocate: 200\n  duration: 2s\n", "", 200},
		{"left out", "0 is the default: dial as sends need them",
			"  model: open\n  rate: 200\n  duration: 2s\n", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := openValid
			if tt.edit != "" {
				src = strings.Replace(src, "  model: open\n  rate: 200\n  preallocate: 200\n  duration: 2s\n", tt.edit, 1)
			}
			m, err := Parse("demo.yaml", []byte(src), tt.profile)
			if err != nil {
				t.Fatalf("%s: refused: %v", tt.reason, err)
			}
			groups, err := m.LoadGroups(m.Variants[0], nil)
			if err != nil {
				t.Fatal(err)
			}
			if groups[0].Preallocate != tt.want {
				t.Errorf("%s: the generator's group has Preallocate %d, want %d", tt.reason, groups[0].Preallocate, tt.want)
			}
			if err := load.CheckGroup(groups[0]); err != nil {
				t.Errorf("%s: the generator refuses the group: %v", tt.reason, err)
			}
			// The manifest as run keeps it, and reads back the same.
			out, err := Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if has := strings.Contains(string(out), fmt.Sprintf("preallocate: %d\n", tt.want)); has != (tt.want > 0) {
				t.Errorf("%s: manifest as run says preallocate %v:\n%s", tt.reason, has, out)
			}
			again, err := Parse("again.yaml", out, "")
			if err != nil {
				t.Fatalf("manifest as run is refused: %v\n%s", err, out)
			}
			if got := again.Measured().Preallocate; got != tt.want {
				t.Errorf("%s: round trip gives preallocate %d, want %d", tt.reason, got, tt.want)
			}
			// (A saved manifest read back does not name its profile again.)
			if out2, _ := Marshal(again); tt.profile == "" && string(out2) != string(out) {
				t.Errorf("normalizing twice changed the manifest:\n%s\n---\n%s", out, out2)
			}
		})
	}
}

// TestPreallocateProblems: each misuse is refused at its line, naming the
// field and the fix.
func TestPreallocateProblems(t *testing.T) {
	tests := []struct {
		name, reason, edit string
		want               []string
	}{
		{"negative", "a count of connections cannot be negative",
			"  model: open\n  rate: 200\n  preallocate: -3\n  duration: 2s\n",
			[]string{"demo.yaml:9:16: load.preallocate: must be a positive number of connections opened before the first send (got -3); leave it out"}},
		{"too many", "each connection is a socket and a worker: a typo must not exhaust the host",
			"  model: open\n  rate: 200\n  preallocate: 5000000\n  duration: 2s\n",
			[]string{"demo.yaml:9:16: load.preallocate: 5000000 connections is more than the 1000000 allowed"}},
		{"closed model", "closed users hold their own connections: the field would be ignored",
			"  model: closed\n  users: 200\n  preallocate: 200\n  duration: 2s\n",
			[]string{"demo.yaml:9:16: load.preallocate: the closed model does not use preallocate, so it would be ignored"}},
		{"burst model", "a burst connects its requests before the release anyway",
			"  model: burst\n  burst: 200\n  preallocate: 200\n",
			[]string{"load.preallocate: the burst model does not use preallocate"}},
		{"ramp of users", "a ramp of users holds one connection per user",
			"  model: ramp\n  stages: [{duration: 1s, users: 10}, {duration: 1s, users: 20}]\n  preallocate: 20\n",
			[]string{"demo.yaml:9:16: load.preallocate: a ramp of users holds one connection per user already", "write the stages with rate:"}},
		{"cap below it", "sends past max_in_flight would be missed while connections sit idle",
			"  model: open\n  rate: 200\n  max_in_flight: 50\n  preallocate: 200\n  duration: 2s\n",
			[]string{"demo.yaml:9:18: load.max_in_flight: 50 is below preallocate 200", "raise max_in_flight to 200 or more"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(openValid, "  model: open\n  rate: 200\n  preallocate: 200\n  duration: 2s\n", tt.edit, 1)
			src = strings.Replace(src, "  smoke: {trials: 2, load: {rate: 50, preallocate: 50}}\n", "  smoke: {trials: 2}\n", 1)
			_, err := Parse("demo.yaml", []byte(src), "")
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("%s: want Problems, got %v", tt.reason, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s:\n got: %s\nwant: %s", tt.reason, err, w)
				}
			}
			if strings.Contains(err.Error(), "the load generator refuses") {
				t.Errorf("%s: reported twice, once by the generator's own check: %s", tt.reason, err)
			}
		})
	}
}

// TestPreallocateLint: without keep-alive the preallocated connections are
// not held, which lint says; with keep-alive it says nothing about them.
func TestPreallocateLint(t *testing.T) {
	for _, tt := range []struct {
		name, reason, keepalive string
		warn                    bool
	}{
		{"keep-alive", "the connections are opened and held before the first send", "true", false},
		{"no keep-alive", "every request connects anyway: only workers are made ahead", "false", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(openValid, "  duration: 2s\n", "  duration: 2s\n  keepalive: "+tt.keepalive+"\n", 1)
			m, err := Parse("demo.yaml", []byte(src), "")
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, w := range Lint(m) {
				if w.Field == "load.preallocate" {
					found = true
					if !strings.Contains(w.Msg, "set keepalive: true") {
						t.Errorf("warning does not say how to fix it: %s", w)
					}
				}
			}
			if found != tt.warn {
				t.Errorf("%s: lint warned %v, want %v", tt.reason, found, tt.warn)
			}
		})
	}
}

// TestPreallocateHostLimit: preallocated connections count against the
// open-file limit like users do, and the problem names preallocate.
func TestPreallocateHostLimit(t *testing.T) {
	limit := load.FileLimit()
	if limit == 0 || limit >= MaxUsers {
		t.Skipf("hard open-file limit %d: no count between it and %d to test with", limit, MaxUsers)
	}
	n := int(limit) + 1
	src := strings.Replace(openValid, "preallocate: 200", fmt.Sprintf("preallocate: %d", n), 1)
	src = strings.Replace(src, "rate: 200", fmt.Sprintf("rate: %d", n), 1)
	_, err := Parse("demo.yaml", []byte(src), "")
	if err == nil || !HostOnly(err) {
		t.Fatalf("want a host-only problem, got %v", err)
	}
	if !strings.Contains(err.Error(), "demo.yaml:9:16: load.preallocate: this host allows") {
		t.Errorf("problem does not name load.preallocate at its line: %v", err)
	}
}

// TestConnectionsSweep: a connections sweep is seed 002's connections =
// requests per second: each point sets the open group's rate and its
// preallocated connections to the same N; on a closed model it is refused.
func TestConnectionsSweep(t *testing.T) {
	src := strings.Replace(openValid, "  rate: 200\n  preallocate: 200\n", "", 1) +
		"sweep:\n  users: {load: connections, values: [500, 2000]}\n"
	m, err := Parse("demo.yaml", []byte(src), "")
	if err != nil {
		t.Fatalf("a connections sweep on an open model is refused: %v", err)
	}
	for _, n := range []int{500, 2000} {
		groups, err := m.LoadGroups(m.Variants[0], map[string]string{"users": fmt.Sprint(n)})
		if err != nil {
			t.Fatal(err)
		}
		if g := groups[0]; g.Rate != float64(n) || g.Preallocate != n {
			t.Errorf("point %d: rate %g, preallocate %d; want both %d", n, g.Rate, g.Preallocate, n)
		}
		if err := load.CheckGroup(groups[0]); err != nil {
			t.Errorf("point %d: the generator refuses the group: %v", n, err)
		}
	}
	closed := strings.Replace(src, "  model: open\n", "  model: closed\n  users: 10\n", 1)
	_, err = Parse("demo.yaml", []byte(closed), "")
	if err == nil || !strings.Contains(err.Error(), "uses the closed model, which ignores connections") {
		t.Errorf("a connections sweep on a closed model: got %v, want the measured-group model error", err)
	}
}
