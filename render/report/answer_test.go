package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// TestAnswerNamesFewOthersAndRangesMany: the answer names every other
// variant while there are at most three; with more (boot-versions has
// nine) it names the runner-up and gives the rest as a range, so the
// sentence stays readable.
func TestAnswerNamesFewOthersAndRangesMany(t *testing.T) {
	view := func(medians ...float64) *runView {
		r := &record.Run{Meta: record.Meta{Measured: "main"}}
		var names []string
		for i, m := range medians {
			n := fmt.Sprintf("v%d", i+1)
			names = append(names, n)
			r.Summary = append(r.Summary, record.Summary{Variant: n, Group: "main", Metric: "wall_ms", Median: m})
		}
		return &runView{run: r, layout: layout{Variants: names, Points: []string{""}, Measured: "main", Primary: "wall_ms"}}
	}
	for _, tc := range []struct {
		name    string
		medians []float64
		want    string
		notWant string
	}{
		{"two variants: the other named", []float64{900, 350},
			"v2 had the lowest median wall time, 350 ms, against v1 900 ms.", ""},
		{"four variants: all three others named", []float64{900, 350, 360, 370},
			"against v3 360 ms and v4 370 ms and v1 900 ms", "between"},
		{"five variants: runner-up named, the rest a range", []float64{945, 347, 351, 352, 944},
			"v2 had the lowest median wall time, 347 ms, against v3 351 ms and the other 3 between 352 and 945 ms.", "v5 944"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := view(tc.medians...).answer()
			if !strings.Contains(got, tc.want) {
				t.Errorf("answer = %q\nwant it to contain %q", got, tc.want)
			}
			if tc.notWant != "" && strings.Contains(got, tc.notWant) {
				t.Errorf("answer = %q\nwant no %q", got, tc.notWant)
			}
		})
	}
}
