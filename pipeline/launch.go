package pipeline

import (
	"context"
	"time"

	"github.com/threadlab/threadlab/pipeline/trial"
)

// The orchestrator launches targets through package trial; these names
// keep Options.Launcher and the multi-host files (hosts.go, hostsample.go)
// as they were.
type (
	// Target is one running system under test (trial.Target).
	Target = trial.Target
	// Spec is what a Launcher needs to start one target (trial.Spec).
	Spec = trial.Spec
	// Launcher starts targets (trial.Launcher); the default is Processes.
	Launcher = trial.Launcher
	// Processes launches targets as supervised OS processes (trial.Processes).
	Processes = trial.Processes
)

// waitReady is trial.WaitReady.
func waitReady(ctx context.Context, t Target, ready, logPath string, timeout time.Duration) error {
	return trial.WaitReady(ctx, t, ready, logPath, timeout)
}
