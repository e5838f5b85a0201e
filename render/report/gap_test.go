package report

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// TestSeriesGapInChart: the fixture's "virtual" trials of pool-sweep miss
// their server sample at second 4. series.csv has the fields empty, and
// each server chart's data has null there (a break in the line), never 0.
func TestSeriesGapInChart(t *testing.T) {
	dir := filepath.Join(fixtureDir, "pool-sweep", poolRun)
	b, err := os.ReadFile(filepath.Join(dir, record.SeriesFile))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^virtual,pool=800,1,orders,4,\d+,\d+,[\d.]+,[\d.]+,,,,,,`).Match(b) {
		t.Fatal("fixture: series.csv should have empty server fields at second 4 of virtual trial 1")
	}
	out := renderFixture(t)
	page, err := os.ReadFile(filepath.Join(out, "pool-sweep", poolRun, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"chart_series_cpu", "chart_series_threads", "chart_series_heap"} {
		i := strings.Index(string(page), `getElementById("`+id+`")`)
		if i < 0 {
			t.Fatalf("no %s in the page", id)
		}
		script := string(page[i:])
		script = script[:strings.Index(script, "</script>")]
		if !strings.Contains(script, "[4,null]") {
			t.Errorf("%s: no [4,null] in the chart data: the missing second is not a gap", id)
		}
		// Only the virtual variant missed the second; the platform
		// variant's lines may hold a measured 0 there (its virtual threads).
		for _, series := range strings.Split(script, `"name":"`)[1:] {
			if strings.HasPrefix(series, "virtual") && strings.Contains(series, "[4,0]") {
				t.Errorf("%s: the missing second is drawn as 0 in %.40q", id, series)
			}
		}
	}
}
