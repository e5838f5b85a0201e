// Package stats owns every number threadlab derives from trials: per-cell
// summaries (median, quartiles, CV and an order-statistic confidence interval
// of the median), noise flags, pairwise comparisons (Mann-Whitney U with Holm's
// correction and a noise band) and claim verdicts.
//
// It is a leaf: pure functions over []float64, no I/O, no other threadlab
// package. Data moves through it like this: the pipeline groups trial values
// into cells (variant x sweep point x group x metric), calls Summarize and
// Flags per cell for summary.csv, Compare (then AdjustHolm across the sweep)
// for the report and `threadlab diff`, and Evaluate per manifest claim for
// verdicts.json.
//
// The package exists because of seed 000: a single trial swung by more than
// 50% between identical runs, more than the differences being claimed, and
// the author had to label his own conclusions "directional" by hand. Every
// threshold below is a named constant so the report and `threadlab lint` can
// quote it, and METHODOLOGY.md explains each one.
package stats
