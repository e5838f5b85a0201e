package stats

import (
	"math"
	"slices"
	"sync"
)

// This file holds the one-sided rank tests behind every claim: Mann-Whitney
// U (two samples), Wilcoxon signed-rank and the sign test (one sample
// against a bound), and Jonckheere-Terpstra (ordered samples). Each returns
// the p-value of its alternative. Exact null distributions are used when
// there are no ties (the calibration suite's continuous data, and most
// measurements); with ties the normal approximation with the tie-corrected
// variance and a continuity correction, as in Hollander & Wolfe,
// "Nonparametric Statistical Methods" (3rd ed.), sections 3.1, 4.1 and 6.2.

// exactLimit bounds the sample sizes for which exact distributions are
// computed; beyond it the normal approximation is accurate to well under the
// precision we print.
const exactLimit = 60

// mwGreater is the one-sided Mann-Whitney U p-value for "a is stochastically
// greater than b": P(U >= u) under the null, where U counts pairs a_i > b_j
// (ties count 1/2). 1 when either sample is empty.
func mwGreater(a, b []float64) float64 {
	m, n := len(a), len(b)
	if m == 0 || n == 0 {
		return 1
	}
	u, ties := 0.0, false
	for _, x := range a {
		for _, y := range b {
			switch {
			case x > y:
				u++
			case x == y:
				u += 0.5
				ties = true
			}
		}
	}
	if !ties && !hasTies(a) && !hasTies(b) && m <= exactLimit && n <= exactLimit {
		return upperTail(mwDist(m, n), int(u))
	}
	all := append(slices.Clone(a), b...)
	if m+n <= exactTiesLimit {
		return mwTiesExact(a, all, u)
	}
	N := float64(m + n)
	v := float64(m*n) / 12 * (N + 1 - tieSum(all, func(t float64) float64 { return t*t*t - t })/(N*(N-1)))
	return normalUpper(u, float64(m*n)/2, v)
}

// exactTiesLimit bounds the pooled size for which the exact permutation
// distribution with ties is counted (a subset-sum table of about
// N x N/2 x N^2 cells); larger samples use the normal approximation.
const exactTiesLimit = 40

// mwTiesExact is P(U >= u) under the permutation null with ties: every
// choice of len(a) of the pooled values as sample a is equally likely, and
// U = W_a - m(m+1)/2 where W_a is a's sum of midranks. Midranks are
// doubled so that the table is indexed by integers. This is the exact
// conditional test (Hollander & Wolfe 4.1, comment 10), which matters for
// the small integer samples (error counts, thread counts) where the normal
// approximation is poor.
func mwTiesExact(a, all []float64, u float64) float64 {
	m := len(a)
	ranks := midranks(all)
	r2 := make([]int, len(all))
	maxSum := 0
	for i, r := range ranks {
		r2[i] = int(math.Round(2 * r))
		maxSum += r2[i]
	}
	// ways[k][s]: subsets of size k with doubled rank sum s.
	ways := make([][]float64, m+1)
	for k := range ways {
		ways[k] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	for i, r := range r2 {
		for k := min(i+1, m); k >= 1; k-- {
			for s := maxSum; s >= r; s-- {
				ways[k][s] += ways[k-1][s-r]
			}
		}
	}
	w2 := int(math.Round(2*u)) + m*(m+1) // doubled W_a
	tail, total := 0.0, 0.0
	for s, c := range ways[m] {
		total += c
		if s >= w2 {
			tail += c
		}
	}
	return math.Min(1, tail/total)
}

// normalUpper is P(X >= x) for a count statistic X with the given mean and
// variance, with a continuity correction of 1/2. A zero variance (every
// value tied) carries no evidence: p = 1.
func normalUpper(x, mean, variance float64) float64 {
	if !(variance > 0) {
		return 1
	}
	z := (x - mean - 0.5) / math.Sqrt(variance)
	return 1 - stdNormalCDF(z)
}

// hasTies reports whether xs has two equal values.
func hasTies(xs []float64) bool {
	s := slices.Clone(xs)
	slices.Sort(s)
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			return true
		}
	}
	return false
}

