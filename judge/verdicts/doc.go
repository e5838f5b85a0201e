// Package verdicts judges a run's claims: from the trials of a run and the
// manifest that planned it, one verdict per claim with its evidence, the
// way verdicts.json records it. The Claims stage of a run, the sequential
// rounds' look at the claims between forks and `threadlab report
// --reevaluate` all call it, so a claim is judged the same way whoever asks.
//
// Files:
//   - verdicts.go: Evaluate (every claim of a manifest) and OfRun (the same
//     on a run directory), a claim on a column the run never recorded, and
//     Pending (the claims more forks could still decide).
//   - cells.go: the trials of each cell (GroupTrials), each fork's median
//     (ForkValues, the unit of replication), the cells a claim reads
//     (DependsOn) and the minimum-forks rule (stats.MinReplicates).
//   - steady.go: the per-fork steady-state selection (Steady, issue 20):
//     which iterations of each fork summary.csv and the claims read.
//   - reading.go: the cells each metric reads (Reading.Cells: the steady
//     ones for a metric that warms up, those steady in its own series too
//     for the target's CPU, every valid one for a count that does not).
//   - preconditions.go: whether a claim applies on this host (requires:,
//     skipped variants; issue 11).
//   - previous.go: a re-evaluated run's verdicts against the ones first
//     recorded (KeepPrevious, MarkChanges: Previous and an evidence line
//     on each verdict that changed).
//
// Data flow: trials.csv rows (record.Trial) are grouped by cell
// (record.CellKey) and reduced to their steady iterations; each claim's
// cells become stats.Cell values of per-fork medians, stats.EvaluateWith
// decides them, and the rules of this package (too few forks, not in steady
// state, preconditions, unrecorded columns) may hold the verdict back
// before it is written as a record.Verdict. The package reads the manifest
// (experiments), the data layout (record), the metric home (metric) and
// the statistics (stats, steady); it never reaches the orchestrator
// (package pipeline), which calls it.
package verdicts
