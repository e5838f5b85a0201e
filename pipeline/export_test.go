package pipeline

import (
	"github.com/threadlab/threadlab/measure/telemetry"
	"github.com/threadlab/threadlab/pipeline/trial"
)

// SetMeasureNoise replaces how a window's host noise is taken from its
// samples (trial.HostNoise) for one test of package pipeline_test; it returns the
// restore function.
func SetMeasureNoise(f func([]telemetry.Sample) (outside, steal float64)) (restore func()) {
	measureNoise = f
	return func() { measureNoise = trial.HostNoise }
}
