package experiments

import (
	"fmt"
	"math"
	"strconv"

	"github.com/threadlab/threadlab/stats"
)

// lintDecidable warns about a claim that no data can support with the
// manifest's forks. Every test a claim's unit runs has a smallest one-sided
// p on n forks per cell (the sign and signed-rank tests 1/2^n, Mann-Whitney
// 1/C(2n, n), Jonckheere-Terpstra over L levels n!^L/(Ln)!). A claim is
// supported when every unit supports it at the level, an intersection-union
// test with no correction across units (stats/judge.go), so the
// number of points does not enter: when one unit's smallest p is above the
// level the claim stays inconclusive whatever the server does (an absolute
// check on 4 forks reaches 1/16 at best). Below 3 forks the replication
// warnings already say that no claim is decided.
func (m *Manifest) lintDecidable(warn func(string, string, ...any)) {
	n := m.Forks.Max
	if n < 3 {
		return
	}
	for i, c := range m.Claims {
		best, units, test, _ := m.bestP(c.Check, n)
		if units == 0 || best <= stats.Alpha {
			continue
		}
		need := n
		for need < 64 {
			need++
			if b, _, _, _ := m.bestP(c.Check, need); b <= stats.Alpha {
				break
			}
		}
		warn(fmt.Sprintf("claims[%d]", i), "claim %q can never be supported on %d forks: its %s reaches p = %s at best, above %g (raise forks to %d)",
			c.ID, n, test, fmtP(best), stats.Alpha, need)
	}
}

// bestP is the smallest one-sided p one unit of check k can reach on n
// forks per cell, the number of units the claim is decided at, the test's
// name and the units' name (plural); units is 0 for a check of no form.
func (m *Manifest) bestP(k stats.Check, n int) (best float64, units int, test, unit string) {
	mw := 1 / binom(2*n, n)
	switch kinds := claimKind(k); {
	case len(kinds) != 1 && len(kinds) != 0:
		return 0, 0, "", ""
	case len(kinds) == 0:
		return math.Pow(0.5, float64(n)), m.points(k.Where, ""), "sign or signed-rank test", "points"
	case kinds[0] == "compare":
		return mw, m.points(k.Where, ""), "Mann-Whitney U", "points"
	case kinds[0] == "flat_over":
		for key, vs := range k.FlatOver {
			l := len(vs)
			return mw, m.points(k.Where, key) * l * (l - 1) / 2, "equivalence test of each pair", "pairs"
		}
	default:
		over := k.IncreasesOver
		if kinds[0] == "decreases_over" {
			over = k.DecreasesOver
		}
		for key, vs := range over {
			l := len(vs)
			// (l n)! / (n!)^l orderings of l groups of n, one of them the most extreme
			lg, _ := math.Lgamma(float64(l*n + 1))
			ln, _ := math.Lgamma(float64(n + 1))
			return math.Exp(float64(l)*ln - lg), m.points(k.Where, key), "Jonckheere-Terpstra test", "slices"
		}
	}
	return 0, 0, "", ""
}

// points counts the sweep points a check reads: per sweep key, the values
// its where keeps (all of them without one), multiplied; the key a trend
// or flat_over runs along is left out (it is the unit's inside).
func (m *Manifest) points(where map[string][]string, along string) int {
	p := 1
	for _, d := range m.Sweep {
		switch {
		case d.Name == along:
		case len(where[d.Name]) > 0:
			p *= len(where[d.Name])
		case len(d.Values) > 0:
			p *= len(d.Values)
		}
	}
	return p
}

// binom is C(n, k) as a float.
func binom(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return math.Round(math.Exp(a - b - c))
}

// fmtP prints a p-value with three significant digits.
func fmtP(p float64) string { return strconv.FormatFloat(p, 'g', 3, 64) }
