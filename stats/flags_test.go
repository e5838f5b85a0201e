package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestFlags(t *testing.T) {
	tests := []struct {
		name   string
		why    string
		xs     []float64
		higher bool
		codes  []string
		msg    string // a substring one of the messages must contain
	}{
		{
			name: "steady",
			why:  "six tight trials: nothing to warn about",
			// mean 100, squares 0+1+1+0+4+4 = 10, /5 = 2, sd 1.414, CV 1.4%
			xs: []float64{100, 101, 99, 100, 102, 98},
		},
		{
			name:  "three trials",
			why:   "3+3 trials cannot reach p < 0.05 (minimum p = 2/C(6,3) = 0.1), nor a 95% interval",
			xs:    []float64{100, 100, 100},
			codes: []string{FlagFewTrialsTest, FlagFewTrialsCI},
			msg:   "3 trials",
		},
		{
			name:  "five trials",
			why:   "enough for a test (min p 2/C(10,5) = 0.0079) but not an interval (0.9375 < 0.95)",
			xs:    []float64{100, 100, 100, 100, 100},
			codes: []string{FlagFewTrialsCI},
		},
		{
			name: "two groups of forks",
			why:  "3 forks at 100-102, 3 at 130-131: a gap of 28 is 9x the wider group's range and 24% of the median 116",
			// CV 13.5% also makes it noisy
			xs:    []float64{100, 130, 101, 131, 102, 130},
			codes: []string{FlagNoisyCV, FlagBimodal},
			msg:   "3 at 100–102 and 3 at 130–131",
		},
		{
			name:  "a count's step is no second state",
			why:   "gc_count 1, 1, 1, 2, 2, 2: a gap of one count is the metric's resolution",
			xs:    []float64{1, 2, 1, 2, 1, 2},
			codes: []string{FlagNoisyCV},
		},
		{
			name: "noisy",
			why:  "CV 17.8% >= 10%, no trial 50% away, first trial not the worst",
			// mean 105; deviations -5 25 -25 15 -15 5; squares 1750, /5 = 350, sd 18.71, CV 0.178
			xs:    []float64{100, 130, 80, 120, 90, 110},
			codes: []string{FlagNoisyCV},
			msg:   "CV 17.8%",
		},
		{
			name: "seed 000 swing",
			why:  "1247 is (1247-815)/815 = 53% above the median 815: the seed's swing, named by trial",
			// CV 0.2017 (see TestSummarize) also makes it noisy
			xs:    []float64{795, 1247, 810, 830, 802, 820},
			codes: []string{FlagNoisyCV, FlagOutlierTrial},
			msg:   "trial 2 (1247) is 53% above the median 815",
		},
		{
			name: "outlier below",
			why:  "a trial at half the median is as suspicious as one at 1.5x",
			// sorted 50 100 100 100 100 100: median 100; (50-100)/100 = -50%
			// mean 91.67, squares 1736.1+5*69.44 = 2083.3, /5 = 416.7, sd 20.4, CV 0.223
			xs:    []float64{100, 100, 50, 100, 100, 100},
			codes: []string{FlagNoisyCV, FlagOutlierTrial},
			msg:   "trial 3 (50.0) is 50% below the median 100",
		},
		{
			name: "slow first latency",
			why:  "first trial 12% above the others' median 100, MAD 0 so sigma floors at 1% = 1, z = 12 > 3.5",
			// mean 102; squares 100+4+4+1+9+4 = 122, /5 = 24.4, sd 4.94, CV 4.8%: not noisy
			xs:    []float64{112, 100, 100, 101, 99, 100},
			codes: []string{FlagSlowFirst},
			msg:   "trial 1 (112) is 12% worse than the median of the others (100)",
		},
		{
			name:   "slow first throughput",
			why:    "for rps slower means lower: 880 vs the others' median 1000 is 12% worse",
			higher: true,
			// rest 1000 1010 990 1000 1005: median 1000, |dev| 0 10 10 0 5 -> MAD 5,
			// sigma = max(1.4826*5, 1% of 1000) = 10, z = 120/10 = 12
			// mean 980.83, squares sum 12420.8, /5 = 2484.2, sd 49.8, CV 5.1%
			xs:    []float64{880, 1000, 1010, 990, 1000, 1005},
			codes: []string{FlagSlowFirst},
			msg:   "12.0 robust standard deviations",
		},
		{
			name: "low first latency is fine",
			why:  "the same numbers as latency: a first trial 12% faster is not a warm-up problem",
			xs:   []float64{880, 1000, 1010, 990, 1000, 1005},
		},
		{
			name: "first a little slow",
			why:  "5% worse with z = 5/1 = 5: statistically odd but under the 10% practical floor",
			xs:   []float64{105, 100, 100, 101, 99, 100},
		},
		{
			name: "first slow within the spread",
			why:  "20% worse, but the others spread too: MAD 5, sigma 7.41, z = 20/7.41 = 2.7 <= 3.5",
			// CV: mean 103.33, squares 583.3, /5 = 116.7, sd 10.8, CV 10.45% -> noisy instead
			xs:    []float64{120, 100, 90, 110, 95, 105},
			codes: []string{FlagNoisyCV},
		},
		{
			name: "zero median",
			why:  "error counts of mostly 0: no relative distance from a 0 median, so no outlier flag",
			// mean 0.833, sd 2.04, CV 2.45
			xs:    []float64{0, 0, 0, 5, 0, 0},
			codes: []string{FlagNoisyCV},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := Flags(tt.xs, tt.higher)
			if got := Codes(fs); !slices.Equal(got, tt.codes) {
				t.Fatalf("codes = %v, want %v (%s); flags: %v", got, tt.codes, tt.why, fs)
			}
			if tt.msg != "" && !slices.ContainsFunc(fs, func(f Flag) bool { return strings.Contains(f.Message, tt.msg) }) {
				t.Errorf("no message contains %q (%s); flags: %v", tt.msg, tt.why, fs)
			}
		})
	}
}

