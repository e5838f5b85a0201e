package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadlab/threadlab/internal/testenv"

	"github.com/threadlab/threadlab/env/postgres"
)

// listenRun is a short real run with every kind of listener threadlab
// makes: the in-process downstream service, a PostgreSQL cluster and a
// Spring Boot target with its actuator.
const listenRun = `name: listen
title: Listeners of a run (test)
question: Does anything threadlab starts listen beyond loopback?
services:
  downstream: {delay: 10ms}
  database: postgres
  orders: 200
variants:
  virtual: {target: spring-mvc, properties: {spring.threads.virtual.enabled: true}}
load:
  model: closed
  users: 4
  duration: 4s
  requests: [{path: "/order-summary/{random 1..200}"}]
trials: 1
cooldown: {max_busy_pct: 100, max_wait: 1ms, pause: 1ms}
startup: {timeout: 5m} # a JVM on a busy 2-core box
`

// ssLine matches `ss -ltnpH` output: local address:port, then the users.
var ssLine = regexp.MustCompile(`^\S+\s+\d+\s+\d+\s+(\S+):(\d+)\s+\S+\s*(.*)$`)
var ssPid = regexp.MustCompile(`\("([^"]*)",pid=(\d+),`)

// TestListenersLoopbackOnly: during a real run, `ss -ltnp` shows only
// loopback (127.0.0.1, ::1, ::ffff:127.0.0.1) listeners for threadlab and every process it started.
// The Spring targets used to listen on every interface.
func TestListenersLoopbackOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and a JVM (and builds the targets if needed)")
	}
	testenv.LookPath(t, "ss", "apt-get install iproute2 (scripts/setup.sh does)")
	_, err := postgres.BinDir()
	testenv.Need(t, err, "PostgreSQL", "apt-get install postgresql (scripts/setup.sh does)")
	dir := t.TempDir()
	manifest := filepath.Join(dir, "listen.yaml")
	os.WriteFile(manifest, []byte(listenRun), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu      sync.Mutex
		seen    = map[string]string{} // "command addr:port" -> verdict
		stopped = make(chan struct{})
	)
	go func() {
		defer close(stopped)
		for ctx.Err() == nil {
			out, err := exec.Command("ss", "-ltnpH").Output()
			if err == nil {
				ours := map[int]bool{os.Getpid(): true}
				for _, p := range descendants(os.Getpid()) {
					ours[p] = true
				}
				for _, line := range strings.Split(string(out), "\n") {
					m := ssLine.FindStringSubmatch(strings.TrimSpace(line))
					if m == nil {
						continue
					}
					for _, u := range ssPid.FindAllStringSubmatch(m[3], -1) {
						pid, _ := strconv.Atoi(u[2])
						if !ours[pid] {
							continue
						}
						addr := strings.Trim(m[1], "[]")
						mu.Lock()
						seen[u[1]+" "+addr+":"+m[2]] = addr
						mu.Unlock()
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
	var out, errb bytes.Buffer
	args := []string{"run", "--quiet", "--data", filepath.Join(dir, "data"), "--reports", filepath.Join(dir, "reports"),
		"--targets", "../../env/targets", "--run-id", "l", manifest}
	code := run(context.Background(), args, &out, &errb)
	cancel()
	<-stopped
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	var java, pg bool
	for l, addr := range seen {
		t.Logf("listener: %s", l)
		java = java || strings.HasPrefix(l, "java ")
		pg = pg || strings.HasPrefix(l, "postgres ")
		// A JVM's dual-stack socket shows 127.0.0.1 as ::ffff:127.0.0.1.
		if ip := net.ParseIP(addr); ip == nil || !ip.IsLoopback() {
			t.Errorf("%s listens beyond loopback", l)
		}
	}
	if !java || !pg {
		t.Errorf("saw java %v, postgres %v: the poll missed the run's listeners, so it proves nothing", java, pg)
	}
}
