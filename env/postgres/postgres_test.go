package postgres

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadlab/threadlab/env/supervise"
	"github.com/threadlab/threadlab/internal/testenv"
)

// needBinaries skips a test that needs a real PostgreSQL when the binaries
// are missing, except on CI (CI=true), where that is a broken setup and
// fails with the install hint.
func needBinaries(t *testing.T) string {
	t.Helper()
	bin, err := BinDir()
	testenv.Need(t, err, "PostgreSQL", "apt-get install postgresql (scripts/setup.sh does)")
	return bin
}

// isolateTemp points os.TempDir at a fresh dir, so a test can see exactly
// what Start leaves behind and sweep cannot touch other tests' clusters.
// The dir is made searchable because as root the postgres user must reach
// the cluster dir inside it.
func isolateTemp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	// t.TempDir makes two levels (TestName123/001), both 0700.
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", dir)
	return dir
}

// syncBuffer is a log writer safe for the concurrent Stop test.
type syncBuffer = supervise.Buffer

// assertGone checks that nothing of the cluster remains: no process with the
// dir in its command line (what `pgrep -f DIR/` sees) and no dir.
func assertGone(t *testing.T, dir string) {
	t.Helper()
	out, err := exec.Command("pgrep", "-a", "-f", dir+"/").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("pgrep -f %s/: %v, %q; want exit 1 (no process left)", dir, err, out)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat %s after Stop: %v, want the dir removed", dir, err)
	}
}

func TestStartStop(t *testing.T) {
	bin := needBinaries(t)
	tmp := isolateTemp(t)
	var log syncBuffer
	t0 := time.Now()
	c, err := Start(t.Context(), &log)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Since(t0)
	defer c.Stop()
	if filepath.Dir(c.Dir) != tmp || c.Port <= 0 || c.Bin != bin || !strings.HasPrefix(c.Version, "postgres (PostgreSQL) ") {
		t.Errorf("cluster %+v, want a dir in %s, a port, bin %s and a version", c, tmp, bin)
	}

	// What the brief asks: psql on the port, independent of Exec; and no
	// trust authentication: the same psql without the password is refused,
	// over TCP and over the socket, so another local user cannot get in.
	psql := func(password, host string) (string, error) {
		cmd := exec.Command(filepath.Join(bin, "psql"), "-X", "-A", "-t", "-w", "-h", host,
			"-p", strconv.Itoa(c.Port), "-U", "postgres", "-d", "threadlab", "-c", "select 1")
		cmd.Env = append(os.Environ(), "PGPASSWORD="+password, "PGPASSFILE=/dev/null")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := psql(c.Password, "127.0.0.1"); err != nil || strings.TrimSpace(out) != "1" {
		t.Fatalf("psql select 1 on port %d with the password: %v, %q; want 1", c.Port, err, out)
	}
	for _, host := range []string{"127.0.0.1", c.Dir} {
		if out, err := psql("", host); err == nil || !strings.Contains(out, "password") {
			t.Errorf("psql on %s without a password: %v, %q; want it refused (scram-sha-256, no trust)", host, err, out)
		}
	}
	if len(c.Password) < 32 {
		t.Errorf("password %q: want a long random one", c.Password)
	}
	if env := c.Env(); len(env) != 1 || env[0] != "SPRING_DATASOURCE_PASSWORD="+c.Password {
		t.Errorf("Env() = %q, want the password for Spring's datasource", env)
	}

	tests := []struct {
		sql, want, reason string
	}{
		{"show max_connections", "1000", "pool sweeps go up to 800 connections"},
		{"show fsync", "off", "throw-away data: no disk flush on the request path"},
		{"show synchronous_commit", "off", "commits do not wait for WAL to reach disk"},
		{"show listen_addresses", "127.0.0.1", "loopback only"},
		{"show password_encryption", "scram-sha-256", "no md5 hashes"},
		{"select count(*) from pg_hba_file_rules where auth_method not in ('scram-sha-256')", "0", "every hba rule asks for scram-sha-256"},
		{"show port", strconv.Itoa(c.Port), "the port the JDBC URL names"},
		{"select current_database()", "threadlab", "the database Start creates"},
		{"show server_encoding", "UTF8", "initdb's encoding does not depend on the host locale"},
	}
	for _, tt := range tests {
		got, err := c.Exec(t.Context(), tt.sql)
		if err != nil || strings.TrimSpace(got) != tt.want {
			t.Errorf("%s = %q, %v; want %s (%s)", tt.sql, got, err, tt.want, tt.reason)
		}
	}
	if _, err := c.Exec(t.Context(), "select nope"); err == nil || !strings.Contains(err.Error(), `column "nope" does not exist`) {
		t.Errorf("Exec of bad SQL = %v, want psql's error quoted", err)
	}

	url := "jdbc:postgresql://127.0.0.1:" + strconv.Itoa(c.Port) + "/threadlab"
	wantProps := map[string]string{
		"spring.datasource.url":               url,
		"spring.datasource.username":          "postgres",
		"spring.datasource.driver-class-name": "org.postgresql.Driver",
	}
	if c.JDBCURL() != url || !maps.Equal(c.Properties(), wantProps) {
		t.Errorf("JDBCURL %q Properties %v, want %q and %v", c.JDBCURL(), c.Properties(), url, wantProps)
	}

	t0 = time.Now()
	if err := c.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	t.Logf("PostgreSQL %s: start %v, stop %v", c.Version, started.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
	assertGone(t, c.Dir)
	if err := c.Stop(); err != nil {
		t.Errorf("second stop: %v, want nil", err)
	}
	if l := log.String(); !strings.Contains(l, "database system is ready to accept connections") || !strings.Contains(l, "database system is shut down") {
		t.Errorf("log lacks the server log's start and shutdown lines:\n%s", l)
	}
}

// TestStopAfterContextCancel: the context bounds start-up only, so a run
// whose context is cancelled (Ctrl-C) still has a cluster to stop, and Stop,
// which takes no context, cleans it up.
func TestStopAfterContextCancel(t *testing.T) {
	needBinaries(t)
	isolateTemp(t)
	ctx, cancel := context.WithCancel(t.Context())
	c, err := Start(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if out, err := c.Exec(t.Context(), "select 1"); err != nil || strings.TrimSpace(out) != "1" {
		t.Errorf("after cancel: select 1 = %q, %v; want the cluster still serving until Stop", out, err)
	}
	// Two concurrent calls, as the normal path and a signal handler make.
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- c.Stop() }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("stop after cancel: %v", err)
		}
	}
	assertGone(t, c.Dir)
}