// tieSum sums f(t) over the sizes t of the groups of equal values in xs.
func tieSum(xs []float64, f func(t float64) float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	sum := 0.0
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		sum += f(float64(j - i))
		i = j
	}
	return sum
}

// upperTail is P(X >= x) for a distribution over 0..len(dist)-1.
func upperTail(dist []float64, x int) float64 {
	if x <= 0 {
		return 1
	}
	p := 0.0
	for k := x; k < len(dist); k++ {
		p += dist[k]
	}
	return math.Min(1, p)
}

var mwCache sync.Map // [2]int -> []float64

// mwDist is the exact null distribution of U for sizes m and n: the
// coefficients of the Gaussian binomial [m+n choose m]_q divided by
// C(m+n, m), i.e. prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), normalized.
// For m = n = 2: 1 + q + 2q^2 + q^3 + q^4 over 6 (TestMannWhitneyExact).
func mwDist(m, n int) []float64 {
	if m > n {
		m, n = n, m // the distribution is symmetric in the sizes
	}
	key := [2]int{m, n}
	if d, ok := mwCache.Load(key); ok {
		return d.([]float64)
	}
	poly := make([]float64, m*n+1)
	poly[0] = 1
	deg := 0
	for i := 1; i <= m; i++ {
		// multiply by (1 - q^(n+i)) ...
		for k := deg + n + i; k >= n+i; k-- {
			if k < len(poly) {
				poly[k] -= poly[k-n-i]
			}
		}
		deg += n
		// ... and divide by (1 - q^i): a running sum with stride i.
		for k := i; k < len(poly); k++ {
			poly[k] += poly[k-i]
		}
	}
	total := 0.0
	for _, c := range poly {
		total += c
	}
	for k := range poly {
		poly[k] /= total
	}
	mwCache.Store(key, poly)
	return poly
}

var srCache sync.Map // int -> []float64

// srDist is the exact null distribution of the Wilcoxon signed-rank
// statistic W+ for n nonzero differences: prod_{i=1..n} (1 + q^i) / 2^n.
func srDist(n int) []float64 {
	if d, ok := srCache.Load(n); ok {
		return d.([]float64)
	}
	poly := make([]float64, n*(n+1)/2+1)
	poly[0] = 1
	for i := 1; i <= n; i++ {
		for k := len(poly) - 1; k >= i; k-- {
			poly[k] += poly[k-i]
		}
	}
	for k := range poly {
		poly[k] /= math.Exp2(float64(n))
	}
	srCache.Store(n, poly)
	return poly
}

// signedRankGreater is the one-sided Wilcoxon signed-rank p-value for "the
// differences d are centred above 0". Zero differences are dropped
// (Wilcoxon's convention); ties among |d| use midranks and the normal
// approximation. 1 when no difference is left.
func signedRankGreater(d []float64) float64 {
	var nz []float64
	for _, x := range d {
		if x != 0 {
			nz = append(nz, x)
		}
	}
	n := len(nz)
	if n == 0 {
		return 1
	}
	abs := make([]float64, n)
	for i, x := range nz {
		abs[i] = math.Abs(x)
	}
	ranks := midranks(abs)
	w := 0.0
	for i, x := range nz {
		if x > 0 {
			w += ranks[i]
		}
	}
	if !hasTies(abs) && n <= exactLimit {
		return upperTail(srDist(n), int(math.Round(w)))
	}
	if n <= exactTiesLimit {
		// Exact with ties: each nonzero difference is positive or negative
		// with probability 1/2 independently; count sign patterns by their
		// doubled positive midrank sum.
		ways := []float64{1}
		for _, r := range ranks {
			r2 := int(math.Round(2 * r))
			next := make([]float64, len(ways)+r2)
			for s, c := range ways {
				next[s] += c
				next[s+r2] += c
			}
			ways = next
		}
		for s := range ways {
			ways[s] /= math.Exp2(float64(n))
		}
		return upperTail(ways, int(math.Round(2*w)))
	}
	N := float64(n)
	v := N*(N+1)*(2*N+1)/24 - tieSum(abs, func(t float64) float64 { return t*t*t - t })/48
	return normalUpper(w, N*(N+1)/4, v)
}

