// Package stats owns every number threadlab derives from trials: per-cell
// summaries (median, quartiles, CV and an order-statistic confidence interval
// of the median), noise flags, pairwise comparisons (Mann-Whitney U with Holm's
// correction and a noise band) and claim verdicts.
//
// It is a leaf but for measure/metric (which direction is better): pure
// functions over plain values, no I/O. Data moves through it like this: the
// pipeline groups trial values into cells (variant x sweep point x group x
// metric), calls Summarize and Flags per cell for summary.csv, Compare (then
// AdjustHolm across the sweep) for the report and `threadlab diff`, and
// EvaluateWith per manifest claim for verdicts.json (store/record holds
// the on-disk shape).
//
// # Claims
//
// Each kind of check has one established one-sided test, named in the
// verdict's method and evidence: Mann-Whitney U of A against r×B for
// superiority (superiority.go), two one-sided tests (TOST) for a band
// (equivalence.go), TOST of every pair of levels for flat_over (flat.go),
// Wilcoxon signed-rank or the sign test against the bound for absolute
// checks (absolute.go), Jonckheere-Terpstra for increases_over and
// decreases_over (trend.go). A unit supports a claim when its tests are
// significant after Holm and its bootstrap interval (bootstrap.go) lies on
// the claimed side; judge.go applies that rule to every kind, and prose.go
// writes the sentences. The calibration suite (calibration_test.go, `make
// calibration`) measures the error rates and power of each kind.
//
// Beside the threshold verdict, a compare claim records its direction (A
// against B at ratio 1, by the same test and interval) and every claim the
// outcome a reader acts on: supported, smaller than claimed, equivalent,
// reversed, inconclusive or not applicable (direction.go; its calibration
// is in direction_test.go). RatioInterval and MedianInterval (ratio.go)
// give comparisons between runs the verdicts' bootstrap intervals.
//
// A cell's Values are one value per independent replicate. When a cell
// carries Forks (iterations within each fresh JVM), the replicate is the
// fork: tests compare per-fork medians and intervals resample the forks by
// their medians (bootstrap.go). Fewer than MinReplicates per cell keeps a claim
// inconclusive.
//
// # Sequential trials
//
// A pipeline that adds rounds of trials until its claims are decided
// evaluates after every round with Options.Sequential set to the look:
//
//	o := stats.Options{Seed: seed, Version: version, Sequential: stats.TrialLooks(n, minTrials, maxTrials)}
//	v := stats.EvaluateWith(id, says, check, cells, o)
//	if stats.Decided(v) || n == maxTrials { stop adding rounds for the cells this claim reads }
//
// TrialLooks(n, min, max) is look n−min+1 of max−min+1 with information
// fraction n/max. Each test then runs at the nominal level of a Lan-DeMets
// alpha-spending boundary (O'Brien-Fleming type by default, Pocock type on
// request), so the chance of a false verdict over all looks stays at Alpha.
// Decided is true for supported, contradicted, and for inconclusive verdicts
// that more trials cannot change (a zero denominator, a missing variant).
//
// The package exists because of seed 000: a single trial swung by more than
// 50% between identical runs, more than the differences being claimed, and
// the author had to label his own conclusions "directional" by hand. Every
// threshold below is a named constant so the report and `threadlab lint` can
// quote it, and METHODOLOGY.md explains each one.
package stats
