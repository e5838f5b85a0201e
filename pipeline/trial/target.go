// Package trial is what one trial of a fork is made of, below the
// orchestrator's fork loop: starting a target and waiting until it is
// ready (Launcher, Processes, WaitReady), and turning a measured window's
// load result and server samples into the rows on disk (Rows, SeriesRows,
// LatencyRows, SaveHistograms), with the checks that make a row invalid
// (CheckBounds, FlagReasons, HostNoise).
//
// Data flow: a Spec (the argv, port and paths the orchestrator worked out
// for a variant) -> Launcher.Launch -> a Target -> WaitReady; then
// load.Result and telemetry samples of each window -> Rows and the rest ->
// package record's files. It imports nothing of the orchestrator's: a
// fork's plan, state and bookkeeping stay there (package pipeline).
package trial

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/threadlab/threadlab/env/supervise"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/store/record"
)

// Target is one running system under test.
type Target interface {
	URL() string        // base URL, http://127.0.0.1:PORT
	Pid() int           // OS process id, 0 when in-process (tests)
	MetricsURL() string // Prometheus endpoint, "" when none
	Exited() error      // non-nil once the process has exited on its own
	Stop() error        // stops it and everything it started
	Argv() []string     // the exact command line, for the report
}

// Spec is what a Launcher needs to start one target.
type Spec struct {
	Name    string   // variant name
	Argv    []string // with {port} already replaced
	Env     []string // extra KEY=VALUE
	Port    int
	Ready   string // readiness path
	Metrics string // metrics path or ""
	LogPath string
	// ActuatorPort is the port of the target's own management server
	// (Spring's management.server.port), where the readiness and metrics
	// paths under /actuator answer; 0 means the app's port.
	ActuatorPort int
}

// Launcher starts targets. The default runs commands; tests use in-process servers.
type Launcher interface {
	Launch(ctx context.Context, s Spec) (Target, error)
}

// Processes launches targets as OS processes, each under a supervisor
// (package env/supervise) that owns its process group: stopping a target
// stops everything it spawned, and a threadlab that dies, even by kill -9,
// leaves no orphan JVM or wrapper grandchild behind.
type Processes struct{}

type process struct {
	spec Spec
	proc *supervise.Proc
	log  *os.File
	once sync.Once
}

// Launch starts the command; it does not wait for readiness.
func (Processes) Launch(ctx context.Context, s Spec) (Target, error) {
	if len(s.Argv) == 0 {
		return nil, errors.New("empty command")
	}
	logf, err := os.OpenFile(s.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644) // appended on resume: keep the crashed attempt's output
	if err != nil {
		return nil, fmt.Errorf("create target log: %w", err)
	}
	fmt.Fprintf(logf, "# threadlab: %s\n", strings.Join(s.Argv, " "))
	// never a shell: the argv is run as given
	proc, err := supervise.Start(supervise.Spec{Argv: s.Argv, Env: append(os.Environ(), s.Env...), Stdout: logf, Stderr: logf})
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", s.Argv[0], err)
	}
	fmt.Fprintf(logf, "# threadlab: pid %d (supervisor %d)\n", proc.Pid(), proc.SupervisorPid())
	return &process{spec: s, proc: proc, log: logf}, nil
}

func (p *process) URL() string { return "http://127.0.0.1:" + strconv.Itoa(p.spec.Port) }
func (p *process) Pid() int    { return p.proc.Pid() }
func (p *process) Argv() []string {
	return p.spec.Argv
}
func (p *process) MetricsURL() string {
	if p.spec.Metrics == "" {
		return ""
	}
	return p.ActuatorURL() + p.spec.Metrics
}

// ActuatorURL is the base URL of the target's /actuator paths: its
// management server when it has its own port, else the app's.
func (p *process) ActuatorURL() string {
	if p.spec.ActuatorPort > 0 {
		return "http://127.0.0.1:" + strconv.Itoa(p.spec.ActuatorPort)
	}
	return p.URL()
}

