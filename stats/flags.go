package stats

import (
	"fmt"
	"math"
	"slices"
	"strings"

	mstats "github.com/montanaflynn/stats"

	"github.com/threadlab/threadlab/store/digits"
)

// Flag codes. They are data: carried to summary.csv and the report; they
// never make a claim's verdict harder to reach (METHODOLOGY.md, "Noise and
// validity flags").
const (
	FlagNoisyCV       = "noisy-cv"        // CV >= NoisyCV
	FlagOutlierTrial  = "outlier-trial"   // a trial >= OutlierDeviation away from the median
	FlagSlowFirst     = "slow-first"      // the first trial is much worse than the others
	FlagFewTrialsCI   = "few-trials-ci"   // fewer than MinTrialsCI trials: no interval of the median
	FlagFewTrialsTest = "few-trials-test" // fewer than MinTrialsTest trials: no comparison can be significant
	FlagBimodal       = "bimodal"         // the values fall into two groups (bimodalCrit)
)

// Bimodal rule. Forks of one cell can settle in two states (a JIT or GC
// decision taken differently per JVM): the median of forks then sits in
// whichever group has more forks, and an interval of it covers less than
// its level (review statistics.md). The rule splits the sorted values in
// two (each side at least 2 values, a gap of at least BimodalMinRel of the
// median between them) and takes the split that explains the largest
// share R² of their variance (between-group over total sum of squares, as
// 2-means does). It flags when R² reaches bimodalCrit: the 99th percentile
// of that best R² over samples of n standard normal values (20,000 per n),
// so one group of values trips it about 1 time in 100 whatever its spread
// (lognormal up to 30% CV: at most 1.8%, TestBimodalFalseAlarm). With few
// forks only a clean split shows: 30% apart at 2% CV it is found 71% of
// the time at 5 forks and always from 8; at 5% CV from 10% at 5 forks to
// 89% at 20.
const BimodalMinRel = 0.05

// bimodalCrit is the critical R² by number of values; a count between two
// rows takes the smaller count's (larger, so stricter) value.
var bimodalCrit = []struct {
	n    int
	crit float64
}{
	{4, 0.9931}, {5, 0.9831}, {6, 0.9678}, {7, 0.9513}, {8, 0.9357}, {9, 0.9209}, {10, 0.9116},
	{11, 0.8967}, {12, 0.8841}, {13, 0.8762}, {14, 0.8691}, {15, 0.8623}, {16, 0.854}, {17, 0.8492},
	{18, 0.8406}, {19, 0.8341}, {20, 0.8332}, {25, 0.8092}, {30, 0.7942}, {40, 0.7719},
}

// NoisyCV is pyperf's stability threshold: a standard deviation of 10% of the
// mean or more makes a single summary number untrustworthy.
const NoisyCV = 0.10

// OutlierDeviation is seed 000's swing: one trial of identical runs landed
// more than 50% away from the others (795 ms vs 1247 ms).
const OutlierDeviation = 0.50

// Slow-first thresholds. The first trial is "much" worse when it is the worst
// trial of all, at least SlowFirstRel worse than the median of the other
// trials (the same 10% that makes a cell noisy), and more than SlowFirstZ
// robust standard deviations away from it. The robust standard deviation is
// 1.4826 x the median absolute deviation of the other trials, floored at 1%
// of their median so that near-identical trials do not turn a trivial gap
// into an infinite score. This is hyperfine's modified z-score test on the
// first run (Iglewicz and Hoaglin's 3.5 cut-off; hyperfine uses 14 because it
// takes many more runs than a load test has trials), plus a practical floor.
const (
	SlowFirstRel = 0.10
	SlowFirstZ   = 3.5
)

// MinTrialsTest is the smallest number of trials per side for which the
// two-sided Mann-Whitney U test can reach p < 0.05: the smallest possible p
// is 2/C(2n, n), which is 0.100 for 3+3 and 0.029 for 4+4.
const MinTrialsTest = 4

// Flag is one noise or validity warning about a cell.
type Flag struct {
	Code    string
	Message string
}

func (f Flag) String() string { return f.Code + ": " + f.Message }

// Codes returns the codes of fs in order, for a summary.csv column.
func Codes(fs []Flag) []string {
	codes := make([]string, len(fs))
	for i, f := range fs {
		codes[i] = f.Code
	}
	return codes
}

