package experiments

import "testing"

func TestAOTCacheNormalized(t *testing.T) {
	off, on := false, true
	tests := []struct {
		name string
		in   *bool
		want bool
		why  string
	}{
		{"unset", nil, false, "nil means off until aot-cache.yaml has a published verdict, made explicit so the saved manifest says so"},
		{"on", &on, true, "aot_cache: true starts every built-in target from its cache"},
		{"off", &off, false, "aot_cache: false turns the cache off for the whole run"},
	}
	for _, tt := range tests {
		m := &Manifest{AOTCache: tt.in}
		m.normalizeAOT()
		if m.AOTCache == nil || *m.AOTCache != tt.want || m.AOT() != tt.want {
			t.Errorf("%s: got %v, want explicit %v (%s)", tt.name, m.AOTCache, tt.want, tt.why)
		}
	}
}
