// Package remote drives the hosts of a multi-host run with the system's own
// OpenSSH client, so the user's ~/.ssh/config, agent, ProxyJump and
// known_hosts apply and threadlab holds no secret.
//
// One Session per run owns a private directory for the ControlMaster
// sockets: each host gets one master connection (ssh -M, started and owned
// by threadlab, BatchMode=yes so nothing ever prompts), and every command,
// file transfer and remote process is a session multiplexed over it.
//
// Per host, a keeper session creates a working directory for the run
// (mktemp -d), prints it, and waits on its stdin; when threadlab closes
// that stdin, or dies and the kernel closes it, the keeper removes the
// directory. Files are shipped into it by content hash, checked with
// sha256sum on arrival. Remote programs run under threadlab's own
// supervisor (threadlab supervise -- argv, package env/supervise) whose
// lifeline is the session's stdin: when the session ends for any reason,
// Ctrl-C, kill -9 of threadlab, a dropped connection, the supervisor kills
// the program's whole process group. Nothing threadlab starts outlives it
// on any host.
package remote

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/env/supervise"
)

// Options configure a Session.
type Options struct {
	SSHConfig      string        // passed as ssh -F when set
	ConnectTimeout time.Duration // ssh ConnectTimeout; 0 = 10s
	SSH            string        // the ssh program; "" = "ssh" on PATH
}

// Session owns the SSH connections of one run.
type Session struct {
	opt   Options
	dir   string // private: the control sockets
	mu    sync.Mutex
	hosts map[string]*Host
	n     int
}

// NewSession makes the private directory for the control sockets. Close
// ends every connection and removes it.
func NewSession(opt Options) (*Session, error) {
	if opt.ConnectTimeout <= 0 {
		opt.ConnectTimeout = 10 * time.Second
	}
	if opt.SSH == "" {
		opt.SSH = "ssh"
	}
	if _, err := exec.LookPath(opt.SSH); err != nil {
		return nil, fmt.Errorf("multi-host runs drive hosts with OpenSSH, and %q is not installed here: %w (install openssh-client)", opt.SSH, err)
	}
	// Short: a unix socket path has at most 107 bytes.
	dir, err := os.MkdirTemp("", "tl-ssh-")
	if err != nil {
		return nil, fmt.Errorf("control socket directory: %w", err)
	}
	return &Session{opt: opt, dir: dir, hosts: map[string]*Host{}}, nil
}

// Host is one connected host.
type Host struct {
	Dest     string // the ssh destination
	Name     string // for messages: role and destination
	OS, Arch string // GOOS and GOARCH of the host (uname -sm)
	Hostname string // uname -n
	SSHName  string // the host name ssh connects to (ssh -G), for a default address
	SSHPort  int
	Workdir  string // the run's directory on the host, removed at the end

	s        *Session
	ctl      string
	master   *exec.Cmd
	mstderr  *supervise.Buffer
	keeper   *exec.Cmd
	keeperIn io.WriteCloser
	ready    chan struct{} // closed when connect ended, with connErr
	connErr  error

	mu      sync.Mutex
	shipped map[string]string // sha256 -> remote path
	binary  string            // remote path of threadlab
	procs   int               // programs started, naming their pid files
}

// base are the options of every ssh call.
func (s *Session) base() []string {
	var a []string
	if s.opt.SSHConfig != "" {
		a = append(a, "-F", s.opt.SSHConfig)
	}
	return append(a, "-o", "BatchMode=yes", "-o", "ConnectTimeout="+strconv.Itoa(int(s.opt.ConnectTimeout/time.Second)))
}

// Connect opens the master connection to dest (once per destination; a
// second call returns the same Host), reads its OS and architecture, and
// creates the run's working directory there. Errors name the host and the
// fix: unreachable, host key unknown or changed, key refused.
func (s *Session) Connect(ctx context.Context, dest, name string) (*Host, error) {
	s.mu.Lock()
	if h, ok := s.hosts[dest]; ok {
		s.mu.Unlock()
		<-h.ready // the first caller's connect (two roles on one host)
		if h.connErr != nil {
			return nil, h.connErr
		}
		return h, nil
	}
	s.n++
	h := &Host{Dest: dest, Name: name, s: s, ctl: filepath.Join(s.dir, "m"+strconv.Itoa(s.n)), shipped: map[string]string{}, ready: make(chan struct{})}
	s.hosts[dest] = h
	s.mu.Unlock()
	h.connErr = h.connect(ctx)
	if h.connErr != nil {
		h.close()
		s.mu.Lock()
		delete(s.hosts, dest)
		s.mu.Unlock()
	}
	close(h.ready)
	if h.connErr != nil {
		return nil, h.connErr
	}
	return h, nil
}

