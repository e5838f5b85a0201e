package metric

import (
	"reflect"
	"slices"
	"testing"

	"github.com/threadlab/threadlab/pipeline/record"
)

// notMetrics are numeric trials.csv columns that identify a row rather than
// measure anything.
var notMetrics = []string{"trial", "seq", "pid", "fork", "iteration"}

// TestEveryNumericColumnIsDefined sets each numeric field of record.Trial
// to a distinct value and reads it back through its definition: a column
// added to trials.csv without a Def, or a Def reading the wrong field,
// fails here.
func TestEveryNumericColumnIsDefined(t *testing.T) {
	typ := reflect.TypeFor[record.Trial]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		col := f.Tag.Get("csv")
		switch f.Type.Kind() {
		case reflect.Int, reflect.Int64, reflect.Float64:
		default:
			continue
		}
		if slices.Contains(notMetrics, col) {
			continue
		}
		d, ok := Lookup(col)
		if !ok {
			t.Errorf("trials.csv column %q (field %s) has no metric.Def; add one to Defs", col, f.Name)
			continue
		}
		var tr record.Trial
		want := float64(i + 7) // distinct per field
		v := reflect.ValueOf(&tr).Elem().Field(i)
		if v.CanInt() {
			v.SetInt(int64(want))
		} else {
			v.SetFloat(want)
		}
		if got := d.Value(tr); got != want {
			t.Errorf("Def %q reads %g, want %g from field %s", col, got, want, f.Name)
		}
		if d.Column != col || d.Name != col {
			t.Errorf("Def %q: Name and Column must equal the CSV header %q", d.Name, col)
		}
	}
}

func TestLookupHelpers(t *testing.T) {
	tests := []struct {
		name       string
		higher, ok bool
		label, why string
	}{
		{"rps", true, true, "throughput (req/s)", "throughput is better higher"},
		{"p99_ms", false, true, "p99 latency (ms)", "latency is better lower"},
		{"errors", false, true, "errors", "failures are better lower"},
		{"rsp", false, false, "rsp", "a typo is unknown, labelled by its name"},
	}
	for _, tt := range tests {
		if _, ok := Lookup(tt.name); ok != tt.ok {
			t.Errorf("Lookup(%q) ok = %v, want %v (%s)", tt.name, ok, tt.ok, tt.why)
		}
		if got := HigherIsBetter(tt.name); got != tt.higher {
			t.Errorf("HigherIsBetter(%q) = %v (%s)", tt.name, got, tt.why)
		}
		if got := Label(tt.name); got != tt.label {
			t.Errorf("Label(%q) = %q, want %q (%s)", tt.name, got, tt.label, tt.why)
		}
	}
	if c := Claimable(); !slices.Contains(c, "wall_ms") || slices.Contains(c, "host_busy_pct") {
		t.Errorf("Claimable() = %v: measured columns only, not the host's", c)
	}
}
