package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/internal/testenv"

	"github.com/threadlab/threadlab/env/postgres"
	"github.com/threadlab/threadlab/store/record"
)

// poolSweepPostgres is seed 001's pool sweep at smoke size, on a real
// PostgreSQL that threadlab creates and removes: each request holds its
// JDBC connection across a 100 ms downstream call, so throughput is bound
// by pool size / 0.1 s.
const poolSweepPostgres = `name: pool-sweep-pg
title: Pool sweep on PostgreSQL (test)
question: Does a larger Hikari pool raise throughput when connections are held across a slow call?
services:
  downstream: {delay: 100ms}
  database: postgres
  orders: 2000
variants:
  virtual: {target: spring-mvc, properties: {spring.threads.virtual.enabled: true}}
sweep:
  pool: {property: spring.datasource.hikari.maximum-pool-size, values: [2, 10]}
load:
  model: closed
  users: 40
  duration: 3s
  warmup: 1s
  requests: [{path: "/order-summary/{random 1..2000}?hold=true"}]
trials: 1
# The PostgreSQL path is under test, not the noise gate: a busy CI box must not add re-run rows.
retries: 0
cooldown: {max_busy_pct: 100, max_wait: 1ms, pause: 1ms}
`

// TestRunPoolSweepPostgres runs poolSweepPostgres and, on the same run
// (one PostgreSQL and two JVM starts serve both: CI time), checks the
// listeners: "listeners loopback only" is what TestListenersLoopbackOnly
// checked on a run of its own (listen_test.go).
func TestRunPoolSweepPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and JVMs")
	}
	_, err := postgres.BinDir()
	testenv.Need(t, err, "PostgreSQL", "apt-get install postgresql (scripts/setup.sh does)")
	before := pgDirs(t)
	dir := t.TempDir()
	manifest := filepath.Join(dir, "pool-sweep-pg.yaml")
	os.WriteFile(manifest, []byte(poolSweepPostgres), 0o644)
	var out, errb bytes.Buffer
	args := []string{"run", "--quiet", "--data", filepath.Join(dir, "data"), "--reports", filepath.Join(dir, "reports"),
		"--targets", "../../env/targets", "--run-id", "pg", manifest}
	stopWatching := watchListeners(t)
	code := run(context.Background(), args, &out, &errb)
	listeners := stopWatching()
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	t.Run("listeners loopback only", func(t *testing.T) { checkLoopbackOnly(t, listeners) })
	runDir := filepath.Join(dir, "data", "pool-sweep-pg", "pg")
	trials, err := record.ReadCSV[record.Trial](runDir, record.TrialsFile)
	if err != nil || len(trials) != 2 {
		t.Fatalf("%d trials (%v), want one per pool size", len(trials), err)
	}
	rps := map[string]float64{}
	for _, tr := range trials {
		if tr.Errors > 0 || tr.Requests == 0 {
			t.Errorf("pool %s: %d requests, %d errors (%s)", tr.Point, tr.Requests, tr.Errors, tr.ErrorClasses)
		}
		rps[tr.Point] = tr.RPS
	}
	// 2 held connections allow at most 20 req/s; 10 allow 100. The
	// direction, not the exact ratio, is what a smoke run can show.
	if !(rps["pool=10"] > 2*rps["pool=2"]) {
		t.Errorf("rps pool=2 %.1f, pool=10 %.1f: want the larger pool well ahead (connections held across the call)", rps["pool=2"], rps["pool=10"])
	}
	log, _ := os.ReadFile(filepath.Join(runDir, "logs", "postgres.log"))
	if len(log) == 0 {
		t.Error("the PostgreSQL log was not saved with the run")
	}
	if after := pgDirs(t); len(after) > len(before) {
		t.Errorf("PostgreSQL temp dirs left behind: %v", after)
	}
	if out, _ := exec.Command("pgrep", "-f", "threadlab-pg-").Output(); len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("postgres processes left running: %s", out)
	}
}

func pgDirs(t *testing.T) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(os.TempDir(), "threadlab-pg-*"))
	var out []string
	for _, d := range m {
		if !strings.HasSuffix(d, ".lock") {
			out = append(out, d)
		}
	}
	return out
}