func (h *Host) connect(ctx context.Context) error {
	s := h.s
	// ssh -G: what ssh will do for this destination (its config applied),
	// without connecting.
	if out, err := exec.CommandContext(ctx, s.opt.SSH, append(s.base(), "-G", "--", h.Dest)...).Output(); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), " ")
			switch k {
			case "hostname":
				h.SSHName = v
			case "port":
				h.SSHPort, _ = strconv.Atoi(v)
			}
		}
	}
	args := append(s.base(), "-M", "-S", h.ctl, "-o", "ControlPersist=no",
		"-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3", "-N", "--", h.Dest)
	h.mstderr = &supervise.Buffer{}
	h.master = exec.Command(s.opt.SSH, args...)
	h.master.Stderr = h.mstderr
	// Its own process group, so the terminal's Ctrl-C reaches threadlab
	// alone and the finishing stages can still stop remote programs; a
	// parent-death signal, so a kill -9 of threadlab ends the connection
	// (and with it every remote session, whose supervisors then clean up).
	h.master.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := h.master.Start(); err != nil {
		return fmt.Errorf("host %s: start ssh: %w", h.Name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- h.master.Wait() }()
	deadline := time.Now().Add(s.opt.ConnectTimeout + 10*time.Second)
	for {
		select {
		case err := <-exited:
			h.master = nil
			keyHost := hostOf(h.Dest)
			if h.SSHName != "" {
				keyHost = h.SSHName
				if h.SSHPort != 0 && h.SSHPort != 22 {
					keyHost = "[" + h.SSHName + "]:" + strconv.Itoa(h.SSHPort)
				}
			}
			return explain(h.Name, h.Dest, keyHost, h.mstderr.String(), err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if err := exec.Command(s.opt.SSH, append(s.base(), "-S", h.ctl, "-O", "check", "--", h.Dest)...).Run(); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("host %s: ssh did not connect within %s; fix: check that `ssh %s true` works from this machine", h.Name, s.opt.ConnectTimeout+10*time.Second, Quote(h.Dest))
		}
	}
	out, err := h.Output(ctx, "uname -s -m -n")
	if err != nil {
		return err
	}
	f := strings.Fields(string(out))
	if len(f) != 3 {
		return fmt.Errorf("host %s: uname -s -m -n printed %q; fix: threadlab drives Linux hosts with a POSIX shell", h.Name, out)
	}
	h.Hostname = f[1]
	if h.OS, h.Arch, err = goPlatform(f[0], f[2]); err != nil {
		return fmt.Errorf("host %s: %w", h.Name, err)
	}
	return h.makeWorkdir(ctx)
}

// goPlatform maps uname's system and machine to GOOS and GOARCH.
func goPlatform(sys, machine string) (goos, goarch string, err error) {
	if sys != "Linux" {
		return "", "", fmt.Errorf("runs %s; threadlab's remote supervisor needs Linux (process groups, PR_SET_CHILD_SUBREAPER): use a Linux host for this role", sys)
	}
	switch machine {
	case "x86_64", "amd64":
		return "linux", "amd64", nil
	case "aarch64", "arm64":
		return "linux", "arm64", nil
	case "armv7l", "armv6l":
		return "linux", "arm", nil
	case "ppc64le":
		return "linux", "ppc64le", nil
	case "s390x":
		return "linux", "s390x", nil
	case "riscv64":
		return "linux", "riscv64", nil
	}
	return "", "", fmt.Errorf("unknown machine %q (uname -m): threadlab cannot pick a Go architecture for it", machine)
}

// keeperScript makes the working directory, prints it, and removes it once
// its stdin closes: at the end of the run, or when threadlab dies.
const keeperScript = `d=$(mktemp -d "${TMPDIR:-/tmp}/threadlab-run.XXXXXX") || exit 1; echo "$d"; cat >/dev/null; rm -rf "$d"`

func (h *Host) makeWorkdir(ctx context.Context) error {
	cmd := h.command("sh -c " + Quote(keeperScript))
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr supervise.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("host %s: %w", h.Name, err)
	}
	h.keeper, h.keeperIn = cmd, in
	line, err := bufio.NewReader(out).ReadString('\n')
	line = strings.TrimSpace(line)
	if err != nil || !strings.HasPrefix(line, "/") {
		return fmt.Errorf("host %s: could not make a working directory with mktemp -d: %q %v %s; fix: give the ssh user a writable $TMPDIR or /tmp", h.Name, line, err, strings.TrimSpace(stderr.String()))
	}
	h.Workdir = line
	return nil
}

