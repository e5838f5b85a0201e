package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/preflight"
)

// TestPreflightRefusesBeforeStart: a plan over this host's limits fails in
// Run before the run directory exists, and says how to fix it (the checks
// themselves are package preflight's).
func TestPreflightRefusesBeforeStart(t *testing.T) {
	a := preflight.Read("/")
	if a.Mem == 0 {
		t.Skip("this host hides its available memory")
	}
	yaml := fmt.Sprintf(`name: limits
title: Host limits
question: Does the plan fit this host?
variants:
  big: {target: spring-webflux, jvm: [-Xmx%dm]}
load:
  model: burst
  burst: 10
  requests: [{path: /io}]
trials: 3
`, a.Mem>>20+1024)
	m, err := experiments.Parse("limits.yaml", []byte(yaml), "")
	if err != nil && (m == nil || !experiments.HostOnly(err)) {
		t.Fatal(err)
	}
	o := opts(t, &inproc{})
	s, err := Run(context.Background(), m, o)
	if err == nil || s != nil || !strings.Contains(err.Error(), "refused before anything started") || !strings.Contains(err.Error(), "memory:") {
		t.Fatalf("Run = %v, %v; want a refusal naming memory", s, err)
	}
	if _, err := os.Stat(filepath.Join(o.DataDir, "limits")); !os.IsNotExist(err) {
		t.Errorf("the refused run left %s behind (%v)", filepath.Join(o.DataDir, "limits"), err)
	}
}
