// Package supervise runs every process threadlab starts (the Maven build,
// targets and whatever they spawn, PostgreSQL and its client tools) under a
// small supervisor, so that nothing outlives threadlab however it dies —
// Ctrl-C, a panic, or kill -9.
//
// The supervisor is threadlab itself, re-executed from /proc/self/exe as
// "threadlab supervise -- argv...". It sits in its own process group, is a
// child subreaper (orphaned descendants are re-parented to it, not to
// init), and starts the program in a second process group of its own. It
// holds one end of a socket pair whose other end only the parent holds:
// when the parent goes away for any reason the kernel closes that end, the
// supervisor reads EOF, and it kills the program's group and every
// descendant (SIGTERM, then SIGKILL after a grace period). A parent-death
// signal (SIGTERM) is the second line of defence. A held file, such as the
// Maven build lock, stays open in the supervisor until everything it started
// is gone, so a lock cannot be taken while an orphaned build still runs.
//
// Data flow: Start re-executes the binary with THREADLAB_SUPERVISOR=1 set;
// the init function below notices it before main (or a test binary's
// TestMain) runs, supervises, and exits with the program's status. The
// supervisor reports the program's pid over the socket, so the parent can
// sample the real process (the JVM) rather than the supervisor. Stop sends
// SIGTERM to the supervisor, which passes it to the program's group;
// Signal reaches the program alone (PostgreSQL's fast shutdown is SIGINT to
// the postmaster only). KillAll is the force-quit path of a second Ctrl-C.
//
// The same code serves remote hosts (`threadlab supervise --stdin -- ...`
// over ssh): there the lifeline is stdin, which closes when the session does.
package supervise

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// envKey marks a re-executed binary as a supervisor. It is removed from the
// supervised program's environment, so a program that is itself threadlab
// (the downstream service, say) does not mistake itself for one.
const envKey = "THREADLAB_SUPERVISOR"

// DefaultGrace is how long a program gets between SIGTERM and SIGKILL on Stop.
const DefaultGrace = 10 * time.Second

// orphanGrace bounds the clean-up once the parent is gone: short, so that a
// kill -9 of threadlab leaves nothing running a few seconds later.
const orphanGrace = 2 * time.Second

// The supervisor must run before anything else in the binary: a test binary
// would otherwise parse its -test flags, threadlab its subcommand. Doing it
// in init means every binary that can start a supervised process (threadlab
// and every test binary linking this package) can also be one.
func init() {
	if os.Getenv(envKey) != "1" || len(os.Args) < 2 || os.Args[1] != "supervise" {
		return
	}
	ctl := os.NewFile(3, "lifeline")
	os.Exit(Main(os.Args[2:], ctl, ctl, 4))
}

// Spec is a program to run under a supervisor.
type Spec struct {
	Argv   []string  // program and arguments; never a shell string
	Dir    string    // working directory; "" is threadlab's
	Env    []string  // the whole environment; nil means threadlab's own
	Stdout io.Writer // nil discards
	Stderr io.Writer // nil discards
	// Cred runs the program as another user (PostgreSQL refuses root); the
	// supervisor itself stays threadlab's user so it can always kill it.
	Cred *syscall.Credential
	// Grace is the time between SIGTERM and SIGKILL on Stop; 0 is DefaultGrace.
	Grace time.Duration
	// Hold are files the supervisor keeps open until everything it started
	// is gone; a flock on one is held exactly as long as the processes are.
	Hold []*os.File
}

// Proc is a running supervised program.
type Proc struct {
	cmd   *exec.Cmd // the supervisor
	ctl   *os.File  // our end of the lifeline
	pid   int       // the program
	grace time.Duration
	done  chan struct{}
	err   error
	stop  sync.Once
}

var (
	liveMu sync.Mutex
	live   = map[*Proc]bool{}
)

