package load

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serverProcess starts the test binary as an HTTP server process (see
// TestMain) and returns its URL and process, so a test can freeze it.
func serverProcess(t *testing.T) (string, *os.Process) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"=127.0.0.1:0")
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A stopped process cannot read its stdin: kill it outright.
		cmd.Process.Kill()
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("server did not start: %v", err)
	}
	return "http://" + strings.TrimSpace(line), cmd.Process
}

// TestFrozenTargetStalls freezes a real server process with SIGSTOP in the
// middle of a closed-model run. The kernel still accepts connections for
// it, so without the watchdog every request just times out, the group runs
// its whole duration and the result looks like a valid, slow trial.
func TestFrozenTargetStalls(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	url, proc := serverProcess(t)
	time.AfterFunc(300*time.Millisecond, func() { proc.Signal(syscall.SIGSTOP) })
	start := time.Now()
	res := run(t, url, Group{Model: Closed, Users: 2, Duration: 30 * time.Second,
		Timeout: 500 * time.Millisecond, Stall: time.Second, Requests: get("/")})
	took := time.Since(start)
	g := res.Groups[0]
	if g.Stalled == "" || res.Stalled != g.Stalled {
		t.Fatalf("group stalled %q, result %q: want the frozen target reported (requests=%d errors=%v)", g.Stalled, res.Stalled, g.Requests, g.ErrorsByClass)
	}
	if !strings.Contains(g.Stalled, "no response for") || !strings.Contains(g.Stalled, "stall limit 1s") {
		t.Errorf("reason %q: want how long nothing answered and the limit", g.Stalled)
	}
	// The freeze came at 0.3s and the limit is 1s: the group must stop
	// long before its 30s duration (generous bound for a loaded host).
	if took > 15*time.Second {
		t.Errorf("run took %v: the stalled group should have stopped early", took)
	}
	if g.Requests == 0 {
		t.Errorf("no requests recorded: the answers before the freeze must count")
	}
}

// TestFrozenBeforeBurst: a burst at a target frozen from the start gets no
// answer at all; it stalls instead of waiting out the 60s default timeout.
func TestFrozenBeforeBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	url, proc := serverProcess(t)
	if err := proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := run(t, url, Group{Model: Burst, Burst: 3, Stall: 500 * time.Millisecond, Requests: get("/")})
	if res.Stalled == "" || !strings.Contains(res.Stalled, "since the group began") {
		t.Errorf("stalled %q: want a stall with no response ever", res.Stalled)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("burst took %v, want it stopped by the 500ms stall limit", took)
	}
}

// TestThinkingIsNotAStall: a user who thinks longer than the stall limit
// sends nothing meanwhile, so nothing is outstanding and nothing stalled.
func TestThinkingIsNotAStall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	// Think 1.5s against a 1s limit; a request itself would have to take
	// over 1s to stall, which even a loaded 2-core host does not do here.
	res := run(t, srv.URL, Group{Model: Closed, Users: 1, Duration: 1600 * time.Millisecond,
		ThinkMin: 1500 * time.Millisecond, ThinkMax: 1500 * time.Millisecond, Stall: time.Second, Requests: get("/")})
	if res.Stalled != "" || res.Groups[0].Requests < 2 {
		t.Errorf("stalled %q after %d requests: thinking is not a frozen target", res.Stalled, res.Groups[0].Requests)
	}
}

func TestStallLimit(t *testing.T) {
	for _, tc := range []struct {
		why  string
		g    Group
		want time.Duration
	}{
		{"default: a whole response timeout with no answer", Group{Timeout: 30 * time.Second}, 30 * time.Second},
		{"default never under 5s, so a GC pause is not a freeze", Group{Timeout: 100 * time.Millisecond}, 5 * time.Second},
		{"set explicitly", Group{Timeout: time.Minute, Stall: 2 * time.Second}, 2 * time.Second},
		{"negative turns the watchdog off", Group{Timeout: time.Minute, Stall: -1}, 0},
	} {
		if got := stallLimit(tc.g); got != tc.want {
			t.Errorf("%s: stallLimit = %v, want %v", tc.why, got, tc.want)
		}
	}
}

// TestUnknownStatusClass: 999 is not a server error; it used to land in
// http_5xx because the check was status >= 500.
func TestUnknownStatusClass(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(999) }))
	defer srv.Close()
	g := run(t, srv.URL, Group{Model: Burst, Burst: 3, Requests: get("/")}).Groups[0]
	if g.ErrorsByClass["http_unknown"] != 3 || g.ErrorsByClass["http_5xx"] != 0 || g.Errors != 3 {
		t.Errorf("errors %d by class %v: want 3 http_unknown, none http_5xx", g.Errors, g.ErrorsByClass)
	}
}

func TestThroughputWindow(t *testing.T) {
	for _, tc := range []struct {
		why  string
		g    GroupResult
		want string // substring of the reason; "" = meaningful
	}{
		{"one request: 1/latency is no throughput", GroupResult{Requests: 1, Wall: 3 * time.Millisecond, RPS: 333}, "only 1 requests"},
		{"many requests in a blink", GroupResult{Requests: 500, Wall: 200 * time.Millisecond, RPS: 2500}, "window from first send to last answer is 200ms"},
		{"enough of both", GroupResult{Requests: 20, Wall: time.Second, RPS: 20}, ""},
	} {
		rps, why := tc.g.Throughput()
		switch {
		case tc.want == "" && (why != "" || rps != tc.g.RPS):
			t.Errorf("%s: got %v, %q; want %v", tc.why, rps, why, tc.g.RPS)
		case tc.want != "" && (rps != 0 || !strings.Contains(why, tc.want)):
			t.Errorf("%s: got %v, %q; want 0 and a reason with %q", tc.why, rps, why, tc.want)
		}
	}
}
