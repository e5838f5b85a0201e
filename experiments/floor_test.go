package experiments

import (
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/measure/load"
)

// floorManifest is a small burst manifest whose platform variant gets the
// given floor (a YAML flow mapping) and whose mix is path.
func floorManifest(floor, path, model string) string {
	load := "  model: burst\n  burst: 600\n"
	if model == "closed" {
		load = "  model: closed\n  users: 10\n  duration: 2s\n"
	}
	return `name: demo
title: A demo
question: Does it work?
variants:
  platform: {target: spring-mvc, floor: ` + floor + `}
  own: {command: [./server, --port, "{port}"], ready: /health}
load:
` + load + `  requests: [{path: "` + path + `"}]
  warmup: 1s
forks: 3
`
}

func TestFloorValidation(t *testing.T) {
	for _, c := range []struct {
		why, floor, path, model string
		want                    string // a substring of the one problem; "" for none
	}{
		{"parallel over /io waits: derivable", "{parallel: 200}", "/io?ms=300", "burst", ""},
		{"a stated wall", "{wall: 900ms}", "/cpu", "burst", ""},
		{"both", "{parallel: 200, wall: 1s}", "/io?ms=300", "burst", ""},
		{"parallel without a known wait", "{parallel: 200}", "/cpu", "burst", "variants.platform.floor.parallel: needs the wait of every request"},
		{"negative parallel", "{parallel: -1}", "/io?ms=300", "burst", "variants.platform.floor.parallel: must not be negative"},
		{"negative wall", "{wall: -1s}", "/io?ms=300", "burst", "variants.platform.floor.wall: must not be negative"},
		{"a typo of hours", "{wall: 900s}", "/io?ms=300", "burst", "longer than the 10m0s allowed"},
		{"empty", "{}", "/io?ms=300", "burst", "variants.platform.floor: is empty"},
		{"not a burst", "{wall: 900ms}", "/io?ms=300", "closed", "the measured group's model is closed"},
		{"an unknown key is refused (strict)", "{paralel: 200}", "/io?ms=300", "burst", "paralel"},
	} {
		_, err := Parse("demo.yaml", []byte(floorManifest(c.floor, c.path, c.model)), "")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.why, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one saying %q", c.why, err, c.want)
		}
	}
}

func TestDesign(t *testing.T) {
	m, err := Parse("demo.yaml", []byte(floorManifest("{parallel: 200}", "/io?ms=300", "burst")), "")
	if err != nil {
		t.Fatal(err)
	}
	g := load.Group{Name: m.Load.Measure, Model: load.Burst, Burst: 600, Requests: []load.Request{{Path: "/io?ms=300"}}}
	// platform: the floor and the wait; own (a command): neither its wait
	// (its /io is not ours) nor a floor; another group: the wait only.
	d := m.Design(m.Variants[0], g)
	if d.Wait != 300*time.Millisecond || d.Parallel != 200 {
		t.Errorf("platform: %+v, want wait 300ms and parallel 200", d)
	}
	if f, _ := d.Floor(600); f != 900*time.Millisecond {
		t.Errorf("platform: floor %v, want 900ms (3 waves of 300 ms)", f)
	}
	if d := m.Design(m.Variants[1], g); d.Wait != 0 || d.Parallel != 0 {
		t.Errorf("command variant: %+v, want no design (its endpoints are its own)", d)
	}
	g.Name = "background"
	if d := m.Design(m.Variants[0], g); d.Wait != 300*time.Millisecond || d.Parallel != 0 {
		t.Errorf("platform, another group: %+v, want the wait only (the floor bounds the measured burst)", d)
	}
	if m.Noise.MaxReleaseSpread != DefaultMaxReleaseSpread {
		t.Errorf("noise.max_release_spread defaults to %v, want %v", m.Noise.MaxReleaseSpread, DefaultMaxReleaseSpread)
	}
}

func TestLintFloors(t *testing.T) {
	src := strings.Replace(floorManifest("{parallel: 200}", "/io?ms=300", "burst"),
		"floor: {parallel: 200}", "floor: {parallel: 200}, properties: {server.tomcat.threads.max: \"100\"}", 1)
	m, err := Parse("demo.yaml", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	var hit bool
	for _, w := range Lint(m) {
		if w.Field == "variants.platform.floor.parallel" && strings.Contains(w.Msg, "server.tomcat.threads.max=100") {
			hit = true
		}
	}
	if !hit {
		t.Errorf("lint: no warning that floor.parallel 200 disagrees with server.tomcat.threads.max=100: %v", Lint(m))
	}
}

func TestReleaseSpreadValidation(t *testing.T) {
	src := floorManifest("{parallel: 200}", "/io?ms=300", "burst") + "noise: {max_release_spread: -1ms}\n"
	if _, err := Parse("demo.yaml", []byte(src), ""); err == nil || !strings.Contains(err.Error(), "noise.max_release_spread: must not be negative") {
		t.Errorf("a negative bound: error %v, want one naming noise.max_release_spread", err)
	}
}
