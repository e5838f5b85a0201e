package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
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
}

// Launcher starts targets. The default runs commands; tests use in-process servers.
type Launcher interface {
	Launch(ctx context.Context, s Spec) (Target, error)
}

// FreePort asks the kernel for a free loopback port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Processes launches targets as OS processes, each in its own process group
// so that stopping it stops everything it spawned, and with a parent-death
// signal so that a killed threadlab leaves no orphan JVM.
type Processes struct{}

type process struct {
	spec    Spec
	cmd     *exec.Cmd
	log     *os.File
	done    chan struct{}
	waitErr error
	once    sync.Once
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
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...) // never a shell
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w (is it installed and on PATH?)", s.Argv[0], err)
	}
	fmt.Fprintf(logf, "# threadlab: pid %d\n", cmd.Process.Pid)
	p := &process{spec: s, cmd: cmd, log: logf, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *process) URL() string { return "http://127.0.0.1:" + strconv.Itoa(p.spec.Port) }
func (p *process) Pid() int    { return p.cmd.Process.Pid }
func (p *process) Argv() []string {
	return p.spec.Argv
}
func (p *process) MetricsURL() string {
	if p.spec.Metrics == "" {
		return ""
	}
	return p.URL() + p.spec.Metrics
}

func (p *process) Exited() error {
	select {
	case <-p.done:
		if p.waitErr != nil {
			return fmt.Errorf("target exited: %w", p.waitErr)
		}
		return errors.New("target exited with status 0")
	default:
		return nil
	}
}

// Stop sends SIGTERM to the process group, then SIGKILL after 10 s.
func (p *process) Stop() error {
	p.once.Do(func() {
		pgid := p.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.done
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // anything the target left in its group
		p.log.Close()
	})
	return nil
}

// waitReady polls the target's readiness path until it answers 2xx, the
// process exits, or timeout passes. Errors quote the tail of the log.
func waitReady(ctx context.Context, t Target, ready, logPath string, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	url := t.URL() + ready
	for {
		if err := t.Exited(); err != nil {
			return fmt.Errorf("%v before it was ready; last lines of %s:\n%s", err, logPath, tail(logPath, 15))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
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

// tail returns the last n lines of a file, indented.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return "    (log is empty)"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var buf bytes.Buffer
	for _, l := range lines {
		buf.WriteString("    " + l + "\n")
	}
	return strings.TrimRight(buf.String(), "\n")
}
