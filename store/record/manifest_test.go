package record

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestParseManifestInfo(t *testing.T) {
	tests := []struct {
		why     string
		yaml    string
		want    ManifestInfo
		keys    []string // the top-level keys in Keys, sorted; nil for a nil Keys
		wantErr bool
	}{
		{"a fixed warm-up is written as a duration", "load: {warmup: 2s}\n",
			info(nil, WarmupInfo{Min: 2 * time.Second, Max: 2 * time.Second, Text: "2s"}, ""), []string{"load"}, false},
		{"until steady is a mapping; the text keeps the durations as written", "load:\n  warmup: {min: 5s, max: 1m, until: steady}\n",
			info(nil, WarmupInfo{Min: 5 * time.Second, Max: time.Minute, Until: "steady", Text: "until steady, 5s to 1m"}, ""), []string{"load"}, false},
		{"warmup.also is named in the text", "load:\n  warmup: {min: 5s, max: 90s, until: steady, also: [target_cpu_s]}\n",
			info(nil, WarmupInfo{Min: 5 * time.Second, Max: 90 * time.Second, Until: "steady", Text: "until steady, 5s to 90s, also in target_cpu_s"}, ""), []string{"load"}, false},
		{"variants keep the manifest's order, a command variant has no target",
			"variants:\n  virtual: {target: spring-mvc}\n  own: {command: [srv], describe: my server}\n  platform: {target: spring-webflux}\ncooldown: {iteration: 10s}\n",
			info(VariantInfos{{Name: "virtual", Target: "spring-mvc"}, {Name: "own", Command: []string{"srv"}, Describe: "my server"}, {Name: "platform", Target: "spring-webflux"}}, WarmupInfo{}, "10s"),
			[]string{"cooldown", "variants"}, false},
		{"keys this reader does not know are ignored, and still listed in Keys", "telemetry: {every: 1s}\nvariants: {a: {target: spring-mvc, jvm: [-Xmx1g]}}\n",
			info(VariantInfos{{Name: "a", Target: "spring-mvc"}}, WarmupInfo{}, ""), []string{"telemetry", "variants"}, false},
		{"a field of another type: the error, and the rest still read", "load: {warmup: soon}\nvariants: {a: {target: spring-mvc}}\n",
			info(VariantInfos{{Name: "a", Target: "spring-mvc"}}, WarmupInfo{Text: "soon"}, ""), []string{"load", "variants"}, true},
		{"a variant that does not decode keeps its name", "variants: {a: {target: [x, y]}, b: {target: spring-mvc}}\n",
			info(VariantInfos{{Name: "a"}, {Name: "b", Target: "spring-mvc"}}, WarmupInfo{}, ""), []string{"variants"}, true},
		{"a sweep keeps its order; values that are not a list keep the key", "sweep: {users: {values: [1, 10]}, pool: {values: 8}, jdk: {values: [21]}}\n",
			func() ManifestInfo {
				var mi ManifestInfo
				mi.Sweep = SweepInfos{{Key: "users", Values: []string{"1", "10"}}, {Key: "pool"}, {Key: "jdk", Values: []string{"21"}}}
				return mi
			}(), []string{"sweep"}, false},
		{"an empty manifest has no keys, but is a mapping", "# nothing\n", ManifestInfo{}, []string{}, false},
		{"a list is not a manifest: no Keys", "- a\n- b\n", ManifestInfo{}, nil, true},
		{"not YAML at all", "\t:::\n", ManifestInfo{}, nil, true},
	}
	for _, tt := range tests {
		got, err := ParseManifestInfo([]byte(tt.yaml))
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: error %v, want error %v", tt.why, err, tt.wantErr)
		}
		var keys []string
		if got.Keys != nil {
			keys = append([]string{}, slices.Sorted(maps.Keys(got.Keys))...)
		}
		if !reflect.DeepEqual(keys, tt.keys) {
			t.Errorf("%s: Keys %v, want %v", tt.why, keys, tt.keys)
		}
		got.Keys = nil
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.why, got, tt.want)
		}
	}
}

