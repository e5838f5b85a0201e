package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	base := []float64{100, 101, 99, 100, 102, 98} // median 100, CV 1.41% (see TestFlags "steady")
	tests := []struct {
		name        string
		why         string
		a, b        []float64
		p, delta    float64
		band        float64
		significant bool
		verdict     string
		note        string
	}{
		{
			name: "identical",
			why:  "the same trials on both sides: U1 = U2 = 18, p = 1, never a winner",
			a:    base, b: base,
			p: 1, delta: 0, band: 0.014142, verdict: "~", note: "no significant difference",
		},
		{
			name: "doubled",
			why:  "every B trial above every A trial: exact two-sided p = 2/C(12,6) = 2/924 = 0.0021645",
			a:    base, b: scale(base, 2),
			// Δ = 200/100 - 1 = +100%; band = max(1%, CV_a 1.41%, CV_b 1.41%)
			p: 0.0021645, delta: 1, band: 0.014142, significant: true, verdict: "+100.0%",
		},
		{
			name: "halved",
			why:  "a faster B is a negative delta with the same p",
			a:    base, b: scale(base, 0.5),
			p: 0.0021645, delta: -0.5, band: 0.014142, significant: true, verdict: "-50.0%",
		},
		{
			name: "real but tiny",
			why:  "fully separated (p = 0.0022) but Δ = 100.85/100.25 - 1 = 0.60% is under the 1% minimum effect",
			a:    []float64{100.0, 100.1, 100.2, 100.3, 100.4, 100.5},
			b:    []float64{100.6, 100.7, 100.8, 100.9, 101.0, 101.1},
			// CV_a = 0.18708/100.25 = 0.19%, CV_b = 0.18708/100.85 = 0.19%: band = 1%
			p: 0.0021645, delta: 0.0059850, band: 0.01, verdict: "~", note: "inside the noise band ±1.0% (minimum effect)",
		},
		{
			name: "three trials each",
			why:  "even full separation gives p = 2/C(6,3) = 0.1 with 3+3: too few to ever reject",
			a:    []float64{100, 101, 102}, b: []float64{200, 201, 202},
			// CV_a = 1/101 = 0.99% < 1%, CV_b = 1/201: band is the 1% minimum
			p: 0.1, delta: 201.0/101 - 1, band: 0.01, verdict: "~", note: "need >= 4 samples",
		},
		{
			name: "four trials each",
			why:  "4+4 fully separated: p = 2/C(8,4) = 2/70 = 0.028571 < 0.05",
			a:    []float64{100, 101, 102, 103}, b: []float64{200, 201, 202, 203},
			// medians 101.5 and 201.5; CV_a = 1.29099/101.5 = 1.27%
			p: 0.028571, delta: 201.5/101.5 - 1, band: 0.012719, significant: true, verdict: "+98.5%",
		},
		{
			name: "empty side",
			why:  "a missing cell compares as p = 1 with the reason in the note",
			a:    base, b: nil,
			p: 1, delta: math.NaN(), band: 0.014142, verdict: "~", note: "no trials on one side",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := slices.Clone(tt.a), slices.Clone(tt.b)
			c := Compare(tt.a, tt.b, 0.05)
			if !slices.Equal(a, tt.a) || !slices.Equal(b, tt.b) {
				t.Fatalf("Compare modified its inputs")
			}
			if !near(c.P, tt.p) || !near(c.PAdj, tt.p) {
				t.Errorf("P = %v, PAdj = %v, want %v (%s)", c.P, c.PAdj, tt.p, tt.why)
			}
			if !near(c.Delta, tt.delta) {
				t.Errorf("Delta = %v, want %v (%s)", c.Delta, tt.delta, tt.why)
			}
			if !math.IsNaN(tt.delta) && !near(c.Ratio, 1+tt.delta) {
				t.Errorf("Ratio = %v, want %v (%s)", c.Ratio, 1+tt.delta, tt.why)
			}
			if !near(c.Band, tt.band) {
				t.Errorf("Band = %v, want %v (%s)", c.Band, tt.band, tt.why)
			}
			if c.Significant != tt.significant || c.Verdict != tt.verdict {
				t.Errorf("Significant = %v, Verdict = %q; want %v, %q (%s); note %q",
					c.Significant, c.Verdict, tt.significant, tt.verdict, tt.why, c.Note)
			}
			if !strings.Contains(c.Note, tt.note) {
				t.Errorf("Note = %q, want it to contain %q (%s)", c.Note, tt.note, tt.why)
			}
		})
	}
}

// TestCompareNoiseBandFromCV checks that a shift smaller than the trials'
// own spread is "~" even when many trials make it statistically real.
func TestCompareNoiseBandFromCV(t *testing.T) {
	// 40 trials alternating about 90 and 110 (mean about 100, sd^2 about
	// 40*100/39, CV about 10.1%), and the same scaled by 1.05: a +5% shift,
	// which 40+40 trials make significant, but half the trials' own spread.
	a, b := make([]float64, 40), make([]float64, 40)
	for i := range a {
		a[i] = 90 + 20*float64(i%2) + 0.01*float64(i)
		b[i] = a[i] * 1.05
	}
	c := Compare(a, b, 0.05)
	cvA := Summarize(a).CV
	if !(c.P < 0.05) {
		t.Fatalf("P = %v; want a rejecting test so that only the band can say ~", c.P)
	}
	if !near(c.Band, cvA) || cvA < 0.10 {
		t.Errorf("Band = %v, want CV of A %v (about 10%%)", c.Band, cvA)
	}
	if c.Verdict != "~" || c.Significant || !strings.Contains(c.Note, "inside the noise band") {
		t.Errorf("Verdict %q, Significant %v, Note %q: want ~ inside the noise band", c.Verdict, c.Significant, c.Note)
	}
}

