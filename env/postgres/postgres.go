// Package postgres runs a throw-away PostgreSQL cluster for one benchmark
// run: initdb into a fresh temp dir, the postmaster in the foreground on a
// free loopback port under a supervisor (env/supervise), a "threadlab"
// database, and at the end a fast shutdown and the dir removed.
// No Docker and no system cluster is involved or touched; the binaries are
// Debian's (package postgresql, /usr/lib/postgresql/<major>/bin).
//
// initdb and postgres refuse to run as root, and CI runs as root, so as root
// the dir is handed to the postgres system user and the supervisor runs the
// server programs as that user. Client tools (psql, createdb) run as the
// caller and connect over TCP.
//
// Security: the server listens on 127.0.0.1 only, and every connection,
// TCP or socket, needs scram-sha-256 with a random password made for this
// cluster (initdb --pwfile); no trust authentication. The password reaches
// client tools through PGPASSWORD and targets through Env (Spring's
// SPRING_DATASOURCE_PASSWORD), never a command line, which any local user
// can read.
//
// Data flow: the pipeline calls Start, passes Properties() to the target as
// Spring properties and Env() as its environment, and calls Stop in its
// cleanup (also on Ctrl-C). If threadlab is killed outright, the supervisor
// kills the postmaster when threadlab goes; the next Start removes the dir
// it left by its owner file (see sweep.go).
package postgres

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/threadlab/threadlab/env/supervise"
)

const (
	// Database is created by Start and named in JDBCURL.
	Database = "threadlab"
	// User is the superuser initdb creates; its password is Cluster.Password.
	User = "postgres"

	// dirPrefix names every cluster dir, so sweep can find orphans.
	dirPrefix = "threadlab-pg-"
	// stopTimeout bounds a fast shutdown; beyond it the server is killed.
	stopTimeout = 30 * time.Second
	// startTimeout bounds the wait for a started server to accept connections.
	startTimeout = 60 * time.Second
)

// debianRoot holds one bin dir per installed major version; a variable so
// tests can point BinDir at a fake layout.
var debianRoot = "/usr/lib/postgresql"

// settings tune the cluster for benchmarking on small machines. The data is
// thrown away after the run, so durability is switched off: fsync and
// synchronous_commit off mean no disk flush ever sits on a request's path,
// which would otherwise measure the disk instead of the threading model.
// max_connections is high enough for pool sweeps up to 800 connections plus
// the superuser reserve; shared_buffers stays modest because the machine
// also runs the target JVM and the load generator.
var settings = []string{
	"max_connections = 1000",
	"shared_buffers = 128MB",
	"fsync = off",
	"synchronous_commit = off",
	"full_page_writes = off",
	// No checkpoint storm while the target seeds its tables.
	"max_wal_size = 1GB",
	"checkpoint_timeout = 30min",
	// Fail fast instead of queueing behind a stuck lock during a trial.
	"lock_timeout = 10s",
}

// Cluster is a running throw-away PostgreSQL cluster.
type Cluster struct {
	Dir     string // temp dir holding data/, the unix socket and the server log; removed by Stop
	Port    int    // TCP port on 127.0.0.1
	Bin     string // dir of initdb, pg_ctl, postgres, psql
	Version string // as `postgres --version` prints it, for the fingerprint
	// Password is User's, random per cluster; scram-sha-256 is required.
	Password string

	// Host is the address the server listens on besides loopback, and the
	// one JDBCURL names: 127.0.0.1 by default (Options.Listen).
	Host  string
	allow []string // client addresses pg_hba admits over TCP besides loopback

	asRoot bool                // server programs run as the postgres user
	cred   *syscall.Credential // that user, when asRoot
	log    io.Writer           // receives command output and, at Stop, the server log
	server *supervise.Proc     // the postmaster, nil for a cluster found by sweep

	stopMu   sync.Mutex
	stopped  bool
	stopErr  error
	logSaved bool
}