// readyURL is where a target's readiness path answers: /actuator paths on
// the target's management server when it has one.
func readyURL(t Target, ready string) string {
	if a, ok := t.(interface{ ActuatorURL() string }); ok && strings.HasPrefix(ready, "/actuator") {
		return a.ActuatorURL() + ready
	}
	return t.URL() + ready
}

func (p *process) Exited() error {
	select {
	case <-p.proc.Done():
		if err := p.proc.Err(); err != nil {
			return fmt.Errorf("target exited: %w", err)
		}
		return errors.New("target exited with status 0")
	default:
		return nil
	}
}

// Stop sends SIGTERM to the target's process group, then SIGKILL after 10 s,
// and returns once everything it started is gone.
func (p *process) Stop() error {
	p.once.Do(func() {
		p.proc.Stop()
		p.log.Close()
		// The log is committed with the run: its first line is the
		// command, which can hold the database password.
		_ = record.RedactFile(p.spec.LogPath)
	})
	return nil
}

// WaitReady polls the target's readiness path until it answers 2xx, the
// process exits, or timeout passes. Errors quote the tail of the log.
func WaitReady(ctx context.Context, t Target, ready, logPath string, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	url := readyURL(t, ready)
	for {
		if err := t.Exited(); err != nil {
			return fmt.Errorf("%v before it was ready; last lines of %s:\n%s", err, logPath, tail(logPath, 15))
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			// A ready path that is not a valid URL path would never answer.
			return fmt.Errorf("ready path %q: %w (write a path such as /health)", ready, err)
		}
		if resp, err := client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s (GET %s never answered 2xx; raise startup.timeout if it is just slow); last lines of %s:\n%s", timeout, url, logPath, tail(logPath, 15))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tail returns the last n lines of a file (of its last 64 KiB), indented
// and redacted: it goes into run.json's error and the page's banner.
func tail(path string, n int) string {
	var b []byte
	if f, err := record.OpenRegular(path); err == nil {
		if st, err := f.Stat(); err == nil {
			off := max(0, st.Size()-64<<10)
			b = make([]byte, st.Size()-off)
			got, _ := f.ReadAt(b, off)
			b = b[:got]
		}
		f.Close()
	}
	if len(b) == 0 {
		return "    (log is empty)"
	}
	lines := strings.Split(strings.TrimRight(string(record.Redact(b)), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var buf bytes.Buffer
	for _, l := range lines {
		buf.WriteString("    " + l + "\n")
	}
	return strings.TrimRight(buf.String(), "\n")
}

var slugRE = regexp.MustCompile(`[^a-zA-Z0-9.-]+`)

// LogName is where a fork's target writes its output, inside the run
// directory: logs/<seq>-<variant>-<point>-f<fork>.log.
func LogName(j replicate.Job, seq, fork int) string {
	p := slugRE.ReplaceAllString(j.Cell.PointString(), "_")
	if p != "" {
		p = "-" + p
	}
	return filepath.Join(record.LogsDir, fmt.Sprintf("%03d-%s%s-f%d.log", seq, j.Cell.Variant.Name, p, fork))
}

// ActuatorPort gives a Spring target's actuator its own management server
// on a free loopback port (management.server.port, set in props unless the
// manifest set it), and returns that port. threadlab scrapes
// /actuator/prometheus every second and polls /actuator/health: on the
// app's port those requests queue behind the load in the app's own thread
// pool, so a saturated target (10 Tomcat threads, 100 users) timed out
// every scrape and lost the JVM columns of every trial. The management
// server has its own connector and threads, as production deployments
// give their probes; the app's pool serves only the load.
func ActuatorPort(props map[string]string) (int, error) {
	if v, ok := props["management.server.port"]; ok {
		p, err := strconv.Atoi(v)
		if err != nil || p <= 0 {
			return 0, nil // the manifest's own choice (e.g. -1: no actuator over HTTP): the app's port stays the base
		}
		return p, nil
	}
	p, err := supervise.FreePort("127.0.0.1")
	if err != nil {
		return 0, err
	}
	props["management.server.port"] = strconv.Itoa(p)
	return p, nil
}
