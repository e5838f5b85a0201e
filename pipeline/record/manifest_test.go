package record

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestParseManifestInfo(t *testing.T) {
	tests := []struct {
		why     string
		yaml    string
		want    ManifestInfo
		wantErr bool
	}{
		{"a fixed warm-up is written as a duration", "load: {warmup: 2s}\n",
			info(nil, WarmupInfo{Min: 2 * time.Second, Max: 2 * time.Second}, ""), false},
		{"until steady is a mapping", "load:\n  warmup: {min: 5s, max: 1m, until: steady}\n",
			info(nil, WarmupInfo{Min: 5 * time.Second, Max: time.Minute, Until: "steady"}, ""), false},
		{"variants keep the manifest's order, a command variant has no target",
			"variants:\n  virtual: {target: spring-mvc}\n  own: {command: [srv]}\n  platform: {target: spring-webflux}\ncooldown: {iteration: 10s}\n",
			info(VariantInfos{{"virtual", "spring-mvc"}, {"own", ""}, {"platform", "spring-webflux"}}, WarmupInfo{}, "10s"), false},
		{"keys of today's schema that this reader does not know are ignored", "trials: 5\nclaims: [{id: x}]\nvariants: {a: {target: spring-mvc, jvm: [-Xmx1g]}}\n",
			info(VariantInfos{{"a", "spring-mvc"}}, WarmupInfo{}, ""), false},
		{"a field of another type: the error, and the rest still read", "load: {warmup: soon}\nvariants: {a: {target: spring-mvc}}\n",
			info(VariantInfos{{"a", "spring-mvc"}}, WarmupInfo{}, ""), true},
		{"a variant that does not decode keeps its name", "variants: {a: {target: [x, y]}, b: {target: spring-mvc}}\n",
			info(VariantInfos{{"a", ""}, {"b", "spring-mvc"}}, WarmupInfo{}, ""), true},
		{"not YAML at all", "\t:::\n", ManifestInfo{}, true},
	}
	for _, tt := range tests {
		got, err := ParseManifestInfo([]byte(tt.yaml))
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: error %v, want error %v", tt.why, err, tt.wantErr)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.why, got, tt.want)
		}
	}
}

func info(vs VariantInfos, w WarmupInfo, iteration string) ManifestInfo {
	var mi ManifestInfo
	mi.Variants, mi.Load.Warmup, mi.CoolDown.Iteration = vs, w, iteration
	return mi
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
