package stats

import (
	"fmt"
	"math"
	"strings"
	"sync"
)

// Spending functions for Sequential.Spending.
const (
	// OBrienFleming is Lan & DeMets' O'Brien-Fleming-type spending function
	// α(t) = 2(1 − Φ(z_{1−α/2} / √t)): almost nothing spent at early looks,
	// so the last look keeps nearly the whole α and a fixed design's power.
	OBrienFleming = "obrien-fleming"
	// Pocock is Lan & DeMets' Pocock-type function α(t) = α ln(1 + (e − 1)t):
	// roughly equal nominal levels, so large effects stop early, at the cost
	// of power at the last look.
	Pocock = "pocock"
)

// Sequential places an evaluation in a group-sequential design: the claim
// is re-evaluated after each round of trials (a look) and the run stops
// once it is decided. Each one-sided test then runs at the nominal level of
// an alpha-spending boundary (Lan & DeMets 1983), computed for a Brownian
// motion observed at the looks' information fractions, so the chance of a
// false "supported" (or "contradicted") over all looks together stays at
// most Alpha. The rank statistics we use behave like such a process as
// replicates accrue (their increments are asymptotically independent), and
// the calibration suite checks the error rates at small n.
//
// The zero value is a single look: a fixed design at the full Alpha.
type Sequential struct {
	Look     int    // 1-based index of this look
	MaxLooks int    // the planned number of looks; the last one spends all of Alpha
	Spending string // OBrienFleming (default) or Pocock
	// Info is the information fraction at each look (replicates at that
	// look over replicates at the last), increasing, ending at 1; nil means
	// equally spaced (k / MaxLooks). TrialLooks fills it.
	Info []float64
}

// TrialLooks is the design of `trials: {min, max}`: a look after every
// round from min to max replicates, with information n/max. n is the
// replicates per cell at this look.
func TrialLooks(n, minN, maxN int) Sequential {
	if minN < 1 {
		minN = 1
	}
	if maxN < minN {
		maxN = minN
	}
	s := Sequential{Look: min(max(n, minN), maxN) - minN + 1, MaxLooks: maxN - minN + 1}
	for k := minN; k <= maxN; k++ {
		s.Info = append(s.Info, float64(k)/float64(maxN))
	}
	return s
}

// active reports whether s describes more than one look.
func (s Sequential) active() bool { return s.MaxLooks > 1 }

// final reports whether this is the last planned look.
func (s Sequential) final() bool { return !s.active() || s.Look >= s.MaxLooks }

// validate names a malformed design; Evaluate turns it into an
// inconclusive verdict rather than guess.
func (s Sequential) validate() error {
	if !s.active() {
		return nil
	}
	if s.Look < 1 {
		return fmt.Errorf("sequential look %d: looks count from 1", s.Look)
	}
	if s.Spending != "" && s.Spending != OBrienFleming && s.Spending != Pocock {
		return fmt.Errorf("sequential spending %q: use %q or %q", s.Spending, OBrienFleming, Pocock)
	}
	if s.Info != nil {
		if len(s.Info) != s.MaxLooks {
			return fmt.Errorf("sequential info has %d fractions for %d looks", len(s.Info), s.MaxLooks)
		}
		for i, t := range s.Info {
			if !(t > 0 && t <= 1) || (i > 0 && t <= s.Info[i-1]) || (i == len(s.Info)-1 && t != 1) {
				return fmt.Errorf("sequential info %v: fractions must increase within (0, 1] and end at 1", s.Info)
			}
		}
	}
	return nil
}

// Level returns the nominal one-sided significance level at this look for
// an overall level alpha: alpha itself for a single look, otherwise the
// boundary's nominal level 1 − Φ(c_k).
func (s Sequential) Level(alpha float64) float64 {
	if !s.active() {
		return alpha
	}
	k := min(s.Look, s.MaxLooks)
	return boundaries(alpha, s.spending(), s.info())[k-1]
}

func (s Sequential) spending() string {
	if s.Spending == "" {
		return OBrienFleming
	}
	return s.Spending
}

func (s Sequential) info() []float64 {
	if s.Info != nil {
		return s.Info
	}
	t := make([]float64, s.MaxLooks)
	for i := range t {
		t[i] = float64(i+1) / float64(s.MaxLooks)
	}
	return t
}

// spent is the cumulative α spent by information fraction t.
func spent(alpha float64, fn string, t float64) float64 {
	if fn == Pocock {
		return alpha * math.Log(1+(math.E-1)*t)
	}
	return 2 * (1 - stdNormalCDF(stdNormalQuantile(1-alpha/2)/math.Sqrt(t)))
}

var boundaryCache sync.Map // string -> []float64

// boundaries returns the nominal one-sided level at each look: c_k solves
// P(Z_1 < c_1, ..., Z_{k−1} < c_{k−1}, Z_k ≥ c_k) = α(t_k) − α(t_{k−1}) for
// Z_k = S(t_k)/√t_k, S a standard Brownian motion. The joint probability is
// the recursive numerical integration of Armitage, McPherson & Rowe (1969):
// the density of S on the continuation region is carried look to look on a
// grid and convolved with the Gaussian increment.
func boundaries(alpha float64, fn string, t []float64) []float64 {
	key := fmt.Sprintf("%g|%s|%v", alpha, fn, t)
	if b, ok := boundaryCache.Load(key); ok {
		return b.([]float64)
	}
	const h = 0.025 // grid step on the S scale
	levels := make([]float64, len(t))
	var grid, dens []float64 // S values and the density of S on the continuation region
	prevT, prevSpent := 0.0, 0.0
	for k, tk := range t {
		target := spent(alpha, fn, tk) - prevSpent
		var c float64
		if k == 0 {
			c = stdNormalQuantile(1 - target)
		} else {
			sd := math.Sqrt(tk - prevT)
			cross := func(c float64) float64 {
				p := 0.0
				for i, u := range grid {
					p += dens[i] * h * (1 - stdNormalCDF((c*math.Sqrt(tk)-u)/sd))
				}
				return p
			}
			lo, hi := -10.0, 40.0
			for range 100 {
				mid := (lo + hi) / 2
				if cross(mid) > target {
					lo = mid
				} else {
					hi = mid
				}
			}
			c = (lo + hi) / 2
		}
		levels[k] = 1 - stdNormalCDF(c)
		prevSpent += target
		// The density of S(t_k) below the boundary, for the next look.
		top := math.Min(c*math.Sqrt(tk), 12)
		var next, nextDens []float64
		for s := -12.0; s <= top; s += h {
			next = append(next, s)
			var d float64
			if k == 0 {
				d = math.Exp(-s*s/(2*tk)) / math.Sqrt(2*math.Pi*tk)
			} else {
				sd := math.Sqrt(tk - prevT)
				for i, u := range grid {
					z := (s - u) / sd
					d += dens[i] * h * math.Exp(-z*z/2) / (sd * math.Sqrt(2*math.Pi))
				}
			}
			nextDens = append(nextDens, d)
		}
		grid, dens, prevT = next, nextDens, tk
	}
	boundaryCache.Store(key, levels)
	return levels
}

// describe says in words where this look sits, for the method line.
func (s Sequential) describe(alpha float64) string {
	if !s.active() {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "group-sequential look %d of %d (%s-type alpha spending, Lan-DeMets), nominal one-sided level %s",
		min(s.Look, s.MaxLooks), s.MaxLooks, s.spending(), fmtP(s.Level(alpha)))
	return b.String()
}
