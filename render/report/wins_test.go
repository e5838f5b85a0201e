package report

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// sumRow is a summary row of the measured group with a 95% interval; lo and
// hi NaN make a row without one (too few trials).
func sumRow(variant, point, metric string, median, lo, hi float64) record.Summary {
	s := record.Summary{Variant: variant, Point: point, Group: "main", Metric: metric, N: 5, Median: median, Low: lo, High: hi, Confidence: 0.95}
	if math.IsNaN(lo) {
		s.Confidence = 0
	}
	return s
}

func TestContest(t *testing.T) {
	nan := math.NaN()
	vs := []string{"a", "b", "c"}
	by := func(rows ...record.Summary) map[string]*record.Summary {
		m := map[string]*record.Summary{}
		for i := range rows {
			m[rows[i].Variant] = &rows[i]
		}
		return m
	}
	tests := []struct {
		name    string
		rows    map[string]*record.Summary
		errs    map[string]*record.Summary
		higher  bool
		winner  string
		contest bool
		why     string
	}{
		{"clear lead", by(sumRow("a", "", "rps", 100, 95, 105), sumRow("b", "", "rps", 80, 75, 85), sumRow("c", "", "rps", 60, 50, 70)), nil,
			true, "a", true, "the best median's interval clears the runner-up's"},
		{"overlap", by(sumRow("a", "", "p99_ms", 10, 9, 11), sumRow("b", "", "p99_ms", 10.5, 10, 12)), nil,
			false, "", true, "the top two's intervals overlap: no clear winner"},
		{"lower is better", by(sumRow("a", "", "p99_ms", 30, 28, 32), sumRow("b", "", "p99_ms", 10, 9, 11)), nil,
			false, "b", true, "for a latency the smallest wins"},
		{"no interval", by(sumRow("a", "", "rps", 100, nan, nan), sumRow("b", "", "rps", 50, nan, nan)), nil,
			true, "", true, "too few trials for an interval: a lead of medians alone is not clear"},
		{"ranges apart", by(record.Summary{Variant: "a", Median: 600, Min: 420, Max: 616, Low: nan, High: nan},
			record.Summary{Variant: "b", Median: 1450, Min: 1213, Max: 1585, Low: nan, High: nan}), nil,
			true, "b", true, "too few trials for intervals, but every trial of b beats every trial of a"},
		{"all zero", by(sumRow("a", "", "peak_hikari_pending", 0, 0, 0), sumRow("b", "", "peak_hikari_pending", 0, 0, 0)), nil,
			false, "", false, "nothing measured anywhere is not a contest"},
		{"derank errors", by(sumRow("a", "", "rps", 100, 95, 105), sumRow("b", "", "rps", 90, 85, 94), sumRow("c", "", "rps", 500, 490, 510)),
			by(sumRow("a", "", "errors", 0, 0, 0), sumRow("b", "", "errors", 0, 0, 0), sumRow("c", "", "errors", 12, 10, 14)),
			true, "a", true, "c has errors, so it ranks below the error-free variants however fast it is"},
		{"only one clean", by(sumRow("a", "", "rps", 10, 9, 11), sumRow("b", "", "rps", 90, 85, 94), sumRow("c", "", "rps", 500, 490, 510)),
			by(sumRow("a", "", "errors", 0, 0, 0), sumRow("b", "", "errors", 3, 2, 4), sumRow("c", "", "errors", 12, 10, 14)),
			true, "a", true, "the only error-free variant wins (seed 002's error-derank rule)"},
		{"one variant", by(sumRow("a", "", "rps", 100, 95, 105)), nil, true, "", false, "a contest needs two"},
	}
	for _, tt := range tests {
		w, ok := contest(tt.rows, tt.errs, vs, tt.higher)
		if w != tt.winner || ok != tt.contest {
			t.Errorf("%s: contest = %q, %v; want %q, %v (%s)", tt.name, w, ok, tt.winner, tt.contest, tt.why)
		}
	}
}

// TestWinsGolden renders the tally of a small three-variant sweep; update
// testdata/wins/tally.md with -update.
func TestWinsGolden(t *testing.T) {
	nan := math.NaN()
	var sum []record.Summary
	add := func(point, metric string, a, b, c [3]float64) {
		for i, x := range [][3]float64{a, b, c} {
			sum = append(sum, sumRow(string(rune('a'+i)), point, metric, x[0], x[1], x[2]))
		}
	}
	add("users=10", "rps", [3]float64{100, 95, 105}, [3]float64{80, 75, 85}, [3]float64{60, 55, 65})
	add("users=10", "p99_ms", [3]float64{10, 9, 11}, [3]float64{10.5, 10, 12}, [3]float64{30, 28, 33})
	add("users=10", "errors", [3]float64{}, [3]float64{}, [3]float64{})
	add("users=100", "rps", [3]float64{300, 290, 310}, [3]float64{420, 400, 440}, [3]float64{900, 880, 920})
	add("users=100", "p99_ms", [3]float64{40, nan, nan}, [3]float64{20, nan, nan}, [3]float64{5, 4, 6})
	add("users=100", "errors", [3]float64{}, [3]float64{}, [3]float64{25, 20, 30})
	add("users=100", "gc_count", [3]float64{}, [3]float64{}, [3]float64{})
	sum = append(sum, record.Summary{Variant: "a", Point: "users=10", Group: "background", Metric: "rps", Median: 1e6})

	if w := newWins(sum, []string{"a", "b"}, []string{"users=10", "users=100"}, "main"); w != nil {
		t.Errorf("two variants got a tally: the comparisons table already says it")
	}
	w := newWins(sum, []string{"a", "b", "c"}, []string{"users=10", "users=100"}, "main")
	if w == nil {
		t.Fatal("no tally for three variants with contests")
	}
	got := w.markdown()
	path := filepath.Join("testdata", "wins", "tally.md")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./render/report -run TestWinsGolden -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("tally differs from %s (rerun with -update if the change is meant):\n%s", path, got)
	}
	// users=10: a leads rps, the p99 top two overlap, errors all 0 is no
	// contest; users=100: c has errors and is deranked, b leads rps, p99
	// has no interval for a or b, errors tie a and b at 0; gc_count is 0
	// everywhere.
	if w.Total.Contests != 5 || w.Total.Wins[0] != 1 || w.Total.Wins[1] != 1 || w.Total.Wins[2] != 0 || w.Total.Undecided != 3 {
		t.Errorf("total %+v, want 5 contests: a 1, b 1, c 0, 3 without a clear winner", w.Total)
	}
	if (*winsTable)(nil).markdown() != nil {
		t.Errorf("a run without a tally must add nothing to report.md")
	}
}
