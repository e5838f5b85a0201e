package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// near reports whether got is within 1e-4 (relative, or absolute near 0) of
// want; NaN equals NaN so that "not computed" rows can be checked too.
func near(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= 1e-4*math.Max(1, math.Abs(want))
}

func TestSummarize(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		why  string
		xs   []float64
		want Summary
	}{
		{
			name: "seed 000 webflux swing",
			why:  "the trial set that motivated the package: one trial 50% off, CI spans it",
			// sorted 795 802 810 | 820 830 1247
			// median (810+820)/2 = 815; mean 5304/6 = 884
			// Q1 = median(795,802,810) = 802; Q3 = median(820,830,1247) = 830; IQR 28
			// deviations -89 363 -74 -54 -82 -64, squares sum 158902, /5 = 31780.4, sd = 178.2706
			// CV = 178.2706/884 = 0.201663
			// n=6: P(Binomial(6,1/2) in 1..5) = 1 - 2/64 = 0.96875 >= 0.95 with [x1, x6] = [795, 1247]
			xs:   []float64{795, 1247, 810, 830, 802, 820},
			want: Summary{N: 6, Median: 815, Mean: 884, Min: 795, Max: 1247, Q1: 802, Q3: 830, IQR: 28, Stddev: 178.2706, CV: 0.201663, Low: 795, High: 1247, Confidence: 0.96875, CIMethod: CIOrderStatistic},
		},
		{
			name: "ten trials",
			why:  "n=10 is the first size where the interval drops the extremes",
			// median (5+6)/2 = 5.5; Q1 = median(1..5) = 3; Q3 = median(6..10) = 8
			// squares of deviations from 5.5: 2*(0.25+2.25+6.25+12.25+20.25) = 82.5, /9 = 9.16667, sd 3.027650
			// CV = 3.027650/5.5 = 0.550482
			// [x2, x9]: 1 - 2*(C(10,0)+C(10,1))/1024 = 1 - 22/1024 = 0.978515625; [x3, x8] gives 0.891 < 0.95
			xs:   []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1},
			want: Summary{N: 10, Median: 5.5, Mean: 5.5, Min: 1, Max: 10, Q1: 3, Q3: 8, IQR: 5, Stddev: 3.027650, CV: 0.550482, Low: 2, High: 9, Confidence: 0.978515625, CIMethod: CIOrderStatistic},
		},
		{
			name: "nine trials",
			why:  "odd n: quartiles exclude the middle value, interval [x2, x8]",
			// Q1 = median(1,2,3,4) = 2.5, Q3 = median(6,7,8,9) = 7.5
			// squares from 5: 2*(1+4+9+16) = 60, /8 = 7.5, sd 2.738613; CV 0.547723
			// [x2, x8]: 1 - 2*(1+9)/512 = 0.9609375
			xs:   []float64{1, 2, 3, 4, 5, 6, 7, 8, 9},
			want: Summary{N: 9, Median: 5, Mean: 5, Min: 1, Max: 9, Q1: 2.5, Q3: 7.5, IQR: 5, Stddev: 2.738613, CV: 0.547723, Low: 2, High: 8, Confidence: 0.9609375, CIMethod: CIOrderStatistic},
		},
		{
			name: "eight trials",
			why:  "n=8: benchmath takes the shortest interval, which is not symmetric",
			// [x2, x7] covers 1 - 2*(1+8)/256 = 0.930 < 0.95; [x1, x7] covers k = 1..6:
			// 1 - (C(8,0) + C(8,7) + C(8,8))/256 = 1 - 10/256 = 0.9609375 (left-biased tie-break)
			// median 4.5; Q1 = median(1..4) = 2.5, Q3 = median(5..8) = 6.5
			// squares from 4.5: 2*(0.25+2.25+6.25+12.25) = 42, /7 = 6, sd 2.449490, CV 0.544331
			xs:   []float64{8, 7, 6, 5, 4, 3, 2, 1},
			want: Summary{N: 8, Median: 4.5, Mean: 4.5, Min: 1, Max: 8, Q1: 2.5, Q3: 6.5, IQR: 4, Stddev: 2.449490, CV: 0.544331, Low: 1, High: 7, Confidence: 0.9609375, CIMethod: CIOrderStatistic},
		},
		{
			name: "seven trials",
			why:  "n=7 needs the full range: [x2, x6] covers only 1 - 2*(1+7)/128 = 0.875",
			// [x1, x7]: 1 - 2/128 = 0.984375; Q1 = median(1,2,3) = 2, Q3 = median(5,6,7) = 6
			// squares from 4: 2*(1+4+9) = 28, /6 = 4.66667, sd 2.160247, CV 0.540062
			xs:   []float64{4, 1, 7, 2, 6, 3, 5},
			want: Summary{N: 7, Median: 4, Mean: 4, Min: 1, Max: 7, Q1: 2, Q3: 6, IQR: 4, Stddev: 2.160247, CV: 0.540062, Low: 1, High: 7, Confidence: 0.984375, CIMethod: CIOrderStatistic},
		},
		{
			name: "five trials",
			why:  "n=5 cannot reach 95%: [x1, x5] covers 1 - 2/32 = 0.9375, so no interval",
			// Q1 = median(10,11) = 10.5, Q3 = median(13,14) = 13.5
			// squares from 12: 4+1+0+1+4 = 10, /4 = 2.5, sd 1.581139, CV 0.131762
			xs:   []float64{10, 12, 11, 13, 14},
			want: Summary{N: 5, Median: 12, Mean: 12, Min: 10, Max: 14, Q1: 10.5, Q3: 13.5, IQR: 3, Stddev: 1.581139, CV: 0.131762, Low: nan, High: nan},
		},
		{
			name: "one trial",
			why:  "no spread from one value: quartiles collapse, stddev and CV undefined",
			xs:   []float64{42},
			want: Summary{N: 1, Median: 42, Mean: 42, Min: 42, Max: 42, Q1: 42, Q3: 42, IQR: 0, Stddev: nan, CV: nan, Low: nan, High: nan},
		},
		{
			name: "no trials",
			why:  "an empty cell is all NaN, never zeros that look like measurements",
			xs:   nil,
			want: Summary{Median: nan, Mean: nan, Min: nan, Max: nan, Q1: nan, Q3: nan, IQR: nan, Stddev: nan, CV: nan, Low: nan, High: nan},
		},
		{
			name: "mean zero",
			why:  "CV divides by the mean; a zero mean leaves it undefined rather than infinite",
			// mean 0; squares 1+1+1+1 = 4, /3 = 1.33333, sd 1.154701
			xs:   []float64{-1, 1, -1, 1},
			want: Summary{N: 4, Median: 0, Mean: 0, Min: -1, Max: 1, Q1: -1, Q3: 1, IQR: 2, Stddev: 1.154701, CV: nan, Low: nan, High: nan},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.xs)
			got := Summarize(tt.xs)
			if !slices.Equal(in, tt.xs) {
				t.Fatalf("Summarize modified its input: %v -> %v", in, tt.xs)
			}
			w := tt.want
			checks := []struct {
				field     string
				got, want float64
			}{
				{"Median", got.Median, w.Median}, {"Mean", got.Mean, w.Mean}, {"Min", got.Min, w.Min},
				{"Max", got.Max, w.Max}, {"Q1", got.Q1, w.Q1}, {"Q3", got.Q3, w.Q3}, {"IQR", got.IQR, w.IQR},
				{"Stddev", got.Stddev, w.Stddev}, {"CV", got.CV, w.CV}, {"Low", got.Low, w.Low},
				{"High", got.High, w.High}, {"Confidence", got.Confidence, w.Confidence},
			}
			if got.N != w.N {
				t.Errorf("N = %d, want %d (%s)", got.N, w.N, tt.why)
			}
			for _, c := range checks {
				if !near(c.got, c.want) {
					t.Errorf("%s = %v, want %v (%s)", c.field, c.got, c.want, tt.why)
				}
			}
			if got.CIMethod != w.CIMethod || got.HasCI() != (w.CIMethod != "") {
				t.Errorf("CIMethod = %q, HasCI = %v, want %q (%s)", got.CIMethod, got.HasCI(), w.CIMethod, tt.why)
			}
		})
	}
}

