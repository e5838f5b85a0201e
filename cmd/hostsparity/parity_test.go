package main

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Verdict: the whole 90% interval of the ratio against the band [0.90,
// 1.10].
func TestVerdict(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		why    string
		lo, hi float64
		want   string
	}{
		{"inside the band", 0.95, 1.05, OK},
		{"on both bounds: the band includes them", 0.90, 1.10, OK},
		{"a single value inside (equal forks on both sides)", 1.0, 1.0, OK},
		{"straddles the lower bound", 0.85, 1.05, NotSettled},
		{"straddles the upper bound", 0.95, 1.15, NotSettled},
		{"straddles both (platform's 0.73-1.26 on 3 forks): more forks may settle it", 0.73, 1.26, NotSettled},
		{"starts on the upper bound and goes beyond: touching the band is not beyond it", 1.10, 1.20, NotSettled},
		{"wholly above", 1.12, 1.30, Outside},
		{"wholly below (35 against 40 threads in every fork)", 0.875, 0.875, Outside},
		{"no interval (a side without trials)", nan, nan, Missing},
		{"half an interval is none", 0.95, nan, Missing},
	}
	for _, tt := range tests {
		if got := Verdict(tt.lo, tt.hi, 0.90, 1.10); got != tt.want {
			t.Errorf("%s: [%g, %g] is %q, want %q", tt.why, tt.lo, tt.hi, got, tt.want)
		}
	}
}

// trial is one trials.csv row of the measured group "burst".
func trial(v string, fork, seq int, valid bool, cpu, rss float64, threads int) record.Trial {
	return record.Trial{Variant: v, Group: "burst", Fork: fork, Trial: seq, Seq: seq, Valid: valid,
		TargetCPUSec: cpu, TargetCPUMsPerReq: cpu * 1000 / 600, TargetRSSMB: rss, TargetThreads: threads, TargetCPUPct: 100}
}

// parityRuns are a single-machine and a multi-host run of one variant,
// three forks each, with figures whose ratio intervals are worked out by
// hand in TestCompare.
func parityRuns() (single, hosts *record.Run) {
	meta := record.Meta{Measured: "burst"}
	single = &record.Run{Meta: meta, Trials: []record.Trial{
		// fork medians: CPU-s 1.0, 1.2, 0.8; RSS 300, 302, 304; threads 40
		trial("virtual", 1, 1, true, 1.0, 300, 40), trial("virtual", 1, 2, true, 1.1, 300, 40), trial("virtual", 1, 3, true, 0.9, 300, 40),
		trial("virtual", 2, 4, true, 1.2, 302, 40), trial("virtual", 2, 5, true, 1.2, 302, 40),
		trial("virtual", 3, 6, true, 0.8, 304, 40),
		// another group's row and a webflux fork the multi-host run lacks
		{Variant: "virtual", Group: "background", Fork: 1, Trial: 1, Seq: 7, Valid: true, TargetCPUSec: 50, TargetRSSMB: 999, TargetThreads: 999},
		trial("webflux", 1, 8, true, 0.5, 200, 20),
	}}
	hosts = &record.Run{Meta: meta, Trials: []record.Trial{
		// fork medians: CPU-s 1.0, 1.02, 0.98; RSS 301, 303, 305; threads 35
		trial("virtual", 1, 1, true, 1.0, 301, 35), trial("virtual", 1, 2, false, 9.0, 900, 90), // invalid: left out
		trial("virtual", 2, 3, true, 1.02, 303, 35),
		trial("virtual", 3, 4, true, 0.98, 305, 35),
		// a CPU window lost: its 0 CPU-s is no measurement, its RSS and threads are
		{Variant: "virtual", Group: "burst", Fork: 3, Trial: 5, Seq: 5, Valid: true, Flags: "cpu_window_lost", TargetRSSMB: 305, TargetThreads: 35, TargetCPUPct: 100},
	}}
	return single, hosts
}