// BinDir finds the PostgreSQL server binaries: the newest major version under
// /usr/lib/postgresql (Debian and Ubuntu keep them off PATH), else the dir of
// pg_ctl on PATH (Fedora, Arch, Homebrew).
func BinDir() (string, error) {
	dirs, _ := filepath.Glob(filepath.Join(debianRoot, "*", "bin"))
	best, bestMajor := "", -1.0
	for _, d := range dirs {
		major, err := strconv.ParseFloat(filepath.Base(filepath.Dir(d)), 64) // "15", or "9.6" before PostgreSQL 10
		if err != nil || !hasServer(d) {
			continue
		}
		if major > bestMajor {
			best, bestMajor = d, major
		}
	}
	if best != "" {
		return best, nil
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil && hasServer(filepath.Dir(p)) {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("PostgreSQL server binaries not found in %s/<major>/bin or on PATH: install them with `apt-get install postgresql` (Debian/Ubuntu), or use `database: h2` in the manifest", debianRoot)
}

// hasServer reports whether dir holds every program Start runs.
func hasServer(dir string) bool {
	for _, p := range []string{"initdb", "pg_ctl", "postgres", "psql", "createdb"} {
		if fi, err := os.Stat(filepath.Join(dir, p)); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// Start creates a cluster in a new temp dir, starts it on a free loopback
// port and creates the database. The postmaster runs in the foreground
// under a supervisor, so it dies with threadlab however threadlab dies. ctx bounds the start-up only: once Start
// returns, the cluster runs until Stop. On any failure everything created so
// far is stopped and removed, and the error quotes the server log's tail.
// log receives the commands' output and, at Stop, the server log; nil
// discards it.
func Start(ctx context.Context, log io.Writer) (*Cluster, error) {
	return StartWith(ctx, log, Options{})
}

// Options place a cluster on a database host of its own (issue 25).
type Options struct {
	// Listen is an address of this host the server listens on besides
	// 127.0.0.1 (the address the target reaches); "" listens on loopback
	// only.
	Listen string
	// Allow lists the client addresses admitted over Listen (the target
	// host's), each with scram-sha-256; nobody else gets a pg_hba entry.
	Allow []string
}

// StartWith is Start with Options.
func StartWith(ctx context.Context, log io.Writer, opt Options) (*Cluster, error) {
	for _, a := range append([]string{opt.Listen}, opt.Allow...) {
		if a != "" && net.ParseIP(a) == nil {
			return nil, fmt.Errorf("PostgreSQL: %q is not an IP address (listen and allow take addresses, like 10.0.0.4)", a)
		}
	}
	if opt.Listen != "" && len(opt.Allow) == 0 {
		return nil, fmt.Errorf("PostgreSQL on %s admits nobody: name the target host's address to allow", opt.Listen)
	}
	if log == nil {
		log = io.Discard
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("PostgreSQL not started: %w", err)
	}
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	sweep(os.TempDir(), bin, log)
	c := &Cluster{Bin: bin, log: log, asRoot: os.Geteuid() == 0, Host: "127.0.0.1", allow: opt.Allow}
	if opt.Listen != "" {
		c.Host = opt.Listen
	}
	if err := c.create(); err != nil {
		return nil, err
	}
	if err := c.start(ctx); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

// create makes the dir, records its owner and hands it to the postgres user.
func (c *Cluster) create() error {
	var uid, gid int
	if c.asRoot {
		cred, err := serverCred()
		if err != nil {
			return err
		}
		c.cred = cred
		uid, gid = int(cred.Uid), int(cred.Gid)
	}
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return fmt.Errorf("create the PostgreSQL dir: %w (set TMPDIR to a writable directory)", err)
	}
	c.Dir = dir
	if err := writeOwner(dir); err != nil {
		os.RemoveAll(dir)
		return err
	}
	if c.asRoot {
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return fmt.Errorf("hand %s to the postgres user: %w", dir, err)
		}
	}
	return nil
}

// serverCred is the postgres system user, whom the server programs run as
// when threadlab is root.
func serverCred() (*syscall.Credential, error) {
	u, err := user.Lookup(User)
	if err != nil {
		return nil, fmt.Errorf("no %q system user to run PostgreSQL as root: install the server with `apt-get install postgresql`, which creates it: %w", User, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// start runs initdb, configures, starts the server and creates the database.
func (c *Cluster) start(ctx context.Context) error {
	t0 := time.Now()
	pw := make([]byte, 24)
	if _, err := rand.Read(pw); err != nil {
		return fmt.Errorf("make the PostgreSQL password: %w", err)
	}
	c.Password = hex.EncodeToString(pw)
	pwfile := filepath.Join(c.Dir, "pwfile")
	if err := c.writePrivate(pwfile, c.Password+"\n"); err != nil {
		return err
	}
	out, err := c.run(ctx, true, "initdb", "-D", c.data(), "--auth=scram-sha-256", "--pwfile="+pwfile, "-U", User,
		"-E", "UTF8", "--locale=C", "--no-sync")
	os.Remove(pwfile)
	if err != nil {
		hint := ""
		if c.asRoot && strings.Contains(out, "ermission denied") {
			hint = " (every parent of " + c.Dir + " must be searchable by the postgres user: set TMPDIR to a directory such as /tmp)"
		}
		return fmt.Errorf("initdb in %s: %w%s: %s", c.Dir, err, hint, tail(out, 5))
	}
	if out, err := c.run(ctx, false, "postgres", "--version"); err == nil {
		c.Version = strings.TrimSpace(out)
	}
	// A free port can be taken between probing and binding; try again then.
	for attempt := 1; ; attempt++ {
		port, err := supervise.FreePort("127.0.0.1")
		if err != nil {
			return fmt.Errorf("PostgreSQL: %w", err)
		}
		c.Port = port
		if err := c.configure(); err != nil {
			return err
		}
		err = c.serve(ctx)
		if err == nil {
			break
		}
		serverLog, _ := os.ReadFile(c.logPath())
		if attempt < 3 && bytes.Contains(serverLog, []byte("could not bind")) && ctx.Err() == nil {
			fmt.Fprintf(c.log, "threadlab: port %d was taken after it was probed; trying another\n", port)
			continue
		}
		return fmt.Errorf("start PostgreSQL on 127.0.0.1:%d: %w; the server log ends with: %s", port, err, tail(string(serverLog), 8))
	}
	if out, err := c.run(ctx, false, "createdb", "-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-U", User, Database); err != nil {
		return fmt.Errorf("create database %s: %w: %s", Database, err, tail(out, 5))
	}
	where := "127.0.0.1"
	if c.Host != "127.0.0.1" {
		where += " and " + c.Host + ", admitting " + strings.Join(c.allow, ", ")
	}
	fmt.Fprintf(c.log, "threadlab: PostgreSQL %s ready on %s port %d in %s (%v)\n", c.Version, where, c.Port, c.Dir, time.Since(t0).Round(time.Millisecond))
	return nil
}

// serve starts the postmaster in the foreground under a supervisor and
// waits until postmaster.pid says it accepts connections (what pg_ctl -w
// waits for), the server exits, or ctx ends.
func (c *Cluster) serve(ctx context.Context) error {
	logf, err := os.OpenFile(c.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open the server log: %w", err)
	}
	defer logf.Close() // the supervisor has its own copy
	argv := []string{filepath.Join(c.Bin, "postgres"), "-D", c.data()}
	fmt.Fprintf(c.log, "threadlab: %s\nthreadlab: waiting for PostgreSQL to accept connections\n", strings.Join(argv, " "))
	p, err := supervise.Start(supervise.Spec{Argv: argv, Dir: c.Dir, Env: append(os.Environ(), "LC_ALL=C"),
		Stdout: logf, Stderr: logf, Cred: c.cred, Grace: stopTimeout})
	if err != nil {
		return err
	}
	deadline := time.After(startTimeout)
	for {
		if ready(c.data()) {
			c.server = p
			return nil
		}
		select {
		case <-p.Done():
			return fmt.Errorf("postgres exited before it was ready: %v", p.Err())
		case <-ctx.Done():
			p.Kill()
			return fmt.Errorf("postgres start-up: %w", ctx.Err())
		case <-deadline:
			p.Kill()
			return fmt.Errorf("postgres not ready after %s", startTimeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ready reports whether postmaster.pid's status line (the 8th, since
// PostgreSQL 10) says "ready".
func ready(data string) bool {
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return false
	}
	lines := strings.Split(string(b), "\n")
	return len(lines) >= 8 && strings.TrimSpace(lines[7]) == "ready"
}

// writePrivate writes a file only the server's user can read.
func (c *Cluster) writePrivate(path, text string) error {
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if c.cred != nil {
		if err := os.Chown(path, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return fmt.Errorf("hand %s to the postgres user: %w", path, err)
		}
	}
	return nil
}

// configure writes the benchmark settings and the address into a file that
// postgresql.conf includes; it is rewritten on a port retry.
func (c *Cluster) configure() error {
	conf := filepath.Join(c.data(), "threadlab.conf")
	var b strings.Builder
	b.WriteString("# written by threadlab: a throw-away cluster for one benchmark run\n")
	listen := "127.0.0.1"
	if c.Host != "127.0.0.1" {
		listen += "," + c.Host
	}
	fmt.Fprintf(&b, "listen_addresses = '%s'\nport = %d\nunix_socket_directories = '%s'\n", listen, c.Port, strings.ReplaceAll(c.Dir, "'", "''"))
	for _, s := range settings {
		b.WriteString(s + "\n")
	}
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", conf, err)
	}
	main := filepath.Join(c.data(), "postgresql.conf")
	text, err := os.ReadFile(main)
	if err != nil {
		return fmt.Errorf("read %s: %w", main, err)
	}
	if err := c.admit(); err != nil {
		return err
	}
	if !bytes.Contains(text, []byte("include 'threadlab.conf'")) {
		// Appending keeps the file's owner (postgres) when threadlab is root.
		f, err := os.OpenFile(main, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", main, err)
		}
		_, err = f.WriteString("\ninclude 'threadlab.conf'\n")
		if err := errors.Join(err, f.Close()); err != nil {
			return fmt.Errorf("append to %s: %w", main, err)
		}
	}
	return nil
}

// admit adds a pg_hba.conf entry per allowed client address, scram-sha-256
// like every other; initdb's own entries admit loopback only.
func (c *Cluster) admit() error {
	if len(c.allow) == 0 {
		return nil
	}
	hba := filepath.Join(c.data(), "pg_hba.conf")
	text, err := os.ReadFile(hba)
	if err != nil {
		return fmt.Errorf("read %s: %w", hba, err)
	}
	var add strings.Builder
	for _, a := range c.allow {
		mask := "/32"
		if strings.Contains(a, ":") {
			mask = "/128"
		}
		line := "host all all " + a + mask + " scram-sha-256\n"
		if !bytes.Contains(text, []byte(line)) {
			add.WriteString(line)
		}
	}
	if add.Len() == 0 { // a port retry rewrote the rest of the configuration
		return nil
	}
	f, err := os.OpenFile(hba, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", hba, err)
	}
	_, err = f.WriteString("# threadlab: the target host only\n" + add.String())
	if err := errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("append to %s: %w", hba, err)
	}
	return nil
}

// JDBCURL is the URL a Spring target's datasource uses.
func (c *Cluster) JDBCURL() string {
	return "jdbc:postgresql://" + net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) + "/" + Database
}

// Properties are the Spring properties that point a target at the cluster.
// The password is not among them: see Env.
func (c *Cluster) Properties() map[string]string {
	return map[string]string{
		"spring.datasource.url":               c.JDBCURL(),
		"spring.datasource.username":          User,
		"spring.datasource.driver-class-name": "org.postgresql.Driver",
	}
}

// Env is the environment that gives a target the password: Spring binds
// SPRING_DATASOURCE_PASSWORD to spring.datasource.password. It is not a
// command-line property because any local user can read command lines,
// and the report records them.
func (c *Cluster) Env() []string {
	return []string{"SPRING_DATASOURCE_PASSWORD=" + c.Password}
}

// Exec runs SQL with psql in the threadlab database and returns its
// unaligned, tuples-only output, for checks such as counting the target's
// connections in pg_stat_activity.
func (c *Cluster) Exec(ctx context.Context, sql string) (string, error) {
	out, err := c.run(ctx, false, "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
		"-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-U", User, "-d", Database, "-c", sql)
	if err != nil {
		return "", fmt.Errorf("psql on 127.0.0.1:%d: %w: %s", c.Port, err, tail(out, 5))
	}
	return out, nil
}

// Stop shuts the server down (fast mode: sessions are ended, no waiting for
// clients), copies the server log to the log writer, and removes Dir. If the
// fast shutdown fails, the postmaster is killed. It is idempotent and safe
// to call concurrently, e.g. from the normal path and a signal handler: the
// second call waits for the first and returns its result. It uses no context
// of the caller's, so a cancelled run still cleans up.
func (c *Cluster) Stop() error {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	if c.stopped {
		return c.stopErr
	}
	c.stopped = true
	var errs []error
	if c.server != nil {
		// SIGINT is PostgreSQL's fast shutdown: sessions are ended, the
		// postmaster stops its children and exits.
		c.server.Signal(syscall.SIGINT)
		select {
		case <-c.server.Done():
		case <-time.After(stopTimeout):
			errs = append(errs, fmt.Errorf("PostgreSQL in %s did not shut down within %s; killed it", c.Dir, stopTimeout))
			c.server.Kill()
		}
	} else if pid, ok := postmasterPID(c.data()); ok {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout+5*time.Second)
		_, err := c.run(ctx, true, "pg_ctl", "-D", c.data(), "-m", "fast", "-w", "-t", strconv.Itoa(int(stopTimeout.Seconds())), "stop")
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("pg_ctl stop in %s: %w; killed the postmaster (pid %d) instead", c.Dir, err, pid))
			killWait(pid)
		}
	}
	// Anything still running with the dir in its command line is ours and
	// should not be there: the supervisors make this a backstop for clusters
	// of older threadlab versions found by sweep.
	for _, pid := range procsWith(c.Dir + string(filepath.Separator)) {
		errs = append(errs, fmt.Errorf("process %d was still running in %s; killed it", pid, c.Dir))
		killWait(pid)
	}
	c.saveLog()
	if err := os.RemoveAll(c.Dir); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w (remove it by hand)", c.Dir, err))
	}
	c.stopErr = errors.Join(errs...)
	return c.stopErr
}

// saveLog appends the server log to the log writer once.
func (c *Cluster) saveLog() {
	if c.logSaved {
		return
	}
	c.logSaved = true
	if f, err := os.Open(c.logPath()); err == nil {
		fmt.Fprintf(c.log, "threadlab: server log of %s follows\n", c.Dir)
		io.Copy(c.log, f)
		f.Close()
	}
}

func (c *Cluster) data() string    { return filepath.Join(c.Dir, "data") }
func (c *Cluster) logPath() string { return filepath.Join(c.Dir, "log") }

// run runs a program from the bin dir in Dir and returns its combined
// output, which also goes to the log. Server programs run as the postgres
// user when threadlab is root. The program runs under a supervisor: cancel
// stops it and everything it started, and so does threadlab's death.
func (c *Cluster) run(ctx context.Context, server bool, prog string, args ...string) (string, error) {
	argv := append([]string{filepath.Join(c.Bin, prog)}, args...)
	spec := supervise.Spec{Argv: argv, Dir: c.Dir, Grace: 2 * time.Second,
		Env: append(os.Environ(), "LC_ALL=C", "PGCONNECT_TIMEOUT=10", "PGPASSWORD="+c.Password)}
	if spec.Dir == "" {
		spec.Dir = os.TempDir()
	}
	if server {
		spec.Cred = c.cred
	}
	var out supervise.Buffer
	spec.Stdout = io.MultiWriter(&out, c.log)
	spec.Stderr = spec.Stdout
	fmt.Fprintf(c.log, "threadlab: %s\n", strings.Join(argv, " "))
	err := supervise.Run(ctx, spec)
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%s: %w", prog, ctx.Err())
	}
	return out.String(), err
}

// postmasterPID reads the running server's pid from postmaster.pid.
func postmasterPID(data string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	return pid, err == nil && pid > 0
}

// killWait sends SIGQUIT (PostgreSQL's immediate shutdown: children exit
// too), then SIGKILL, and waits for the process to be gone.
func killWait(pid int) {
	for _, sig := range []syscall.Signal{syscall.SIGQUIT, syscall.SIGKILL} {
		if syscall.Kill(pid, sig) != nil {
			return
		}
		for range 50 {
			time.Sleep(100 * time.Millisecond)
			if gone(pid) {
				return
			}
		}
	}
}

// gone reports whether pid has exited. A zombie counts as gone: the
// daemonized postmaster's parent is init, which may reap it late or, in a
// container without an init, never.
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// tail returns the last n non-empty lines of s, joined with " | ".
func tail(s string, n int) string {
	lines := slices.DeleteFunc(strings.Split(strings.TrimSpace(s), "\n"), func(l string) bool { return strings.TrimSpace(l) == "" })
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return "(no output)"
	}
	return strings.Join(lines, " | ")
}