// TestCIContainsMedian is a property test: for any sample with an
// interval, Low <= Median <= High, and the actual coverage is at least the
// 95% asked for. Samples are log-normal (latency-like) and seeded.
func TestCIContainsMedian(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		n := MinTrialsCI + rng.IntN(40)
		xs := make([]float64, n)
		for j := range xs {
			xs[j] = 100 * math.Exp(0.5*rng.NormFloat64())
		}
		if i%7 == 0 { // ties, as rounded measurements produce
			for j := range xs {
				xs[j] = math.Round(xs[j] / 20)
			}
		}
		s := Summarize(xs)
		if !s.HasCI() {
			t.Fatalf("n=%d: no interval, want one for n >= %d", n, MinTrialsCI)
		}
		if !(s.Low <= s.Median && s.Median <= s.High) {
			t.Fatalf("n=%d: median %v outside [%v, %v] for %v", n, s.Median, s.Low, s.High, xs)
		}
		if s.Confidence < Confidence {
			t.Fatalf("n=%d: coverage %v < %v", n, s.Confidence, Confidence)
		}
		if s.Low < s.Min || s.High > s.Max {
			t.Fatalf("n=%d: interval [%v, %v] leaves the sample range [%v, %v]", n, s.Low, s.High, s.Min, s.Max)
		}
	}
}