// Compare: with 3 forks a side the bootstrap is the plain one, and the
// 90% interval of median(hosts)/median(single) is [min hosts/max single,
// max hosts/min single]: a resampled median of 3 is the smallest fork
// with probability 7/27 (two or three draws of it), both at once with
// 0.067, above the 5% of each tail.
//
//	CPU-s:   medians 1.0 and 1.0, ratio 1.000; [0.98/1.2, 1.02/0.8] = [0.8167, 1.2750]: not settled
//	RSS:     medians 302 and 303, ratio 1.0033; [301/304, 305/300] = [0.9901, 1.0167]: ok
//	threads: 40 and 35 in every fork, ratio 0.875; [0.875, 0.875]: outside
//	webflux: no multi-host trial: missing
func TestCompare(t *testing.T) {
	single, hosts := parityRuns()
	rows, err := Compare(single, hosts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		ratio, lo, hi float64
		forks         [2]int
		verdict       string
	}
	nan := math.NaN()
	wants := map[string]want{
		"virtual target_cpu_s":        {1.0, 0.98 / 1.2, 1.02 / 0.8, [2]int{3, 3}, NotSettled},
		"virtual target_peak_rss_mb":  {303.0 / 302, 301.0 / 304, 305.0 / 300, [2]int{3, 3}, OK},
		"virtual target_peak_threads": {0.875, 0.875, 0.875, [2]int{3, 3}, Outside},
		"webflux target_cpu_s":        {nan, nan, nan, [2]int{1, 0}, Missing},
	}
	seen := 0
	for _, r := range rows {
		w, ok := wants[r.Variant+" "+r.Metric]
		if !ok {
			continue
		}
		seen++
		same := func(a, b float64) bool { return (math.IsNaN(a) && math.IsNaN(b)) || math.Abs(a-b) < 1e-9 }
		if !same(r.Ratio, w.ratio) || !same(r.Low, w.lo) || !same(r.High, w.hi) || r.SingleForks != w.forks[0] || r.HostsForks != w.forks[1] || r.Verdict != w.verdict {
			t.Errorf("%s %s: ratio %v [%v, %v] over %d/%d forks, %q; want %v [%v, %v] over %v forks, %q",
				r.Variant, r.Metric, r.Ratio, r.Low, r.High, r.SingleForks, r.HostsForks, r.Verdict, w.ratio, w.lo, w.hi, w.forks, w.verdict)
		}
	}
	if seen != len(wants) {
		t.Errorf("found %d of the %d rows worked out by hand in %d rows", seen, len(wants), len(rows))
	}
	// Every trial, the invalid one included: fork 1 of the multi-host run
	// is then the median of 1.0 and 9.0, 5.0, and the CPU-s ratio 1.02.
	rows, err = Compare(single, hosts, Options{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Variant == "virtual" && r.Metric == "target_cpu_s" && math.Abs(r.Ratio-1.02) > 1e-9 {
			t.Errorf("every trial: CPU-s ratio %v, want 1.02 (the invalid trial counted)", r.Ratio)
		}
	}
}

// The command on two run directories: the table (golden), and exit 1
// because a judged figure is outside the band (threads) and one is missing
// (webflux); a band of 20% does not save the threads' 0.875 either; with
// only figures inside or not settled it exits 0.
func TestRun(t *testing.T) {
	single, hosts := parityRuns()
	dirs := [2]string{t.TempDir(), t.TempDir()}
	for i, r := range []*record.Run{single, hosts} {
		if err := record.WriteJSON(dirs[i], record.RunFile, r.Meta); err != nil {
			t.Fatal(err)
		}
		if err := record.WriteCSV(dirs[i], record.TrialsFile, r.Trials); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{dirs[0], dirs[1]}, &out, &errb); code != 1 || errb.Len() > 0 {
		t.Errorf("exit %d (%s), want 1: threads outside, webflux missing", code, errb.String())
	}
	golden := filepath.Join("testdata", "parity.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if out.String() != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n%s", golden, out.String())
	}

	// Only the CPU-s and RSS of virtual: not settled and ok, exit 0.
	keep := func(r *record.Run) {
		var ts []record.Trial
		for _, x := range r.Trials {
			if x.Variant == "virtual" {
				x.TargetThreads = 40
				ts = append(ts, x)
			}
		}
		r.Trials = ts
	}
	keep(single)
	keep(hosts)
	for i, r := range []*record.Run{single, hosts} {
		if err := record.WriteCSV(dirs[i], record.TrialsFile, r.Trials); err != nil {
			t.Fatal(err)
		}
	}
	out.Reset()
	if code := run([]string{dirs[0], dirs[1]}, &out, &errb); code != 0 || !strings.Contains(out.String(), NotSettled) {
		t.Errorf("exit %d (%s), want 0: not settled is no failure\n%s", code, errb.String(), out.String())
	}
	for _, c := range []struct {
		why  string
		args []string
		code int
	}{
		{"one directory", []string{dirs[0]}, 2},
		{"a tolerance of 100%", []string{"--tolerance", "1", dirs[0], dirs[1]}, 2},
		{"not a run", []string{t.TempDir(), dirs[1]}, 1},
	} {
		errb.Reset()
		if code := run(c.args, &out, &errb); code != c.code || errb.Len() == 0 {
			t.Errorf("%s: exit %d, said %q; want %d and why", c.why, code, errb.String(), c.code)
		}
	}
}

