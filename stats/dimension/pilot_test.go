package dimension

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pilotDir writes a run directory with run.json and the given trials.csv
// and warmup.csv (either may be "").
func pilotDir(t *testing.T, trials, warmup string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"run.json":   `{"experiment": "fixture", "profile": "pilot", "measured_group": "main", "primary_metric": "rps"}`,
		"trials.csv": trials,
		"warmup.csv": warmup,
	}
	for name, body := range files {
		if body == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestReadPilotForks: rows are grouped into forks by the fork column and
// ordered by fork number and iteration whatever the file's order; the
// other group and invalid rows are left out; the costs are medians.
func TestReadPilotForks(t *testing.T) {
	head := "variant,point,group,fork,iteration,trial,valid,requests,rps,wall_ms,cooldown_ms,startup_ms\n"
	var b strings.Builder
	b.WriteString(head)
	// Fork 2 first, iterations backwards: the reader must sort both.
	// Fork levels 100, 200, 300 and a last iteration that tells the fork.
	for _, f := range []struct {
		fork  string
		level int
	}{{"2", 200}, {"1", 100}, {"3", 300}} {
		for it := 4; it >= 1; it-- {
			startup := "0"
			if it == 1 {
				startup = "6000" // the fork's start, on its first iteration
			}
			rps := f.level + it%2 // 1 above on odd iterations: noise, no trend
			b.WriteString("a,,main," + f.fork + "," + strconv.Itoa(it) + ",1,true,2000," + strconv.Itoa(rps) + ",2000,500," + startup + "\n")
		}
	}
	b.WriteString("a,,other,1,1,1,true,10,999999,1,0,0\n") // another group
	b.WriteString("a,,main,1,5,1,false,10,999999,1,0,0\n") // invalid
	warm := "variant,point,group,fork,trial,valid,requests,rps,wall_ms\n" +
		"a,,main,1,1,false,1000,1000,1000\na,,main,1,1,false,1000,1000,1000\n" + // fork 1: 2 s
		"a,,main,2,1,false,3000,1000,3000\n" + // fork 2: 3 s
		"a,,main,3,1,false,4000,1000,4000\n" // fork 3: 4 s
	p, err := ReadPilot(pilotDir(t, b.String(), warm), "")
	if err != nil {
		t.Fatal(err)
	}
	if !p.ForkColumns || p.Metric != "rps" || !p.HigherIsBetter || len(p.Notes) != 0 {
		t.Errorf("fork columns %v, metric %s (higher %v), notes %q: want fork columns, the primary rps, higher is better, no notes", p.ForkColumns, p.Metric, p.HigherIsBetter, p.Notes)
	}
	if len(p.Cells) != 1 || len(p.Cells[0].Forks) != 3 {
		t.Fatalf("cells %+v: want one cell of 3 forks", p.Cells)
	}
	c := p.Cells[0]
	for i, want := range []float64{100, 200, 300} { // iteration 4 (even) is the level itself
		f := c.Forks[i]
		if f[len(f)-1] != want {
			t.Errorf("fork %d ends with %v, want %v (forks by number, iterations in order)", i+1, f[len(f)-1], want)
		}
	}
	if n := len(c.Forks[0]) + len(c.Forks[1]) + len(c.Forks[2]) + c.Excluded; n != 12 {
		t.Errorf("%d iterations kept or excluded, want the 12 valid ones of group main", n)
	}
	// Start: the median of the three 6 s starts; warm-up: median of 2, 3,
	// 4 s; cool-down 0.5 s each.
	// The 12 windows sorted: 2000/301 and 2000/300 twice each, then 2000/201
	// and 2000/200 (fork 2, the middle level), so the median is their mean.
	window := (2000.0/201 + 2000.0/200) / 2
	if p.StartS != 6 || p.WarmupS != 3 || p.CoolS != 0.5 || math.Abs(p.WindowS-window) > 1e-9 {
		t.Errorf("start %v, warm-up %v, window %v, cool-down %v: want 6, 3, %.4f, 0.5", p.StartS, p.WarmupS, p.WindowS, window, p.CoolS)
	}
	if p.Costs.ForkS != p.StartS+p.WarmupS || p.Costs.IterationS != p.WindowS+p.CoolS {
		t.Errorf("costs %+v: want fork = start + warm-up, iteration = window + cool-down", p.Costs)
	}
}

// TestReadPilotTrials: a run recorded before the fork and iteration
// columns counts each trial as one fork of one iteration, and says so.
func TestReadPilotTrials(t *testing.T) {
	trials := "variant,point,group,trial,valid,requests,rps,wall_ms,cooldown_ms,startup_ms\n" +
		"a,,main,1,true,100,10,10000,0,0\na,,main,2,true,100,12,10000,0,0\na,,main,3,true,100,11,10000,0,0\n"
	p, err := ReadPilot(pilotDir(t, trials, ""), "wall_ms")
	if err != nil {
		t.Fatal(err)
	}
	if p.ForkColumns || len(p.Notes) != 2 || !strings.Contains(p.Notes[0], "no fork and iteration columns") || !strings.Contains(p.Notes[1], "no trial recorded a start-up time") {
		t.Errorf("notes %q: want the missing fork columns and the missing start said", p.Notes)
	}
	if len(p.Cells) != 1 || len(p.Cells[0].Forks) != 3 || !p.Cells[0].Components.SingleIteration {
		t.Fatalf("cells %+v: want 3 forks of one iteration", p.Cells)
	}
	if p.Metric != "wall_ms" || p.HigherIsBetter || p.Cells[0].Forks[1][0] != 10000 {
		t.Errorf("metric %s (higher %v), fork 2 %v: want wall_ms, lower is better, 10000", p.Metric, p.HigherIsBetter, p.Cells[0].Forks[1])
	}
}

func TestReadPilotErrors(t *testing.T) {
	head := "variant,point,group,trial,valid,requests,rps,wall_ms\n"
	rows := "a,,main,1,true,1,1,1\na,,main,2,true,1,1,1\n"
	cases := []struct {
		why, dir, metric, want string
	}{
		{"not a run directory", t.TempDir(), "", "is not a threadlab run directory (no run.json)"},
		{"no trials yet", pilotDir(t, head, ""), "", "has no trials: run the pilot to completion first"},
		{"a metric the run did not record", pilotDir(t, head+rows, ""), "p99_ms", "has no p99_ms column"},
		{"not a metric at all", pilotDir(t, head+rows, ""), "speed", `"speed" is not a metric`},
		{"no valid trial of the measured group", pilotDir(t, head+"a,,main,1,false,1,1,1\n", ""), "", `no valid trials of group "main"`},
		{"one fork cannot separate the levels", pilotDir(t, head+"a,,main,1,true,1,1,1\n", ""), "", "cell a: need values from at least 2 forks"},
	}
	for _, c := range cases {
		_, err := ReadPilot(c.dir, c.metric)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.why, err, c.want)
		}
	}
}

// TestSdPct: a spread is also a share of the median, except of a median
// of 0 (an all-zero cell printed "0 (NaN%)").
func TestSdPct(t *testing.T) {
	for _, c := range []struct {
		variance, median float64
		want, why        string
	}{
		{4, 100, "2 (2.0%)", "sd 2 of 100"},
		{0, 0, "0 (of a median of 0: no percentage)", "an all-zero cell"},
	} {
		if got := sdPct(c.variance, c.median); got != c.want {
			t.Errorf("%s: sdPct(%g, %g) = %q, want %q", c.why, c.variance, c.median, got, c.want)
		}
	}
}