// cancelOn cancels a context when the start-up log shows a given phase,
// which pins a cancel to that phase on machines of any speed.
type cancelOn struct {
	mu      sync.Mutex
	log     strings.Builder
	trigger string
	cancel  context.CancelFunc
}

func (w *cancelOn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log.Write(p)
	if strings.Contains(w.log.String(), w.trigger) {
		w.cancel()
	}
	return len(p), nil
}

// TestStartCancelledLeavesNothing cancels start-up in each phase and checks
// that a failed Start removes everything it made, including a postmaster
// that pg_ctl had already launched.
func TestStartCancelledLeavesNothing(t *testing.T) {
	needBinaries(t)
	tests := []struct {
		trigger string // cancel when the log shows this; "" cancels before Start
		reason  string
	}{
		{"", "an already cancelled context creates nothing"},
		{"running bootstrap script", "initdb is killed part-way, as the postgres user"},
		{"waiting for PostgreSQL to accept connections", "the postmaster is killed while it comes up"},
		{"createdb -h", "the server runs; creating the database is cancelled"},
	}
	for _, tt := range tests {
		tmp := isolateTemp(t)
		ctx, cancel := context.WithCancel(t.Context())
		w := &cancelOn{trigger: tt.trigger, cancel: cancel}
		if tt.trigger == "" {
			cancel()
		}
		c, err := Start(ctx, w)
		cancel()
		t.Logf("cancel at %q: %v", tt.trigger, err)
		if err == nil {
			c.Stop()
			t.Errorf("cancel at %q: Start succeeded, want it to fail (%s)", tt.trigger, tt.reason)
		} else if !errors.Is(err, context.Canceled) {
			t.Errorf("cancel at %q: %v, want an error wrapping context.Canceled (%s)", tt.trigger, err, tt.reason)
		}
		if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
			t.Errorf("cancel at %q left %v, want nothing (%s)", tt.trigger, left, tt.reason)
		}
		if out, _ := exec.Command("pgrep", "-a", "-f", tmp+"/").CombinedOutput(); len(out) > 0 {
			t.Errorf("cancel at %q left processes:\n%s(%s)", tt.trigger, out, tt.reason)
		}
	}
}

