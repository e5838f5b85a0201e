package experiments

import (
	"strings"
	"testing"
	"time"
)

// TestWarmupForms: both forms of load.warmup decode, defaults are filled
// in one place, and the normalized manifest reads back the same.
func TestWarmupForms(t *testing.T) {
	tests := []struct {
		why      string
		warmup   string
		min, max time.Duration
		steady   bool
		written  string // how Marshal writes it
	}{
		{"a duration is a fixed warm-up", "warmup: 10s", 10 * time.Second, 10 * time.Second, false, "warmup: 10s"},
		{"until steady alone takes both defaults", "warmup: {until: steady}", DefaultWarmupMin, DefaultWarmupMax, true, "until: steady"},
		{"min only: max defaults", "warmup: {min: 10s, until: steady}", 10 * time.Second, DefaultWarmupMax, true, "min: 10s"},
		{"a min above the default max lifts max to min", "warmup: {min: 90s, until: steady}", 90 * time.Second, 90 * time.Second, true, "max: 1m30s"},
		{"both bounds", "warmup: {min: 10s, max: 45s, until: steady}", 10 * time.Second, 45 * time.Second, true, "max: 45s"},
		{"no warm-up", "warmup: 0s", 0, 0, false, ""},
	}
	for _, tt := range tests {
		src := strings.Replace(valid, "warmup: 1s", tt.warmup, 1)
		m, err := Parse("demo.yaml", []byte(src), "")
		if err != nil {
			t.Fatalf("%s: %v", tt.why, err)
		}
		w := m.Load.Warmup
		if w.Min != tt.min || w.Max != tt.max || w.Steady() != tt.steady {
			t.Errorf("%s: %+v, want min %s max %s steady %v", tt.why, w, tt.min, tt.max, tt.steady)
		}
		out, err := Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), tt.written) {
			t.Errorf("%s: normalized manifest lacks %q:\n%s", tt.why, tt.written, out)
		}
		back, err := Parse("manifest.yaml", out, "")
		if err != nil {
			t.Fatalf("%s: the normalized manifest does not load back: %v\n%s", tt.why, err, out)
		}
		if back.Load.Warmup != w {
			t.Errorf("%s: read back %+v, want %+v", tt.why, back.Load.Warmup, w)
		}
	}
}

// TestMeasureCold: measure: cold is a variant's, and only "cold" is known.
func TestMeasureCold(t *testing.T) {
	src := strings.Replace(valid, "platform: {target: spring-mvc}", "platform: {target: spring-mvc, measure: cold}", 1)
	m, err := Parse("demo.yaml", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Variants[0].Measure != MeasureCold {
		t.Errorf("measure %q, want cold", m.Variants[0].Measure)
	}
	src = strings.Replace(valid, "platform: {target: spring-mvc}", "platform: {target: spring-mvc, measure: warm}", 1)
	_, err = Parse("demo.yaml", []byte(src), "")
	if err == nil || !strings.Contains(err.Error(), `variants.platform.measure: "warm" is not known (the one value is cold`) {
		t.Errorf("measure: warm: %v, want an error naming the field and the one value", err)
	}
}
