package verdicts

import (
	"flag"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/stats/steady"
	"github.com/threadlab/threadlab/store/record"
)

// The replay of the until-steady stop rule on published runs (issue 20):
// each fork's warm-up rounds (warmup.csv) and measured bursts (trials.csv)
// are one series of the same load in one JVM, so the rule can be asked
// where it would have stopped, and the classification what it would
// still exclude of the bursts measured after that point. Read-only:
//
//	go test -run TestReplayWarmup -steady.replay data/io-bound/20261201T211300Z,data/boot-versions/20261201T194927Z ./judge/verdicts/
//
// (paths relative to the repository root; the test resolves them.)
var steadyReplay = flag.String("steady.replay", "", "comma-separated run directories to replay the warm-up stop rule on (TestReplayWarmup)")

// replayFork is one fork's series: warm-up rounds then measured bursts,
// with each round's length (for min/max).
type replayFork struct {
	cell   string
	fork   int
	xs, ms []float64
	warmed int // warm-up rounds the run made
	stop   string
}

func TestReplayWarmup(t *testing.T) {
	if *steadyReplay == "" {
		t.Skip("no -steady.replay runs given")
	}
	for _, dir := range strings.Split(*steadyReplay, ",") {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join("..", "..", dir)
		}
		m, err := experiments.Load(filepath.Join(dir, "manifest.yaml"), "")
		if err != nil {
			t.Fatal(err)
		}
		forks := replayForks(t, dir, m)
		w := m.Load.Warmup
		rule := steady.Settle{HigherIsBetter: metric.HigherIsBetter(m.Primary())}
		var longer, added, censored, exclBefore, exclAfter, measuredAfter, measuredBefore int
		var addedList []int
		for _, f := range forks {
			n, stop := replayStop(f, w.Min, w.Max, rule)
			measured := f.xs[f.warmed:]
			measuredBefore += len(measured)
			exclBefore += excluded(measured, rule.HigherIsBetter)
			if stop == "" {
				censored++ // would still be warming at the end of the recorded series
				n = len(f.xs)
			}
			if n > f.warmed {
				longer++
				added += n - f.warmed
				addedList = append(addedList, n-f.warmed)
			}
			after := f.xs[min(max(n, f.warmed), len(f.xs)):]
			measuredAfter += len(after)
			exclAfter += excluded(after, rule.HigherIsBetter)
			t.Logf("%s fork %d: warmed %d (%s), new rule: %s at round %d; post-hoc excluded %d of %d measured before, %d of %d after",
				f.cell, f.fork, f.warmed, f.stop, orStill(stop), n, excluded(measured, rule.HigherIsBetter), len(measured),
				excluded(after, rule.HigherIsBetter), len(after))
		}
		slices.Sort(addedList)
		med := 0
		if len(addedList) > 0 {
			med = addedList[len(addedList)/2]
		}
		t.Logf("%s: %d forks; %d would warm longer (%d still warming at the end of the recorded series), %d rounds added (median %d per longer fork); post-hoc excluded: %d of %d measured bursts as run, %d of the %d measured after the new stop",
			filepath.Base(filepath.Dir(dir))+"/"+filepath.Base(dir), len(forks), longer, censored, added, med, exclBefore, measuredBefore, exclAfter, measuredAfter)
	}
}

func orStill(s string) string {
	if s == "" {
		return "still warming"
	}
	return s
}

// replayStop asks the stop rule after every round of f, with the rounds'
// summed length as the elapsed time: the round at which it stops and why
// ("" when it never does within the series).
func replayStop(f *replayFork, minimum, maximum time.Duration, rule steady.Settle) (int, string) {
	var elapsed time.Duration
	for n := 1; n <= len(f.xs); n++ {
		elapsed += time.Duration(f.ms[n-1] * float64(time.Millisecond))
		if stop, _ := steady.Stop(f.xs[:n], elapsed, minimum, maximum, rule); stop != "" {
			return n, stop
		}
	}
	return len(f.xs), ""
}

// excluded is how many of the measured points the classification leaves
// out (all of them for no steady state), on at least MinSteadyPoints.
func excluded(xs []float64, higher bool) int {
	if len(xs) < experiments.MinSteadyPoints {
		return 0
	}
	return steady.Classify(xs, steady.Options{HigherIsBetter: higher}).Excluded()
}

func replayForks(t *testing.T, dir string, m *experiments.Manifest) []*replayFork {
	warm, err := record.ReadCSV[record.Trial](dir, record.WarmupFile)
	if err != nil {
		t.Fatal(err)
	}
	trials, err := record.ReadCSV[record.Trial](dir, record.TrialsFile)
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		cell string
		fork int
	}
	by := map[key]*replayFork{}
	var order []key
	add := func(r record.Trial, warmup bool) {
		if r.Group != m.Load.Measure {
			return
		}
		x, ok := metric.Value(r, m.Primary())
		if !ok || math.IsNaN(x) || x <= 0 {
			return
		}
		k := key{CellName(r.Variant, r.Point), r.Fork}
		f := by[k]
		if f == nil {
			f = &replayFork{cell: k.cell, fork: k.fork, stop: "fixed"}
			by[k] = f
			order = append(order, k)
		}
		if warmup {
			f.warmed++
			switch {
			case strings.Contains(r.Reason, "stop: steady"):
				f.stop = "steady"
			case strings.Contains(r.Reason, "stop: max"):
				f.stop = "max"
			}
		} else if !r.Valid {
			return // an invalid burst (host noise) is not a point of the series
		}
		f.xs = append(f.xs, x)
		f.ms = append(f.ms, r.WallMs)
	}
	slices.SortStableFunc(warm, func(a, b record.Trial) int { return a.Seq - b.Seq })
	for _, r := range warm {
		add(r, true)
	}
	slices.SortStableFunc(trials, func(a, b record.Trial) int { return a.Seq*1000 + a.Iteration - b.Seq*1000 - b.Iteration })
	for _, r := range trials {
		add(r, false)
	}
	out := make([]*replayFork, len(order))
	for i, k := range order {
		out[i] = by[k]
	}
	if len(out) == 0 {
		t.Fatalf("%s: no forks of group %q", dir, m.Load.Measure)
	}
	return out
}