// TestSweepRemovesOrphans: a cluster whose owner is gone (here: the owner
// file names this pid with another start time, as a reused pid would) is
// stopped and removed by the next Start; a live owner's cluster is kept.
func TestSweepRemovesOrphans(t *testing.T) {
	bin := needBinaries(t)
	isolateTemp(t)
	orphan, err := Start(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer orphan.Stop()
	if err := os.WriteFile(filepath.Join(orphan.Dir, ownerFile), []byte(strconv.Itoa(os.Getpid())+" 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	live, err := Start(t.Context(), &log)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Stop()
	assertGone(t, orphan.Dir)
	if !strings.Contains(log.String(), "removing PostgreSQL cluster "+orphan.Dir) {
		t.Errorf("log does not say the orphan was removed:\n%s", log.String())
	}
	sweep(os.TempDir(), bin, &log)
	if out, err := live.Exec(t.Context(), "select 1"); err != nil || strings.TrimSpace(out) != "1" {
		t.Errorf("live cluster after a sweep: %q, %v; want it untouched", out, err)
	}
	if err := live.Stop(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, live.Dir)
}

func TestBinDir(t *testing.T) {
	full := []string{"initdb", "pg_ctl", "postgres", "psql", "createdb"}
	tests := []struct {
		name     string
		versions map[string][]string // major -> programs present
		onPath   bool                // a complete bin dir on PATH
		want     string              // major dir chosen, "path", or "" for an error
		reason   string
	}{
		{"newest", map[string][]string{"13": full, "15": full, "9.6": full}, false, "15", "the newest major wins"},
		{"numeric", map[string][]string{"9.6": full, "10": full}, false, "10", "versions compare as numbers, not strings"},
		{"incomplete", map[string][]string{"15": full, "16": {"psql", "pg_ctl"}}, false, "15", "a client-only install (postgresql-client-16) is skipped"},
		{"path", map[string][]string{}, true, "path", "distributions that put pg_ctl on PATH"},
		{"missing", map[string][]string{"16": {"psql"}}, false, "", "only a client: say how to install the server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for major, progs := range tt.versions {
				fakeBin(t, filepath.Join(root, major, "bin"), progs)
			}
			pathDir := filepath.Join(t.TempDir(), "bin")
			if tt.onPath {
				fakeBin(t, pathDir, full)
			}
			t.Setenv("PATH", pathDir)
			old := debianRoot
			debianRoot = root
			defer func() { debianRoot = old }()

			got, err := BinDir()
			switch tt.want {
			case "":
				if err == nil || !strings.Contains(err.Error(), "apt-get install postgresql") {
					t.Errorf("BinDir() = %q, %v; want an error with the install command (%s)", got, err, tt.reason)
				}
			case "path":
				if err != nil || got != pathDir {
					t.Errorf("BinDir() = %q, %v; want %s (%s)", got, err, pathDir, tt.reason)
				}
			default:
				if want := filepath.Join(root, tt.want, "bin"); err != nil || got != want {
					t.Errorf("BinDir() = %q, %v; want %s (%s)", got, err, want, tt.reason)
				}
			}
		})
	}
}

func fakeBin(t *testing.T, dir string, progs []string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStartTimeAndOwner(t *testing.T) {
	dir := t.TempDir()
	if err := writeOwner(dir); err != nil {
		t.Fatal(err)
	}
	pid, start, ok := readOwner(dir)
	if !ok || pid != os.Getpid() || !alive(pid, start) {
		t.Errorf("owner %d %d ok=%v, want this process, alive", pid, start, ok)
	}
	if alive(pid, start+1) {
		t.Error("alive with another start time, want false: a reused pid is a different process")
	}
	os.WriteFile(filepath.Join(dir, ownerFile), []byte("garbage"), 0o644)
	if _, _, ok := readOwner(dir); ok {
		t.Error("readOwner accepted a malformed owner file; want it ignored so sweep leaves the dir alone")
	}
}

func TestTail(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\n\nc\n", 2, "b | c"},
		{"a\n", 5, "a"},
		{"\n \n", 3, "(no output)"},
	}
	for _, tt := range tests {
		if got := tail(tt.in, tt.n); got != tt.want {
			t.Errorf("tail(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

// StartWith refuses a placement it cannot secure before it starts anything.
func TestStartWithRefuses(t *testing.T) {
	for _, c := range []struct {
		why  string
		opt  Options
		want string
	}{
		{"a host name, not an address", Options{Listen: "db.example", Allow: []string{"10.0.0.2"}}, `"db.example" is not an IP address`},
		{"an allowed client that is not an address", Options{Listen: "10.0.0.4", Allow: []string{"10.0.0.0/24"}}, `"10.0.0.0/24" is not an IP address`},
		{"listening for nobody", Options{Listen: "10.0.0.4"}, "admits nobody"},
	} {
		c2, err := StartWith(context.Background(), nil, c.opt)
		if c2 != nil || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, %v; want an error saying %q", c.why, c2, err, c.want)
		}
	}
}