// Flags checks one cell's trial values, given in the order the trials ran
// (the slow-first check needs it). higherIsBetter gives the direction of the
// metric (see HigherIsBetter): for throughput "slower" means lower. Each code
// appears at most once; outlier-trial names every offending trial.
func Flags(xs []float64, higherIsBetter bool) []Flag {
	var fs []Flag
	n := len(xs)
	if n < MinTrialsTest {
		fs = append(fs, Flag{FlagFewTrialsTest, fmt.Sprintf(
			"%d trials; a comparison needs at least %d per variant to reach p < 0.05 (set trials: %d or more)",
			n, MinTrialsTest, MinTrialsCI)})
	}
	if n < MinTrialsCI {
		fs = append(fs, Flag{FlagFewTrialsCI, fmt.Sprintf(
			"%d trials; a 95%% interval of the median needs at least %d (set trials: %d or more)",
			n, MinTrialsCI, MinTrialsCI)})
	}
	if n == 0 {
		return fs
	}
	s := Summarize(xs)
	if s.CV >= NoisyCV {
		fs = append(fs, Flag{FlagNoisyCV, fmt.Sprintf(
			"CV %.1f%% >= %.0f%%: the trials disagree more than a single number can say", 100*s.CV, 100*NoisyCV)})
	}
	if s.Median != 0 {
		var far []string
		for i, x := range xs {
			d := (x - s.Median) / math.Abs(s.Median)
			if math.Abs(d) >= OutlierDeviation {
				side := "above"
				if d < 0 {
					side = "below"
				}
				far = append(far, fmt.Sprintf("trial %d (%s) is %.0f%% %s the median %s",
					i+1, fmtNum(x), 100*math.Abs(d), side, fmtNum(s.Median)))
			}
		}
		if len(far) > 0 {
			fs = append(fs, Flag{FlagOutlierTrial, strings.Join(far, "; ") +
				fmt.Sprintf(" (>= %.0f%% away: look for a busy host or a cold start in that trial)", 100*OutlierDeviation)})
		}
	}
	if f, ok := slowFirst(xs, higherIsBetter); ok {
		fs = append(fs, f)
	}
	if f, ok := bimodal(xs); ok {
		fs = append(fs, f)
	}
	return fs
}

// bimodal applies the two-groups rule documented at BimodalMinRel.
func bimodal(xs []float64) (Flag, bool) {
	n := len(xs)
	if n < bimodalCrit[0].n {
		return Flag{}, false
	}
	crit := bimodalCrit[0].crit
	for _, c := range bimodalCrit {
		if c.n <= n {
			crit = c.crit
		}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := median(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	mean := sum / float64(n)
	var total float64
	for _, x := range s {
		total += (x - mean) * (x - mean)
	}
	if med == 0 || !(total > 0) || math.IsInf(total, 0) {
		return Flag{}, false
	}
	whole := !slices.ContainsFunc(s, func(x float64) bool { return x != math.Trunc(x) })
	best, at := 0.0, -1
	var left float64 // sum of s[:k]
	for k := 1; k < n; k++ {
		left += s[k-1]
		if k < 2 || n-k < 2 || s[k]-s[k-1] < BimodalMinRel*math.Abs(med) || whole && s[k]-s[k-1] <= 1 {
			continue // a count's step of 1 (gc_count 1, 1, 2, 2) is its resolution, not two states
		}
		ma, mb := left/float64(k), (sum-left)/float64(n-k)
		r2 := (float64(k)*(ma-mean)*(ma-mean) + float64(n-k)*(mb-mean)*(mb-mean)) / total
		if r2 >= crit && r2 > best {
			best, at = r2, k
		}
	}
	if at < 0 {
		return Flag{}, false
	}
	return Flag{FlagBimodal, fmt.Sprintf(
		"the values fall into two groups, %d at %s–%s and %d at %s–%s (the split explains %.0f%% of their variance; one group of %d values gives that less than 1 time in 100): "+
			"the median sits in the larger group and its interval covers less than its level; look for a JIT, GC or placement decision that differs by fork, and add forks",
		at, fmtNum(s[0]), fmtNum(s[at-1]), n-at, fmtNum(s[at]), fmtNum(s[n-1]), 100*best, n)}, true
}

// slowFirst applies the slow-first rule documented at SlowFirstRel.
func slowFirst(xs []float64, higherIsBetter bool) (Flag, bool) {
	if len(xs) < 3 {
		return Flag{}, false
	}
	// worse(a, b) is how much worse a is than b, in the metric's units.
	worse := func(a, b float64) float64 {
		if higherIsBetter {
			return b - a
		}
		return a - b
	}
	first, rest := xs[0], xs[1:]
	for _, x := range rest {
		if worse(first, x) <= 0 {
			return Flag{}, false // not the worst trial
		}
	}
	med := median(rest)
	if med == 0 {
		return Flag{}, false
	}
	gap := worse(first, med)
	rel := gap / math.Abs(med)
	mad, _ := mstats.MedianAbsoluteDeviationPopulation(rest)
	sigma := math.Max(1.4826*mad, 0.01*math.Abs(med))
	z := gap / sigma
	if rel < SlowFirstRel || z <= SlowFirstZ {
		return Flag{}, false
	}
	return Flag{FlagSlowFirst, fmt.Sprintf(
		"trial 1 (%s) is %.0f%% worse than the median of the others (%s), %.1f robust standard deviations away: "+
			"the warm-up is probably too short (lengthen load.warmup)",
		fmtNum(first), 100*rel, fmtNum(med), z)}, true
}

// fmtNum prints a measured value in a sentence (digits.Flag): whole
// numbers from 100 up, one decimal from 10, three significant digits below.
func fmtNum(x float64) string { return digits.Format(x, digits.Flag) }