// Start starts spec.Argv under a supervisor and returns once the program
// runs (or failed to start, which is an error naming the program).
func Start(spec Spec) (*Proc, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, errors.New("supervise: empty command")
	}
	grace := spec.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("supervise %s: lifeline: %w", spec.Argv[0], err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "lifeline"), os.NewFile(uintptr(fds[1]), "lifeline")
	args := []string{"threadlab", "supervise", "--grace", grace.String(), "--hold", strconv.Itoa(len(spec.Hold))}
	if c := spec.Cred; c != nil {
		args = append(args, "--uid", strconv.FormatUint(uint64(c.Uid), 10), "--gid", strconv.FormatUint(uint64(c.Gid), 10))
	}
	args = append(args, "--")
	args = append(args, spec.Argv...)
	// /proc/self/exe, not os.Executable: it still works when the binary on
	// disk was rebuilt or deleted while the run goes on.
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: args, Dir: spec.Dir}
	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(withoutKey(env), envKey+"=1")
	cmd.Stdout, cmd.Stderr = orDiscard(spec.Stdout), orDiscard(spec.Stderr)
	cmd.ExtraFiles = append([]*os.File{theirs}, spec.Hold...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	// Output copied through a pipe ends when the last holder of the pipe
	// exits; the supervisor kills all of them, the delay is a backstop.
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		ours.Close()
		return nil, fmt.Errorf("start the supervisor of %s: %w", spec.Argv[0], err)
	}
	p := &Proc{cmd: cmd, ctl: ours, grace: grace, done: make(chan struct{})}
	line, rerr := bufio.NewReader(ours).ReadString('\n')
	pid, perr := 0, error(nil)
	if strings.HasPrefix(line, "pid ") {
		pid, perr = strconv.Atoi(strings.TrimSpace(line[4:]))
	}
	switch {
	case strings.HasPrefix(line, "pid ") && perr == nil && pid > 0:
		// pid > 0 matters: kill(-0) would signal threadlab's own group.
		p.pid = pid
	case strings.HasPrefix(line, "err "):
		cmd.Wait()
		ours.Close()
		return nil, errors.New(strings.TrimSpace(line[4:]))
	default:
		cmd.Process.Kill()
		cmd.Wait()
		ours.Close()
		return nil, fmt.Errorf("start %s: the supervisor said %q (%v)", spec.Argv[0], line, rerr)
	}
	liveMu.Lock()
	live[p] = true
	liveMu.Unlock()
	go func() {
		p.err = cmd.Wait()
		ours.Close()
		liveMu.Lock()
		delete(live, p)
		liveMu.Unlock()
		close(p.done)
	}()
	return p, nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func withoutKey(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, envKey+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// Pid is the program's process id (not the supervisor's).
func (p *Proc) Pid() int { return p.pid }

// SupervisorPid is the supervisor's process id.
func (p *Proc) SupervisorPid() int { return p.cmd.Process.Pid }

// Done is closed once the program and everything it started are gone.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err is the program's exit error (nil for status 0); valid after Done.
func (p *Proc) Err() error { return p.err }

// Wait waits until the program and everything it started are gone.
func (p *Proc) Wait() error {
	<-p.done
	return p.err
}

// Signal sends sig to the program alone, not its children.
func (p *Proc) Signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	return syscall.Kill(p.pid, sig)
}

// Stop ends the program: SIGTERM to its whole group, SIGKILL to whatever is
// left after the grace period, and waits until all of it is gone. It is
// idempotent and returns the program's exit error.
func (p *Proc) Stop() error {
	p.stop.Do(func() {
		select {
		case <-p.done:
			return
		default:
		}
		_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(p.grace + 5*time.Second):
			// The supervisor itself is stuck: do its job from here.
			p.Kill()
		}
	})
	<-p.done
	return p.err
}

// Kill ends the program and everything it started at once (SIGKILL) and
// waits, at most a few seconds, for the supervisor to go.
func (p *Proc) Kill() {
	_ = syscall.Kill(-p.pid, syscall.SIGKILL)
	_ = syscall.Kill(p.pid, syscall.SIGKILL)
	_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
}

// KillAll kills every running supervised program at once: the force-quit of
// a second Ctrl-C, which does not wait for graceful shutdowns.
func KillAll() {
	liveMu.Lock()
	ps := make([]*Proc, 0, len(live))
	for p := range live {
		ps = append(ps, p)
	}
	liveMu.Unlock()
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() { defer wg.Done(); p.Kill() }()
	}
	wg.Wait()
}

// Run runs spec to completion. Cancelling ctx stops the program (and
// everything it started) and returns an error wrapping ctx.Err().
func Run(ctx context.Context, spec Spec) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s not started: %w", spec.Argv[0], err)
	}
	p, err := Start(spec)
	if err != nil {
		return err
	}
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		p.Stop()
		return fmt.Errorf("%s stopped: %w", spec.Argv[0], ctx.Err())
	}
}
