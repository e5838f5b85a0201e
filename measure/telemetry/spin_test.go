package telemetry

import (
	"math"
	"testing"
)

// TestSpinNs: the probe returns a finite, positive time per 1000 steps and
// keeps its workload (a result the compiler could drop would time an empty
// loop). No bound on the speed itself: that is the machine's, and a timed
// assertion would be a flaky test (BenchmarkSpinNs measures it).
func TestSpinNs(t *testing.T) {
	before := spinSink
	ns := SpinNs()
	if math.IsNaN(ns) || math.IsInf(ns, 0) || ns <= 0 {
		t.Fatalf("SpinNs() = %v, want a positive time per 1000 steps", ns)
	}
	if spinSink == before {
		t.Errorf("the workload's result did not reach spinSink: the loop may have been compiled away")
	}
}

func BenchmarkSpinNs(b *testing.B) {
	var ns float64
	for b.Loop() {
		ns = SpinNs()
	}
	b.ReportMetric(ns, "ns/1000steps")
}
