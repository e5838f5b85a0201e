// Package metrictest adds a metric definition for the length of one test,
// to prove that a metric is one metric.Def: the tables, comparisons and
// diffs that show metrics by default find a Def added here with no other
// change. Tests that use it change the one list every package reads, so
// they must not run in parallel with tests that read it.
package metrictest

import (
	"slices"
	"testing"

	"github.com/threadlab/threadlab/measure/metric"
)

// Add appends d to metric.Defs until the end of the test. d must name a
// metric that does not exist yet and read a trial through Value.
func Add(t testing.TB, d metric.Def) {
	t.Helper()
	if _, ok := metric.Lookup(d.Name); ok {
		t.Fatalf("metrictest.Add: metric %q exists already (pick a new name)", d.Name)
	}
	if d.Value == nil {
		t.Fatalf("metrictest.Add: metric %q has no Value (read it from the trial)", d.Name)
	}
	saved := metric.Defs
	metric.Defs = append(slices.Clip(saved), d)
	t.Cleanup(func() { metric.Defs = saved })
}
