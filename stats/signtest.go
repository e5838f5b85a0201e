package stats

// SignUpper is the one-sided sign test: P(Bin(n, 1/2) >= k), the chance of
// k or more of n paired comparisons going one way when either way is
// equally likely. Steady-state detection uses it across forks (is the first
// measured iteration worse than the later ones in more forks than chance
// allows?).
func SignUpper(n, k int) float64 { return binomUpper(n, k) }
