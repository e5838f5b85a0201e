package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadlab/threadlab/internal/testenv"
)

// ssLine matches `ss -ltnpH` output: local address:port, then the users.
var ssLine = regexp.MustCompile(`^\S+\s+\d+\s+\d+\s+(\S+):(\d+)\s+\S+\s*(.*)$`)
var ssPid = regexp.MustCompile(`\("([^"]*)",pid=(\d+),`)

// watchListeners polls `ss -ltnp` every 300 ms until the returned stop is
// called, and stop returns every listener seen of this process and its
// descendants: "command addr:port" -> addr.
func watchListeners(t *testing.T) (stop func() map[string]string) {
	t.Helper()
	testenv.LookPath(t, "ss", "apt-get install iproute2 (scripts/setup.sh does)")
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu      sync.Mutex
		seen    = map[string]string{} // "command addr:port" -> addr
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
	t.Cleanup(cancel)
	return func() map[string]string {
		cancel()
		<-stopped
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// checkLoopbackOnly: during a real run, `ss -ltnp` showed only loopback
// (127.0.0.1, ::1, ::ffff:127.0.0.1) listeners for threadlab and every
// process it started, and it saw a JVM's and PostgreSQL's. The Spring
// targets used to listen on every interface. TestRunPoolSweepPostgres
// watches its run, which makes every kind of listener threadlab makes:
// the in-process downstream service, a PostgreSQL cluster and Spring Boot
// targets with their actuator.
func checkLoopbackOnly(t *testing.T, seen map[string]string) {
	t.Helper()
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