// TestParseManifestInfoWhole: every field the readers use, from one
// manifest as run of today's schema.
func TestParseManifestInfoWhole(t *testing.T) {
	const y = `name: x
title: X
question: Q?
source: seeds/001.md
notes: n
headline: h
trials: 5
iterations: 3
retries: 2
order: sequential
fresh_jvm: false
noise: {max_outside_pct: 7.5}
load:
  model: open
  rate: 100
  think: [1s, 2s]
  keepalive: false
  preallocate: 10
  measure: probe
  groups:
    - {name: probe, model: burst, burst: 50, stages: [{duration: 5s, users: 3}], requests: [{method: POST, path: /a}]}
cooldown: {max_busy_pct: 20, max_wait: 1m, pause: 2s, iteration: 10s}
pinning: {target: "0", services: "1", generator: "1"}
claims:
  - id: c1
    check: {metric: rps, group: probe}
    seed: {value: 2.5, from: "001", point: rps}
  - id: c2
`
	mi, err := ParseManifestInfo([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	no := false
	g := mi.Load.Groups
	for _, c := range []struct {
		why string
		ok  bool
	}{
		{"the texts", mi.Name == "x" && mi.Title == "X" && mi.Question == "Q?" && mi.Source == "seeds/001.md" && mi.Notes == "n" && mi.Headline == "h"},
		{"the design", mi.Trials == 5 && mi.Iterations == 3 && mi.Retries != nil && *mi.Retries == 2 && mi.Order == "sequential" && mi.FreshJVM != nil && *mi.FreshJVM == no},
		{"the noise gate", mi.Noise.MaxOutsidePct != nil && *mi.Noise.MaxOutsidePct == 7.5},
		{"load's own group, inline", mi.Load.Model == "open" && mi.Load.Rate == 100 && reflect.DeepEqual(mi.Load.Think, []string{"1s", "2s"}) && mi.Load.KeepAlive != nil && !*mi.Load.KeepAlive && mi.Load.Preallocate == 10},
		{"the measured group", mi.Load.Measure == "probe"},
		{"a listed group", len(g) == 1 && g[0].Name == "probe" && g[0].Burst == 50 && len(g[0].Stages) == 1 && g[0].Stages[0].Users == 3 && g[0].Stages[0].Duration == "5s" && len(g[0].Requests) == 1 && g[0].Requests[0].Method == "POST"},
		{"cooldown", mi.CoolDown.MaxBusyPct == 20 && mi.CoolDown.MaxWait == "1m" && mi.CoolDown.Pause == "2s" && mi.CoolDown.Iteration == "10s"},
		{"pinning", mi.Pinning.Target == "0" && mi.Pinning.Services == "1" && mi.Pinning.Generator == "1"},
		{"claims, their checks as YAML and their seeds", len(mi.Claims) == 2 && mi.Claims[0].ID == "c1" && mi.Claims[0].Check.Kind == yaml.MappingNode &&
			mi.Claims[0].Seed != nil && *mi.Claims[0].Seed.Value == 2.5 && mi.Claims[0].Seed.From == "001" && mi.Claims[0].Seed.Point == "rps" &&
			mi.Claims[1].ID == "c2" && mi.Claims[1].Check.Kind == 0 && mi.Claims[1].Seed == nil},
	} {
		if !c.ok {
			t.Errorf("%s: not read as written; got %+v", c.why, mi)
		}
	}
}

func TestWarmupInfoSteady(t *testing.T) {
	if (WarmupInfo{Min: time.Second, Until: "steady"}).Steady() != true || (WarmupInfo{Min: time.Second}).Steady() {
		t.Error("Steady: want true for until: steady only")
	}
}

func TestReadManifestInfo(t *testing.T) {
	dir := t.TempDir()
	if mi, err := ReadManifestInfo(dir); err != nil || !reflect.DeepEqual(mi, ManifestInfo{}) {
		t.Errorf("a run without manifest.yaml: got %+v, %v; want the zero value and no error", mi, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), []byte("cooldown: {iteration: 3s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if mi, err := ReadManifestInfo(dir); err != nil || mi.CoolDown.Iteration != "3s" {
		t.Errorf("manifest.yaml with a pause between iterations: got %+v, %v", mi, err)
	}
}

func info(vs VariantInfos, w WarmupInfo, iteration string) ManifestInfo {
	var mi ManifestInfo
	mi.Variants, mi.Load.Warmup, mi.CoolDown.Iteration = vs, w, iteration
	return mi
}
