package stats

import (
	"math"
	"slices"

	mstats "github.com/montanaflynn/stats"
	"golang.org/x/perf/benchmath"
)

// Confidence is the coverage asked of every interval this package computes.
const Confidence = 0.95

// MinTrialsCI is the smallest number of trials for which an order-statistic
// interval of the median reaches 95% coverage: with n = 6 the interval
// [min, max] covers the population median with probability 1 - 2/2^6 = 0.969;
// with n = 5 it is only 1 - 2/2^5 = 0.938.
const MinTrialsCI = 6

// CIOrderStatistic names the method of Summary's interval: the distribution-
// free binomial interval between two order statistics (benchstat's method).
const CIOrderStatistic = "order-statistic"

// Summary describes one cell's trials. Floating-point fields that cannot be
// computed are NaN (and null in JSON): Stddev and CV need 2 trials, Low and
// High need MinTrialsCI trials.
type Summary struct {
	N      int
	Median float64
	Mean   float64
	Min    float64
	Max    float64
	Q1     float64 // median of the lower half (Tukey's hinge; the middle value excluded when N is odd)
	Q3     float64 // median of the upper half
	IQR    float64
	Stddev float64 // sample standard deviation (N-1)
	CV     float64 // Stddev / Mean as a fraction (0.1 = 10%)

	// Low and High bound the 95% confidence interval of the median: two order
	// statistics of the sorted trials, chosen from the Binomial(N, 1/2)
	// distribution so that no assumption about the shape of the data is
	// needed. NaN when N < MinTrialsCI.
	Low  float64
	High float64
	// Confidence is the coverage the chosen order statistics actually give
	// (at least 0.95; 0.969 for N = 6), 0 without an interval.
	Confidence float64
	// CIMethod is CIOrderStatistic, or "" without an interval.
	CIMethod string
}

// HasCI reports whether s carries a confidence interval of the median.
func (s Summary) HasCI() bool { return s.CIMethod != "" }

// Summarize describes trial values. It does not modify xs. The basics come
// from montanaflynn/stats; the interval comes from benchmath.AssumeNothing,
// which is benchstat's order-statistic interval, so numbers here match what
// benchstat would print for the same values.
func Summarize(xs []float64) Summary {
	nan := math.NaN()
	s := Summary{N: len(xs), Median: nan, Mean: nan, Min: nan, Max: nan, Q1: nan, Q3: nan,
		IQR: nan, Stddev: nan, CV: nan, Low: nan, High: nan}
	if len(xs) == 0 {
		return s
	}
	data := mstats.Float64Data(xs)
	// The library only fails on empty input (handled above) or, for the
	// spread, on a single value; those fields stay NaN.
	s.Median, _ = data.Median()
	s.Mean, _ = data.Mean()
	s.Min, _ = data.Min()
	s.Max, _ = data.Max()
	if q, err := mstats.Quartile(data); err == nil {
		s.Q1, s.Q3, s.IQR = q.Q1, q.Q3, q.Q3-q.Q1
	} else {
		s.Q1, s.Q3, s.IQR = s.Median, s.Median, 0
	}
	if sd, err := data.StandardDeviationSample(); err == nil {
		s.Stddev = sd
		if s.Mean != 0 {
			s.CV = sd / s.Mean
		}
	}
	if len(xs) >= MinTrialsCI {
		sample := benchmath.NewSample(slices.Clone(xs), &benchmath.DefaultThresholds)
		ci := benchmath.AssumeNothing.Summary(sample, Confidence)
		if !math.IsInf(ci.Lo, 0) && !math.IsInf(ci.Hi, 0) {
			s.Low, s.High, s.Confidence, s.CIMethod = ci.Lo, ci.Hi, ci.Confidence, CIOrderStatistic
		}
	}
	return s
}

// median is the plain sample median of xs (NaN when empty); it sorts a copy.
// Median is the median of xs (the mean of the middle two for an even
// count), NaN for none: the one median every package uses.
func Median(xs []float64) float64 { return median(xs) }

func median(xs []float64) float64 {
	m, err := mstats.Median(xs)
	if err != nil {
		return math.NaN()
	}
	return m
}
