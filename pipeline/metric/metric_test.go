package metric

import (
	"reflect"
	"slices"
	"strings"
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

// TestIdentifiersAreNotMetrics: the columns that name a trial must not be
// compared, diffed or claimed, whatever their type.
func TestIdentifiersAreNotMetrics(t *testing.T) {
	for _, col := range append(notMetrics, "variant", "valid", "point") {
		if _, ok := Lookup(col); ok {
			t.Errorf("Lookup(%q) found a Def: %s identifies a trial, it measures nothing", col, col)
		}
		if Rank(col) != len(Defs) {
			t.Errorf("Rank(%q) = %d, want %d (after every metric)", col, Rank(col), len(Defs))
		}
	}
	names := Names()
	if len(names) != len(Defs) || names[0] != Defs[0].Name || Rank(names[3]) != 3 {
		t.Errorf("Names() = %v: every Def, in table order", names)
	}
}

func TestPrimary(t *testing.T) {
	tests := []struct{ model, want, why string }{
		{"burst", "wall_ms", "a burst is judged by the time until all are answered (seeds 000, 003)"},
		{"closed", "rps", "a steady load is judged by its throughput"},
		{"open", "rps", "so is an open-model load"},
		{"", "rps", "no measured group (an old run): throughput"},
	}
	for _, tt := range tests {
		if got := Primary(tt.model); got != tt.want {
			t.Errorf("Primary(%q) = %q, want %q (%s)", tt.model, got, tt.want, tt.why)
		}
		if _, ok := Lookup(Primary(tt.model)); !ok {
			t.Errorf("Primary(%q) names no Def", tt.model)
		}
	}
}

// TestCPUIsShareOfOneCore: a process's CPU is reported per core (200% is
// two cores busy); a label saying only "%" reads as a share of the machine.
func TestCPUIsShareOfOneCore(t *testing.T) {
	for _, name := range []string{"target_cpu_pct", "target_peak_cpu_pct", "gen_cpu_pct"} {
		d, _ := Lookup(name)
		if d.Unit != "% of one core" || !strings.HasSuffix(d.Label, "(% of one core)") {
			t.Errorf("%s: label %q unit %q, want the share of one core", name, d.Label, d.Unit)
		}
	}
}
