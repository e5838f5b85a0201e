package pipeline

import (
	"context"
	"time"

	"github.com/threadlab/threadlab/pipeline/trial"
)

// The multi-host files (hosts.go, hostsample.go) still name trial's types
// and trial.WaitReady without the package; these go when they do.
type (
	// Target is one running system under test (trial.Target).
	Target = trial.Target
	// Spec is what a Launcher needs to start one target (trial.Spec).
	Spec = trial.Spec
)

// waitReady is trial.WaitReady.
func waitReady(ctx context.Context, t Target, ready, logPath string, timeout time.Duration) error {
	return trial.WaitReady(ctx, t, ready, logPath, timeout)
}
