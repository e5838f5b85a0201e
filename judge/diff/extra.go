package diff

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// VerdictChange is one claim's verdict in the old and the new run.
type VerdictChange struct {
	ID, Says             string
	Old, New             string // status; "" when the run has no such claim
	OldFigure, NewFigure string // what the claim tested (a ratio, or a median for an absolute claim) with its CI, when recorded
}

// statusText is a recorded status as a reader sees it ("" stays "", so
// orDash marks a verdict without one).
func statusText(s string) string {
	if s == "" {
		return ""
	}
	return stats.StatusText(s)
}

// Changed tells whether the verdict moved.
func (v VerdictChange) Changed() bool { return v.Old != v.New }

// verdictChanges pairs the claims of both runs by ID, old order first.
func verdictChanges(a, b *record.Run) []VerdictChange {
	va, _ := a.ReadVerdicts()
	vb, _ := b.ReadVerdicts()
	at := map[string]int{}
	var out []VerdictChange
	for _, x := range va {
		at[x.ID] = len(out)
		out = append(out, VerdictChange{ID: x.ID, Says: x.Says, Old: orDash(statusText(x.Status)), New: "absent", OldFigure: figure(x)})
	}
	for _, x := range vb {
		i, ok := at[x.ID]
		if !ok {
			out = append(out, VerdictChange{ID: x.ID, Says: x.Says, Old: "absent"})
			i = len(out) - 1
		}
		out[i].New, out[i].NewFigure = orDash(statusText(x.Status)), figure(x)
		if out[i].Says == "" {
			out[i].Says = x.Says
		}
	}
	return out
}

func figure(x record.Verdict) string {
	if x.Status == stats.NotApplicable {
		return x.Reason // which precondition failed here: the figure that matters
	}
	if x.Ratio == 0 {
		return ""
	}
	s := num(x.Ratio)
	if x.Low != 0 || x.High != 0 {
		s += " (" + num(x.Low) + "–" + num(x.High) + ")"
	}
	return s
}

// Geomean is a table's summary row, as benchstat's: the geometric mean of
// new/old medians over the cells both runs have, as a change in percent.
type Geomean struct {
	Cells int
	Ratio float64 // geometric mean of MedianB / MedianA; NaN without cells
}

// geomean computes a table's geomean row; cells whose medians are not
// positive (a ratio of 0 errors has no logarithm) are left out.
func geomean(t Table) Geomean {
	var sum float64
	n := 0
	for _, r := range t.Rows {
		if r.Cmp == nil || !(r.Cmp.MedianA > 0) || !(r.Cmp.MedianB > 0) {
			continue
		}
		sum += math.Log(r.Cmp.MedianB / r.Cmp.MedianA)
		n++
	}
	if n == 0 {
		return Geomean{Ratio: math.NaN()}
	}
	return Geomean{Cells: n, Ratio: math.Exp(sum / float64(n))}
}

// String is the geomean as a signed percentage, "–" without cells.
func (g Geomean) String() string {
	if g.Cells == 0 || math.IsNaN(g.Ratio) {
		return "–"
	}
	return fmt.Sprintf("%+.1f%%", 100*(g.Ratio-1))
}

// DeltaCI is the interval of the change new/old − 1: the hierarchical
// bootstrap of the ratio of the two medians over forks (stats.RatioInterval,
// the interval a compare claim gets), NaN when either side is empty.
func (r Row) DeltaCI() (lo, hi float64) {
	if math.IsNaN(r.RatioLow) || math.IsNaN(r.RatioHigh) || (r.RatioLow == 0 && r.RatioHigh == 0) {
		return math.NaN(), math.NaN()
	}
	return r.RatioLow - 1, r.RatioHigh - 1
}

// deltaCI formats DeltaCI as a percentage range.
func deltaCI(r Row) string {
	lo, hi := r.DeltaCI()
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "–"
	}
	return fmt.Sprintf("%+.0f%% to %+.0f%%", 100*lo, 100*hi)
}

// FingerprintRow is one fingerprint field of both runs, for the
// side-by-side view.
type FingerprintRow struct {
	Field, Old, New string
	Differs         bool
}

// sideBySide flattens both fingerprints into rows, every field of either.
func sideBySide(a, b []byte) []FingerprintRow {
	fa, fb := flattenJSON(a), flattenJSON(b)
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]FingerprintRow, 0, len(names))
	for _, k := range names {
		out = append(out, FingerprintRow{Field: k, Old: fa[k], New: fb[k], Differs: fa[k] != fb[k]})
	}
	return out
}

func flattenJSON(b []byte) map[string]string {
	out := map[string]string{}
	if len(b) == 0 {
		return out
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		out["(fingerprint.json)"] = "not valid JSON"
		return out
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(strings.TrimPrefix(prefix+"."+k, "."), e)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", prefix, i), e)
			}
		case nil:
			out[prefix] = ""
		default:
			out[prefix] = strings.TrimSpace(fmt.Sprint(x))
		}
	}
	walk("", v)
	return out
}