// midranks returns the 1-based ranks of xs, ties sharing their mean rank.
func midranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case xs[a] < xs[b]:
			return -1
		case xs[a] > xs[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		for k := i; k < j; k++ {
			r[idx[k]] = float64(i+j+1) / 2
		}
		i = j
	}
	return r
}

// signGreater is the one-sided sign test p-value for "more than half of xs
// satisfy ok": P(Bin(n, 1/2) >= #ok). Unlike the signed-rank test it needs
// no symmetry and treats a value equal to the bound as meeting it, which is
// what "errors at_most 0" over trials with no errors must mean.
func signGreater(xs []float64, ok func(x float64) bool) float64 {
	k := 0
	for _, x := range xs {
		if ok(x) {
			k++
		}
	}
	return binomUpper(len(xs), k)
}

// binomUpper is P(Bin(n, 1/2) >= k).
func binomUpper(n, k int) float64 {
	if k <= 0 {
		return 1
	}
	p, c := 0.0, 1.0 // c = C(n, j), built up from C(n, 0)
	for j := 0; j <= n; j++ {
		if j >= k {
			p += c
		}
		c = c * float64(n-j) / float64(j+1)
	}
	return math.Min(1, p/math.Exp2(float64(n)))
}

// jtIncreasing is the one-sided Jonckheere-Terpstra p-value for "the
// samples, in the given order, tend to increase": J = sum over ordered
// pairs of samples i < j of #{x in i, y in j : x < y} (ties 1/2), large
// under the alternative. Without ties its exact null distribution is the
// convolution of the Mann-Whitney distributions of (g1 vs g2), (g1+g2 vs
// g3), ... (the q-multinomial coefficient factorizes into q-binomials);
// with ties, the normal approximation with Hollander & Wolfe's tie-corrected
// variance (eq. 6.19).
func jtIncreasing(groups [][]float64) float64 {
	j, ns, all := 0.0, []float64{}, []float64{}
	for a := range groups {
		for b := a + 1; b < len(groups); b++ {
			for _, x := range groups[a] {
				for _, y := range groups[b] {
					switch {
					case x < y:
						j++
					case x == y:
						j += 0.5
					}
				}
			}
		}
		ns = append(ns, float64(len(groups[a])))
		all = append(all, groups[a]...)
	}
	if len(all) == 0 {
		return 1
	}
	if !hasTies(all) && len(all) <= 2*exactLimit {
		return upperTail(jtDist(groups), int(j))
	}
	N := float64(len(all))
	sumN2, a, b, c := 0.0, 0.0, 0.0, 0.0
	for _, n := range ns {
		sumN2 += n * n
		a += n * (n - 1) * (2*n + 5)
		b += n * (n - 1) * (n - 2)
		c += n * (n - 1)
	}
	ta := tieSum(all, func(t float64) float64 { return t * (t - 1) * (2*t + 5) })
	tb := tieSum(all, func(t float64) float64 { return t * (t - 1) * (t - 2) })
	tc := tieSum(all, func(t float64) float64 { return t * (t - 1) })
	v := (N*(N-1)*(2*N+5)-a-ta)/72 + b*tb/(36*N*(N-1)*(N-2)) + c*tc/(8*N*(N-1))
	return normalUpper(j, (N*N-sumN2)/4, v)
}

// jtDist convolves Mann-Whitney distributions into J's null distribution.
func jtDist(groups [][]float64) []float64 {
	dist := []float64{1}
	seen := len(groups[0])
	for _, g := range groups[1:] {
		if len(g) == 0 || seen == 0 {
			seen += len(g)
			continue
		}
		mw := mwDist(seen, len(g))
		out := make([]float64, len(dist)+len(mw)-1)
		for i, p := range dist {
			for k, q := range mw {
				out[i+k] += p * q
			}
		}
		dist = out
		seen += len(g)
	}
	return dist
}

// stdNormalCDF is Φ(z).
func stdNormalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// stdNormalQuantile is Φ⁻¹(p), by bisection on Φ: exact to 1e-12, and only
// called when sequential boundaries are first computed.
func stdNormalQuantile(p float64) float64 {
	lo, hi := -40.0, 40.0
	for range 200 {
		mid := (lo + hi) / 2
		if stdNormalCDF(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
