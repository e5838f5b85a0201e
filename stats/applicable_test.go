package stats

import (
	"slices"
	"testing"
)

// TestSetAside: a verdict set aside by a failed precondition is not
// applicable, decided, and keeps what the data alone said.
func TestSetAside(t *testing.T) {
	tests := []struct {
		name, why string
		v         Verdict
		evidence  []string
	}{
		{"supported", "the statistical reading is kept, after the precondition",
			Verdict{Status: Supported, Reason: "supported: ratio 2.", Evidence: []string{"A/B 2"}},
			[]string{"precondition: cores", "set aside: the data alone say supported (supported: ratio 2)", "A/B 2"}},
		{"open inconclusive", "more trials on this host would not make it apply: decided, lean dropped",
			Verdict{Status: Inconclusive, Leans: Supported, Open: true},
			[]string{"precondition: cores", "set aside: the data alone say inconclusive"}},
		{"no status", "a verdict never judged reads inconclusive",
			Verdict{}, []string{"precondition: cores", "set aside: the data alone say inconclusive"}},
	}
	for _, tt := range tests {
		v := tt.v
		SetAside(&v, "it needs at least 4 CPUs", []string{"precondition: cores"})
		if v.Status != NotApplicable || v.Reason != "not applicable here: it needs at least 4 CPUs" || v.Leans != "" || v.Open || !Decided(v) {
			t.Errorf("%s: %s: got %+v", tt.name, tt.why, v)
		}
		if !slices.Equal(v.Evidence, tt.evidence) {
			t.Errorf("%s: %s: evidence %q, want %q", tt.name, tt.why, v.Evidence, tt.evidence)
		}
	}
	for in, want := range map[string]string{NotApplicable: "not applicable here", Supported: Supported, "": Inconclusive} {
		if got := StatusText(in); got != want {
			t.Errorf("StatusText(%q) = %q, want %q", in, got, want)
		}
	}
}
