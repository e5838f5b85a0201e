package verdicts

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// TestMarkChanges: each row is one claim judged before (nil: not there)
// and now; the sentence and the marks are written out by hand.
func TestMarkChanges(t *testing.T) {
	for _, tt := range []struct {
		why      string
		prev     *record.Verdict
		now      record.Verdict
		change   string // "" = unchanged
		previous *record.Previous
	}{
		{"same status and reason: nothing to say", &record.Verdict{ID: "a", Status: "supported", Reason: "r"},
			record.Verdict{ID: "a", Status: "supported", Reason: "r"}, "", nil},
		{"a claim the run never judged is new, with no Previous",
			nil, record.Verdict{ID: "a", Status: "", Reason: "too few forks"},
			"new claim, inconclusive: too few forks", nil},
		{"a status change names both versions' rules and the test (method up to its first ';')",
			&record.Verdict{ID: "a", Status: "inconclusive", Reason: "p 0.06", Version: "v1"},
			record.Verdict{ID: "a", Status: "supported", Reason: "p 0.03", Method: "sign test; 5 forks"},
			"was inconclusive under threadlab v1 (p 0.06); now supported: p 0.03 (sign test)",
			&record.Previous{Status: "inconclusive", Reason: "p 0.06", Version: "v1", Why: "was inconclusive under threadlab v1 (p 0.06); now supported: p 0.03 (sign test)"}},
		{"an unversioned verdict was decided by the rules it was recorded with",
			&record.Verdict{ID: "a", Status: "refuted", Reason: "x"},
			record.Verdict{ID: "a", Status: stats.NotApplicable, Reason: "y", Method: "TOST"},
			"was refuted under the rules it was recorded with (x); now not applicable here: y (TOST)",
			&record.Previous{Status: "refuted", Reason: "x", Why: "was refuted under the rules it was recorded with (x); now not applicable here: y (TOST)"}},
		{"the same status for another reason",
			&record.Verdict{ID: "a", Status: "supported", Reason: "old", Version: "v1"},
			record.Verdict{ID: "a", Status: "supported", Reason: "new"},
			"still supported, for a new reason: new (was: old)",
			&record.Previous{Status: "supported", Reason: "old", Version: "v1", Why: "still supported, for a new reason: new (was: old)"}},
	} {
		t.Run(tt.why, func(t *testing.T) {
			var old []record.Verdict
			if tt.prev != nil {
				old = []record.Verdict{*tt.prev}
			}
			tt.now.Evidence = []string{"e"}
			now := []record.Verdict{tt.now}
			got := MarkChanges(old, now, "v2")
			if tt.change == "" {
				if len(got) != 0 || !reflect.DeepEqual(now[0], tt.now) {
					t.Fatalf("changes %v, verdict %+v: want none and the verdict untouched", got, now[0])
				}
				return
			}
			if want := []Change{{ID: "a", Why: tt.change}}; !reflect.DeepEqual(got, want) {
				t.Errorf("changes %q, want %q", got, want)
			}
			if !reflect.DeepEqual(now[0].Previous, tt.previous) {
				t.Errorf("Previous %+v, want %+v", now[0].Previous, tt.previous)
			}
			if want := []string{"re-evaluated by threadlab v2: " + tt.change, "e"}; !reflect.DeepEqual(now[0].Evidence, want) {
				t.Errorf("evidence %q, want %q", now[0].Evidence, want)
			}
		})
	}
}

// TestKeepPrevious: the first verdicts are kept once; a run without
// verdicts keeps an empty list.
func TestKeepPrevious(t *testing.T) {
	dir := t.TempDir()
	if err := KeepPrevious(dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, record.PreviousVerdictsFile)); string(b) != "[]\n" {
		t.Errorf("no verdicts.json: kept %q, want an empty list", b)
	}
	dir = t.TempDir()
	first := []byte(`[{"id":"a"}]` + "\n")
	if err := os.WriteFile(filepath.Join(dir, record.VerdictsFile), first, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := KeepPrevious(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, record.VerdictsFile), []byte("[]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := KeepPrevious(dir); err != nil { // a second re-evaluation
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, record.PreviousVerdictsFile)); string(b) != string(first) {
		t.Errorf("kept %q, want the first verdicts %q byte for byte", b, first)
	}
}
