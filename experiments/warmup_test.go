package experiments

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/stats"
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
		{"also names the target's CPU", "warmup: {until: steady, also: [target_cpu_s]}", DefaultWarmupMin, DefaultWarmupMax, true, "- target_cpu_s"},
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
		if !reflect.DeepEqual(back.Load.Warmup, w) {
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

// TestWarmupAlso: load.warmup.also takes only metrics with their own
// steady state, under until: steady, and WarmupMetrics adds them, and the
// CPU metrics the claims read, to the primary.
func TestWarmupAlso(t *testing.T) {
	tests := []struct {
		why, warmup string
		err         string // "" for a manifest that loads
		waits       []string
	}{
		{"until steady waits for the primary alone when no claim reads the CPU", "warmup: {until: steady}", "", []string{"wall_ms"}},
		{"also adds the target's CPU", "warmup: {until: steady, also: [target_cpu_s, target_cpu_ms_per_req]}", "", []string{"wall_ms", "target_cpu_s", "target_cpu_ms_per_req"}},
		{"a metric twice waits once", "warmup: {until: steady, also: [target_cpu_s, target_cpu_s]}", "", []string{"wall_ms", "target_cpu_s"}},
		{"an unknown metric is named with its index", "warmup: {until: steady, also: [cpu]}", `load.warmup.also[0]: unknown metric "cpu"`, nil},
		{"a metric without its own steady state is refused", "warmup: {until: steady, also: [p99_ms]}", "load.warmup.also[0]: p99_ms has no steady state of its own", nil},
		{"a fixed warm-up waits for nothing", "warmup: {min: 5s, max: 5s, also: [target_cpu_s]}", "load.warmup.also: needs until: steady", nil},
	}
	for _, tt := range tests {
		src := strings.Replace(valid, "warmup: 1s", tt.warmup, 1)
		m, err := Parse("demo.yaml", []byte(src), "")
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q", tt.why, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.why, err)
		}
		if got := m.WarmupMetrics(); !slices.Equal(got, tt.waits) {
			t.Errorf("%s: WarmupMetrics %v, want %v", tt.why, got, tt.waits)
		}
	}
	// a claim on the target's CPU makes the warm-up wait for it
	src := strings.Replace(valid, "warmup: 1s", "warmup: {until: steady}", 1)
	m, err := Parse("demo.yaml", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	m.Claims = append(m.Claims, Claim{ID: "cpu", Check: stats.Check{Metric: "target_cpu_pct"}})
	if got, want := m.WarmupMetrics(), []string{"wall_ms", "target_cpu_pct"}; !slices.Equal(got, want) {
		t.Errorf("a claim on target_cpu_pct: WarmupMetrics %v, want %v", got, want)
	}
}