// command is an ssh session over the master running the remote shell
// command line cmdline; it is in its own process group (see connect).
func (h *Host) command(cmdline string) *exec.Cmd {
	args := append(h.s.base(), "-S", h.ctl, "-o", "ControlMaster=no", "-T", "--", h.Dest, cmdline)
	cmd := exec.Command(h.s.opt.SSH, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// Output runs a shell command line on the host and returns its stdout.
// Cancelling ctx ends the session, which ends the command.
func (h *Host) Output(ctx context.Context, cmdline string) ([]byte, error) {
	cmd := h.command(cmdline)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := runCtx(ctx, cmd); err != nil {
		return stdout.Bytes(), fmt.Errorf("host %s: %s: %w%s", h.Name, firstWord(cmdline), err, indent(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// Run runs argv (quoted for the remote shell) and returns its stdout.
func (h *Host) Run(ctx context.Context, argv ...string) ([]byte, error) {
	return h.Output(ctx, QuoteArgs(argv))
}

func runCtx(ctx context.Context, cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		cmd.Process.Kill()
		<-done
		return ctx.Err()
	}
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

func indent(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return "\n    " + strings.Join(lines, "\n    ")
}

// Ship copies a local file into the working directory, named by its
// content hash, and returns its remote path; a file with the same content
// is sent once per run. The copy is checked with sha256sum on arrival.
func (h *Host) Ship(ctx context.Context, local string, mode os.FileMode) (string, error) {
	sum, err := env.FileSHA256(local)
	if err != nil {
		return "", err
	}
	h.mu.Lock()
	if p, ok := h.shipped[sum]; ok {
		h.mu.Unlock()
		return p, nil
	}
	h.mu.Unlock()
	dir := path.Join(h.Workdir, "files", sum[:16])
	dst := path.Join(dir, filepath.Base(local))
	script := fmt.Sprintf(`mkdir -p %s && cat > %s.part && chmod %o %s.part && mv %s.part %s && sha256sum %s`,
		Quote(dir), Quote(dst), uint32(mode.Perm()), Quote(dst), Quote(dst), Quote(dst), Quote(dst))
	f, err := os.Open(local)
	if err != nil {
		return "", err
	}
	defer f.Close()
	cmd := h.command("sh -c " + Quote(script))
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = f, &stdout, &stderr
	if err := runCtx(ctx, cmd); err != nil {
		return "", fmt.Errorf("host %s: ship %s: %w%s", h.Name, local, err, indent(stderr.String()))
	}
	if got, _, _ := strings.Cut(strings.TrimSpace(stdout.String()), " "); got != sum {
		return "", fmt.Errorf("host %s: ship %s: arrived with sha256 %q, sent %s (a full disk under %s?)", h.Name, local, got, sum, h.Workdir)
	}
	h.mu.Lock()
	h.shipped[sum] = dst
	h.mu.Unlock()
	return dst, nil
}

// SetBinary ships threadlab (built for this host's OS and architecture)
// and makes it the binary Threadlab, Start and Agent use.
func (h *Host) SetBinary(ctx context.Context, local string) error {
	p, err := h.Ship(ctx, local, 0o755)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.binary = p
	h.mu.Unlock()
	return nil
}

// Threadlab is the remote path of the shipped threadlab binary ("" before SetBinary).
func (h *Host) Threadlab() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.binary
}

// Spec is a program to run on a host under the supervisor.
type Spec struct {
	Argv   []string  // program and arguments; never a shell string
	Env    []string  // extra KEY=VALUE
	Dir    string    // working directory; "" = the run's working directory
	Stdout io.Writer // nil discards
	Stderr io.Writer // nil discards
	Grace  time.Duration
}

// Proc is a supervised program on a host.
type Proc struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	done chan struct{}
	err  error
	once sync.Once
	// Grace is how long Stop waits for the remote side after closing the lifeline.
	grace time.Duration
	// PidFile is where the remote supervisor writes the program's pid on
	// that host, for a sampler there (Host.Sample).
	PidFile string
}

// Start runs spec.Argv on the host under `threadlab supervise`, in its own
// process group there. The session's stdin is the lifeline: Stop closes it,
// and so does the kernel when threadlab dies.
func (h *Host) Start(spec Spec) (*Proc, error) {
	bin := h.Threadlab()
	if bin == "" {
		return nil, fmt.Errorf("host %s: threadlab was not shipped (SetBinary first)", h.Name)
	}
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, errors.New("remote: empty command")
	}
	grace := spec.Grace
	if grace <= 0 {
		grace = 2 * time.Second
	}
	dir := spec.Dir
	if dir == "" {
		dir = h.Workdir
	}
	argv := []string{"env"}
	argv = append(argv, spec.Env...)
	h.mu.Lock()
	h.procs++
	pidfile := path.Join(h.Workdir, fmt.Sprintf("proc-%d.pid", h.procs))
	h.mu.Unlock()
	argv = append(argv, bin, "supervise", "--grace", grace.String(), "--pidfile", pidfile, "--")
	argv = append(argv, spec.Argv...)
	cmd := h.command("cd " + Quote(dir) + " && exec " + QuoteArgs(argv))
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = orDiscard(spec.Stdout), orDiscard(spec.Stderr)
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("host %s: start %s: %w", h.Name, spec.Argv[0], err)
	}
	p := &Proc{cmd: cmd, in: in, done: make(chan struct{}), grace: grace, PidFile: pidfile}
	go func() {
		p.err = cmd.Wait()
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

// Done is closed once the remote program is gone and its session ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err is the program's exit error, valid after Done.
func (p *Proc) Err() error { return p.err }

// Stop closes the lifeline: the remote supervisor sends SIGTERM to the
// program's group and SIGKILL after the grace period. It waits for the
// session to end, and ends it from here if the host does not answer.
func (p *Proc) Stop() error {
	p.once.Do(func() {
		p.in.Close()
		select {
		case <-p.done:
		case <-time.After(p.grace + 10*time.Second):
			// The host does not answer: end the session here; sshd closes
			// the supervisor's stdin when the channel goes.
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p.err
}

// Agent is a process on the host speaking on its stdin and stdout (a
// load generator agent). It is not supervised: its stdin is its protocol,
// and it must exit on EOF, which it reads when threadlab closes the
// session or dies.
type Agent struct {
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
	cmd    *exec.Cmd
	stderr *supervise.Buffer
}

// StartAgent runs argv on the host with its stdin and stdout piped here.
func (h *Host) StartAgent(argv []string) (*Agent, error) {
	cmd := h.command("cd " + Quote(h.Workdir) + " && exec " + QuoteArgs(argv))
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	a := &Agent{Stdin: in, Stdout: out, cmd: cmd, stderr: &supervise.Buffer{}}
	cmd.Stderr = a.stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("host %s: start %s: %w", h.Name, argv[0], err)
	}
	return a, nil
}

// Close ends the agent's session and returns its exit error with the tail
// of what it wrote to stderr.
func (a *Agent) Close() error {
	a.Stdin.Close()
	done := make(chan error, 1)
	go func() { done <- a.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		a.cmd.Process.Kill()
		err = <-done
	}
	if err != nil {
		return fmt.Errorf("%w%s", err, indent(a.stderr.String()))
	}
	return nil
}

// Stderr is what the agent wrote to stderr so far.
func (a *Agent) Stderr() string { return a.stderr.String() }

// Close removes the working directory and ends the connection.
func (h *Host) close() {
	if h.keeperIn != nil {
		h.keeperIn.Close()
		done := make(chan struct{})
		go func() { h.keeper.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			h.keeper.Process.Kill()
		}
	}
	if h.master != nil && h.master.Process != nil {
		_ = exec.Command(h.s.opt.SSH, append(h.s.base(), "-S", h.ctl, "-O", "exit", "--", h.Dest)...).Run()
		_ = h.master.Process.Signal(syscall.SIGTERM)
		time.Sleep(10 * time.Millisecond)
		_ = h.master.Process.Kill()
	}
}

// Close ends every connection (after the programs' sessions, which the
// caller stops first) and removes the working directories and sockets.
func (s *Session) Close() {
	s.mu.Lock()
	hs := make([]*Host, 0, len(s.hosts))
	for _, h := range s.hosts {
		hs = append(hs, h)
	}
	s.hosts = map[string]*Host{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, h := range hs {
		wg.Add(1)
		go func() { defer wg.Done(); h.close() }()
	}
	wg.Wait()
	os.RemoveAll(s.dir)
}

// Quote quotes s for a POSIX shell.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// QuoteArgs quotes every argument and joins them: a command line the remote
// shell splits back into exactly argv.
func QuoteArgs(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}
