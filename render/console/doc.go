// Package console owns what a run shows on the terminal: the live display
// while it runs (Bar on a terminal, Lines otherwise, both with an ETA) and
// the one-screen summary after it (Summary, with the replication design,
// the steady-state lines, the CPU affinity read back and the dead time).
//
// Data flow: the orchestrator (package pipeline) words each job and each
// iteration's outcome and hands them to a Display through pipeline.Show;
// the ETA starts from cost.Predict's costs (pipeline.NewETA) and
// refines them as forks finish. Summary reads a finished run directory
// through package record, so `threadlab run` prints it for a run of any
// age. Nothing here decides anything about the run: it only lays out
// what the orchestrator and the data say.
package console