// steadyManifest is the manifest of the runs TestCompareSteady reads.
const steadyManifest = `name: parity
title: steady reading
question: does --steady read what the verdicts read?
variants:
  virtual: {command: [v, "{port}"]}
load: {model: burst, burst: 600, requests: [{path: /}], warmup: 1s}
forks: 3
iterations: 12
`

// steadyRun is a run of steadyManifest: 3 forks of 12 bursts with flat
// wall times and RSS; its CPU-seconds fall from 2.0 over the first warm
// bursts of each fork (none when warm is 0) to a flat 1.0.
func steadyRun(warm int) *record.Run {
	r := &record.Run{Dir: "run-" + strings.Repeat("w", warm), Meta: record.Meta{Measured: "main"}, Manifest: []byte(steadyManifest)}
	seq := 0
	for f := 1; f <= 3; f++ {
		seq++
		for i := range 12 {
			cpu := 1.0 + 0.01*float64(i%3-1)
			if i < warm {
				cpu = 2.0 - float64(i)/float64(warm)
			}
			r.Trials = append(r.Trials, record.Trial{Variant: "virtual", Group: "main", Fork: f, Iteration: i + 1, Seq: seq, Trial: seq*100 + i,
				Valid: true, WallMs: 900 + float64(i%3), TargetCPUSec: cpu, TargetRSSMB: 300, TargetThreads: 40})
		}
	}
	return r
}

// TestCompareSteady: the multi-host run's CPU still falls over its first 6
// bursts while the single-machine run's is flat (the warm-up METHODOLOGY's
// "Per metric" measured). Every valid iteration puts the ratio well above
// 1; read as the verdicts read it (--steady), the CPU's own steady start
// leaves the falling bursts out and the ratio is 1. The RSS, which has no
// own steady state, is read the same both ways. --steady needs each run's
// manifest and refuses --all.
func TestCompareSteady(t *testing.T) {
	single, hosts := steadyRun(0), steadyRun(6)
	ratio := func(rows []Row, name string) float64 {
		for _, r := range rows {
			if r.Variant == "virtual" && r.Metric == name {
				return r.Ratio
			}
		}
		t.Fatalf("no virtual %s row", name)
		return 0
	}
	valid, err := Compare(single, hosts, Options{})
	if err != nil {
		t.Fatal(err)
	}
	steady, err := Compare(single, hosts, Options{Steady: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := ratio(valid, "target_cpu_s"); got < 1.05 {
		t.Errorf("every valid iteration: CPU-s ratio %.3f, want above 1.05 (the premise: the warm bursts count)", got)
	}
	if got := ratio(steady, "target_cpu_s"); math.Abs(got-1) > 0.011 {
		t.Errorf("--steady: CPU-s ratio %.3f, want 1 (the falling bursts left out)", got)
	}
	if a, b := ratio(valid, "target_peak_rss_mb"), ratio(steady, "target_peak_rss_mb"); a != 1 || b != 1 {
		t.Errorf("RSS ratio %v every valid iteration, %v steady: want 1 both", a, b)
	}
	bare := steadyRun(0)
	bare.Manifest = nil
	for _, c := range []struct {
		why    string
		single *record.Run
		o      Options
		want   string
	}{
		{"a run without its manifest", bare, Options{Steady: true}, "needs its manifest.yaml"},
		{"--steady with --all", single, Options{Steady: true, All: true}, "choose one"},
	} {
		if _, err := Compare(c.single, hosts, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.why, err, c.want)
		}
	}
}