func TestHolm(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		why  string
		ps   []float64
		want []float64
	}{
		{
			name: "four points",
			why:  "sorted 0.005 0.01 0.03 0.04 times 4 3 2 1 = 0.02 0.03 0.06 0.04; running max keeps 0.06 for the last",
			ps:   []float64{0.01, 0.04, 0.03, 0.005},
			want: []float64{0.03, 0.06, 0.06, 0.02},
		},
		{
			name: "capped",
			why:  "0.5*2 = 1 and 0.6*1 = 0.6 -> running max 1, 1",
			ps:   []float64{0.5, 0.6},
			want: []float64{1, 1},
		},
		{
			name: "single",
			why:  "a family of one is not corrected",
			ps:   []float64{0.02},
			want: []float64{0.02},
		},
		{
			name: "ties",
			why:  "0.01*2 = 0.02, 0.01*1 = 0.01 -> running max 0.02 for both",
			ps:   []float64{0.01, 0.01},
			want: []float64{0.02, 0.02},
		},
		{
			name: "untestable point",
			why:  "NaN counts as 1 in a family of 2: 0.01*2 = 0.02, 1*1 = 1",
			ps:   []float64{nan, 0.01},
			want: []float64{1, 0.02},
		},
		{
			name: "empty",
			why:  "nothing to correct",
			ps:   []float64{},
			want: []float64{},
		},
	}
	for _, tt := range tests {
		got := Holm(tt.ps)
		if len(got) != len(tt.want) {
			t.Fatalf("%s: Holm(%v) = %v, want %v (%s)", tt.name, tt.ps, got, tt.want, tt.why)
		}
		for i := range got {
			if !near(got[i], tt.want[i]) {
				t.Errorf("%s: Holm(%v) = %v, want %v (%s)", tt.name, tt.ps, got, tt.want, tt.why)
				break
			}
		}
	}
}

// TestHolmProperties: for random families, adjusted p >= raw p, adjusted
// p <= 1, the order of the raw p-values is kept, and Holm never rejects
// more hypotheses than the uncorrected test at the same alpha.
func TestHolmProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		m := 1 + rng.IntN(12)
		ps := make([]float64, m)
		for i := range ps {
			ps[i] = math.Pow(rng.Float64(), 1+4*rng.Float64()) // skewed toward small p
		}
		adj := Holm(ps)
		rawRejects, holmRejects := 0, 0
		for i := range ps {
			if adj[i] < ps[i] || adj[i] > 1 {
				t.Fatalf("Holm(%v)[%d] = %v: want raw <= adjusted <= 1", ps, i, adj[i])
			}
			for j := range ps {
				if ps[i] < ps[j] && adj[i] > adj[j] {
					t.Fatalf("Holm(%v) = %v: order of %d and %d reversed", ps, adj, i, j)
				}
			}
			if ps[i] < Alpha {
				rawRejects++
			}
			if adj[i] < Alpha {
				holmRejects++
				if !(ps[i] < Alpha) {
					t.Fatalf("Holm(%v) rejects %d which the raw test keeps", ps, i)
				}
			}
		}
		if holmRejects > rawRejects {
			t.Fatalf("Holm(%v) rejects %d > %d uncorrected", ps, holmRejects, rawRejects)
		}
	}
}

func TestAdjustHolm(t *testing.T) {
	base := []float64{100, 101, 99, 100, 102, 98}
	// Three fully separated 4+4 comparisons: raw p = 2/70 = 0.028571 each;
	// Holm gives 3*0.028571 = 0.0857 for the smallest, and the rest carry the max.
	four := base[:4]
	cs := []Comparison{
		Compare(four, scale(four, 2), 0.05),
		Compare(four, scale(four, 3), 0.05),
		Compare(four, scale(four, 4), 0.05),
	}
	for i := range cs {
		if !cs[i].Significant {
			t.Fatalf("comparison %d not significant before correction: %+v", i, cs[i])
		}
	}
	AdjustHolm(cs)
	for i, c := range cs {
		if !near(c.PAdj, 3*2.0/70) || c.Significant || c.Verdict != "~" {
			t.Errorf("comparison %d after Holm: PAdj %v Significant %v Verdict %q; want 0.0857, false, ~", i, c.PAdj, c.Significant, c.Verdict)
		}
		if !strings.Contains(c.Note, "Holm-adjusted 0.086") {
			t.Errorf("comparison %d note %q does not give the adjusted p", i, c.Note)
		}
	}
}

func TestRegression(t *testing.T) {
	base := []float64{100, 101, 99, 100, 102, 98}
	tests := []struct {
		name   string
		why    string
		a, b   []float64
		metric string
		want   bool
	}{
		{"latency doubled", "wall_ms +100% is worse", base, scale(base, 2), "wall_ms", true},
		{"latency halved", "wall_ms -50% is better", base, scale(base, 0.5), "wall_ms", false},
		{"throughput halved", "rps -50% is worse", base, scale(base, 0.5), "rps", true},
		{"throughput doubled", "rps +100% is better", base, scale(base, 2), "rps", false},
		{"no difference", "a ~ is never a regression", base, base, "wall_ms", false},
	}
	for _, tt := range tests {
		if got := Compare(tt.a, tt.b, Alpha).Regression(HigherIsBetter(tt.metric)); got != tt.want {
			t.Errorf("%s: Regression = %v, want %v (%s)", tt.name, got, tt.want, tt.why)
		}
	}
}