func TestFlagsNamesEveryOutlier(t *testing.T) {
	// median of 10 10 10 10 20 30 is 10: 20 is +100%, 30 is +200%; one flag names both
	fs := Flags([]float64{10, 20, 10, 30, 10, 10}, false)
	var msg string
	for _, f := range fs {
		if f.Code == FlagOutlierTrial {
			msg = f.Message
		}
	}
	for _, want := range []string{"trial 2 (20.0) is 100% above", "trial 4 (30.0) is 200% above"} {
		if !strings.Contains(msg, want) {
			t.Errorf("outlier message %q lacks %q", msg, want)
		}
	}
}

func TestHigherIsBetter(t *testing.T) {
	tests := []struct {
		metric       string
		higher, know bool
		why          string
	}{
		{"rps", true, true, "throughput"},
		{"requests", true, true, "completed requests in a fixed window"},
		{"achieved_rps", false, false, "not a trials.csv column: the metric package lists every one"},
		{"wall_ms", false, true, "burst wall time: seed 000's headline number"},
		{"p99_ms", false, true, "latency percentile"},
		{"errors", false, true, "failures"},
		{"error_pct", false, true, "failure share"},
		{"distinct_threads", false, true, "server threads used: fewer for the same work"},
		{"target_cpu_pct", false, true, "resource use"},
		{"rsp", false, false, "a typo must not pass as a metric"},
		{"_ms", false, false, "a bare suffix is not a column"},
	}
	for _, tt := range tests {
		if got := HigherIsBetter(tt.metric); got != tt.higher {
			t.Errorf("HigherIsBetter(%q) = %v, want %v (%s)", tt.metric, got, tt.higher, tt.why)
		}
		if got := KnownMetric(tt.metric); got != tt.know {
			t.Errorf("KnownMetric(%q) = %v, want %v (%s)", tt.metric, got, tt.know, tt.why)
		}
	}
}

// TestBimodalFalseAlarm: the bimodal rule fires on one group of values,
// normal or skewed (lognormal, as latencies are), about 1 time in 100 from
// 4 to 23 values and 5% to 30% CV (at most 2.5% here, 2,000 samples per
// row: 1% plus 3 standard errors and the lognormal's heavier tail), and
// finds two groups 30% apart at 2% CV from 6 forks on.
func TestBimodalFalseAlarm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const reps = 2000
	for _, n := range []int{4, 5, 6, 8, 10, 15, 20, 23} {
		for _, cv := range []float64{0.05, 0.10, 0.30} {
			for _, skew := range []bool{false, true} {
				fired := 0
				for range reps {
					xs := make([]float64, n)
					for i := range xs {
						if skew {
							xs[i] = 100 * math.Exp(cv*rng.NormFloat64())
						} else {
							xs[i] = 100 * (1 + cv*rng.NormFloat64())
						}
					}
					if _, ok := bimodal(xs); ok {
						fired++
					}
				}
				if rate := float64(fired) / reps; rate > 0.025 {
					t.Errorf("n=%d CV %.0f%% lognormal=%v: bimodal on %.3f of unimodal samples, want ≤ 0.025", n, 100*cv, skew, rate)
				}
			}
		}
	}
	for _, n := range []int{6, 8, 12} {
		found := 0
		for range reps {
			xs := make([]float64, n)
			for i := range xs {
				m := 100.0
				if i%2 == 1 {
					m = 130
				}
				xs[i] = m * (1 + 0.02*rng.NormFloat64())
			}
			if _, ok := bimodal(xs); ok {
				found++
			}
		}
		if rate := float64(found) / reps; rate < 0.85 {
			t.Errorf("n=%d: two groups 30%% apart at 2%% CV found in %.3f of samples, want ≥ 0.85", n, rate)
		}
	}
}
