package main

// Tests of threadlab as a whole process: signals and kill -9. The test
// binary stands in for threadlab: with THREADLAB_TEST_MAIN=1 in its
// environment, TestMain runs main() instead of the tests, so these tests
// exercise the real signal handling, the real supervisors and real child
// processes without building a second binary.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/threadlab/threadlab/internal/testenv"

	"github.com/threadlab/threadlab/env/postgres"
	"github.com/threadlab/threadlab/env/targets"
	"github.com/threadlab/threadlab/store/record"
)

const testMainEnv = "THREADLAB_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(testMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// threadlab is a threadlab process started by a test.
type threadlab struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	exited chan struct{}
}

// startThreadlab runs this test binary as `threadlab args...` with extra
// environment, in its own process group so a signal reaches it alone.
func startThreadlab(t *testing.T, env []string, args ...string) *threadlab {
	t.Helper()
	tl := &threadlab{exited: make(chan struct{})}
	tl.cmd = exec.Command(os.Args[0], args...)
	tl.cmd.Env = append(append(os.Environ(), testMainEnv+"=1"), env...)
	tl.cmd.Stdout = io.Discard
	pr, pw := io.Pipe()
	tl.cmd.Stderr = pw
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			tl.mu.Lock()
			tl.stderr.WriteString(sc.Text() + "\n")
			tl.mu.Unlock()
		}
	}()
	tl.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := tl.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		tl.cmd.Wait()
		pw.Close()
		close(tl.exited)
	}()
	t.Cleanup(func() {
		tl.cmd.Process.Kill()
		<-tl.exited
	})
	return tl
}

func (tl *threadlab) log() string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.stderr.String()
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, tl *threadlab, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		select {
		case <-tl.exited:
			t.Fatalf("threadlab exited before %s:\n%s", what, tl.log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %s:\n%s", what, d, tl.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// descendants lists every live process below pid, at this moment.
func descendants(pid int) []int {
	kids := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		kids[ppid] = append(kids[ppid], p)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, kids[p]...)
		queue = append(queue, kids[p]...)
	}
	return out
}

func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

// kill9AndCheck kills threadlab with SIGKILL and checks that every process
// it had started (its descendants a moment before) is gone 5 s later.
func kill9AndCheck(t *testing.T, tl *threadlab, want func(cmdlines []string) error) {
	t.Helper()
	pids := descendants(tl.cmd.Process.Pid)
	var lines []string
	for _, p := range pids {
		lines = append(lines, fmt.Sprintf("%d %s", p, cmdline(p)))
	}
	t.Logf("threadlab's processes before kill -9:\n%s", strings.Join(lines, "\n"))
	if err := want(lines); err != nil {
		t.Fatalf("%v; processes:\n%s", err, strings.Join(lines, "\n"))
	}
	tl.cmd.Process.Signal(syscall.SIGKILL)
	<-tl.exited
	time.Sleep(5 * time.Second)
	for _, p := range pids {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat"); err == nil && !bytes.Contains(b, []byte(") Z ")) {
			t.Errorf("pid %d (%s) still alive 5 s after kill -9 of threadlab", p, cmdline(p))
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// fakeMaven writes an mvn that builds nothing for a long time: it starts a
// background child and a grandchild through sh -c, as Maven's forked JVMs
// would, and waits. It records that it ran in dir/started.
func fakeMaven(t *testing.T, dir string) {
	t.Helper()
	script := "#!/bin/sh\nsleep 300 &\nsh -c 'sleep 300; echo never' &\necho started > \"" + dir + "/started\"\nwait\n"
	if err := os.WriteFile(filepath.Join(dir, "mvn"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestKill9DuringBuild: kill -9 of threadlab while Maven builds leaves no
// Maven behind (it used to keep building in its own process group), and the
// build lock is free again for the next run.
func TestKill9DuringBuild(t *testing.T) {
	_, _, err := targets.FindJDK()
	testenv.Need(t, err, "a JDK >= 21 (the build stage needs one to reach Maven)", "install Temurin 25 or openjdk-21-jdk, or set JAVA_HOME")
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	targets := filepath.Join(dir, "targets")
	os.MkdirAll(bin, 0o755)
	os.MkdirAll(targets, 0o755)
	os.WriteFile(filepath.Join(targets, "pom.xml"), []byte("<project/>\n"), 0o644)
	fakeMaven(t, bin)
	manifest := filepath.Join(dir, "build.yaml")
	os.WriteFile(manifest, []byte(`name: build
title: kill -9 during the build
question: does Maven outlive threadlab?
variants:
  a: {target: spring-mvc}
load: {model: burst, burst: 1, requests: [{path: /}]}
trials: 1
`), 0o644)
	tl := startThreadlab(t, []string{"PATH=" + bin + ":" + os.Getenv("PATH")},
		"run", "--quiet", "--data", filepath.Join(dir, "data"), "--reports", filepath.Join(dir, "reports"), "--targets", targets, manifest)
	waitFor(t, "Maven start", 2*time.Minute, tl, func() bool { return fileExists(filepath.Join(bin, "started")) })
	kill9AndCheck(t, tl, func(lines []string) error {
		// Prove the real path: Maven runs under threadlab's supervisor.
		if !contains(lines, "supervise --grace") || !contains(lines, bin+"/mvn -q -B -DskipTests clean package") {
			return errors.New("want mvn -q -B ... under a supervisor")
		}
		return nil
	})
	// A second run may build now: the dead run's lock is free.
	lock := buildLockOf(t, targets)
	f, err := os.Open(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Errorf("build lock %s after kill -9: %v, want it free", lock, err)
	}
}

// buildLockOf finds the build lock threadlab used for a targets dir: the
// newest threadlab-build-*.lock in the temp dir.
func buildLockOf(t *testing.T, _ string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(os.TempDir(), "threadlab-build-*.lock"))
	var newest string
	var at time.Time
	for _, p := range m {
		if fi, err := os.Stat(p); err == nil && fi.ModTime().After(at) {
			newest, at = p, fi.ModTime()
		}
	}
	if newest == "" {
		t.Fatal("no build lock file")
	}
	return newest
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
func dirExists(p string) bool  { fi, err := os.Stat(p); return err == nil && fi.IsDir() }

// startPostgresRun starts a run that needs PostgreSQL and returns once its
// postmaster runs, with the cluster's temp dir and the run dir.
func startPostgresRun(t *testing.T) (tl *threadlab, tmp, runDir string) {
	t.Helper()
	_, err := postgres.BinDir()
	testenv.Need(t, err, "PostgreSQL", "apt-get install postgresql (scripts/setup.sh does)")
	dir := t.TempDir()
	tmp = filepath.Join(dir, "tmp")
	os.MkdirAll(tmp, 0o755)
	// As root the postgres user must reach the cluster dir inside tmp.
	for _, d := range []string{dir, filepath.Dir(dir)} {
		os.Chmod(d, 0o755)
	}
	// The database is for built-in targets, which need a build first: a
	// fake mvn "builds" empty jars at once, so the run reaches the services.
	bin := filepath.Join(dir, "bin")
	targets := filepath.Join(dir, "targets")
	os.MkdirAll(bin, 0o755)
	os.MkdirAll(targets, 0o755)
	os.WriteFile(filepath.Join(targets, "pom.xml"), []byte("<project/>\n"), 0o644)
	os.WriteFile(filepath.Join(bin, "mvn"), []byte("#!/bin/sh\nfor m in spring-mvc spring-webflux; do mkdir -p $m/target && : > $m/target/$m.jar; done\n"), 0o755)
	manifest := filepath.Join(dir, "pg.yaml")
	os.WriteFile(manifest, []byte(`name: pg
title: a signal during PostgreSQL start-up
question: does the postmaster outlive threadlab?
services: {database: postgres}
variants:
  a: {target: spring-mvc}
load: {model: burst, burst: 1, requests: [{path: /}]}
trials: 1
`), 0o644)
	tl = startThreadlab(t, []string{"TMPDIR=" + tmp, "PATH=" + bin + ":" + os.Getenv("PATH")},
		"run", "--quiet", "--run-id", "r", "--data", filepath.Join(dir, "data"), "--reports", filepath.Join(dir, "reports"), "--targets", targets, manifest)
	waitFor(t, "postmaster", 2*time.Minute, tl, func() bool {
		for _, p := range descendants(tl.cmd.Process.Pid) {
			if c := cmdline(p); strings.Contains(c, "/postgres -D "+tmp) && !strings.Contains(c, "supervise") {
				return true
			}
		}
		return false
	})
	return tl, tmp, filepath.Join(dir, "data", "pg", "r")
}

// TestKill9DuringPostgresStart: kill -9 while the postmaster comes up leaves
// no PostgreSQL process (the pg_ctl daemon used to run on until a later run
// swept it).
func TestKill9DuringPostgresStart(t *testing.T) {
	tl, tmp, _ := startPostgresRun(t)
	kill9AndCheck(t, tl, func(lines []string) error {
		if !contains(lines, "supervise --grace") {
			return errors.New("want the postmaster under a supervisor")
		}
		return nil
	})
	if out, _ := exec.Command("pgrep", "-a", "-f", tmp+"/").CombinedOutput(); len(out) > 0 {
		t.Errorf("processes of the cluster in %s still run:\n%s", tmp, out)
	}
}

// TestSignalDuringPostgresStart: one SIGINT while PostgreSQL starts stops
// the start-up (it used to run on, uncancellable), runs no trial, removes
// the cluster and marks the run interrupted.
func TestSignalDuringPostgresStart(t *testing.T) {
	tl, tmp, runDir := startPostgresRun(t)
	pids := descendants(tl.cmd.Process.Pid)
	tl.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-tl.exited:
	case <-time.After(time.Minute):
		t.Fatalf("threadlab still runs a minute after SIGINT:\n%s", tl.log())
	}
	if code := tl.cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("exit code 0 after SIGINT, want non-zero:\n%s", tl.log())
	}
	var meta record.Meta
	if err := record.ReadJSON(runDir, record.RunFile, &meta); err != nil || meta.State != "interrupted" {
		t.Errorf("run.json state %q (%v), want interrupted:\n%s", meta.State, err, tl.log())
	}
	if strings.Contains(tl.log(), "== trials") {
		t.Errorf("the trials stage started after SIGINT:\n%s", tl.log())
	}
	for _, p := range pids {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat"); err == nil && !bytes.Contains(b, []byte(") Z ")) {
			t.Errorf("pid %d (%s) alive after the interrupted run ended", p, cmdline(p))
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "threadlab-pg-*")); len(left) > 0 {
		t.Errorf("cluster dirs left: %v", left)
	}
}

// TestKill9MidTrial: a wrapper command target (sh -c without exec, with a
// background grandchild) is gone 5 s after kill -9 of threadlab mid-trial;
// grandchildren used to keep listening.
func TestKill9MidTrial(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "wrap.yaml")
	// The test binary serves as the target too: `threadlab downstream`.
	script := `sleep 300 & "$0" downstream --port "$1" --delay 20ms; echo never`
	os.WriteFile(manifest, []byte(fmt.Sprintf(`name: wrap
title: kill -9 mid-trial
question: do a wrapper's grandchildren outlive threadlab?
variants:
  a: {command: [sh, -c, %q, %q, "{port}"], ready: /health, env: {%s: "1"}}
load: {model: closed, users: 2, duration: 60s, requests: [{path: /enrich/1}]}
trials: 1
cooldown: {max_busy_pct: 100, pause: 1ms}
`, script, os.Args[0], testMainEnv)), 0o644)
	runDir := filepath.Join(dir, "data", "wrap", "r")
	tl := startThreadlab(t, nil, "run", "--quiet", "--run-id", "r", "--data", filepath.Join(dir, "data"), "--reports", filepath.Join(dir, "reports"), manifest)
	waitFor(t, "a running trial", 2*time.Minute, tl, func() bool {
		// The trial runs once the target answered and the load started.
		for _, p := range descendants(tl.cmd.Process.Pid) {
			if strings.Contains(cmdline(p), "downstream --port") && !strings.Contains(cmdline(p), "sh -c") {
				logs, _ := filepath.Glob(filepath.Join(runDir, "logs", "001-*.log"))
				return len(logs) == 1 && strings.Contains(tl.log(), "== trials")
			}
		}
		return false
	})
	time.Sleep(time.Second) // into the measurement
	kill9AndCheck(t, tl, func(lines []string) error {
		if !contains(lines, "sleep 300") || !contains(lines, "downstream --port") || !contains(lines, "supervise --grace") {
			return errors.New("want the wrapper, its background sleep and the server under a supervisor")
		}
		return nil
	})
}

// TestSignalDuringHostCheck: one SIGINT during the host check stops the
// run: no trial runs, run.json says interrupted, and the exit code is not 0
// (it used to run every trial and end "complete" with exit 0).
func TestSignalDuringHostCheck(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "hc.yaml")
	os.WriteFile(manifest, []byte(fmt.Sprintf(`name: hc
title: SIGINT during the host check
question: does the run stop?
variants:
  a: {command: [sh, -c, %q, %q, "{port}"], ready: /health, env: {%s: "1"}}
load: {model: burst, burst: 2, requests: [{path: /health}]}
trials: 2
cooldown: {max_busy_pct: 100, pause: 1ms}
`, `exec "$0" downstream --port "$1"`, os.Args[0], testMainEnv)), 0o644)
	runDir := filepath.Join(dir, "data", "hc", "r")
	tl := startThreadlab(t, nil, "run", "--quiet", "--run-id", "r", "--data", filepath.Join(dir, "data"), "--reports", filepath.Join(dir, "reports"), manifest)
	waitFor(t, "the host check", time.Minute, tl, func() bool { return strings.Contains(tl.log(), "== host check") })
	tl.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-tl.exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("threadlab still runs 2 min after SIGINT:\n%s", tl.log())
	}
	if code := tl.cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("exit code 0 after SIGINT, want non-zero:\n%s", tl.log())
	}
	var meta record.Meta
	if err := record.ReadJSON(runDir, record.RunFile, &meta); err != nil || meta.State != "interrupted" {
		t.Errorf("run.json state %q (%v), want interrupted:\n%s", meta.State, err, tl.log())
	}
	if trials, _ := record.ReadCSV[record.Trial](runDir, record.TrialsFile); len(trials) > 0 {
		t.Errorf("%d trials ran after SIGINT during the host check, want none", len(trials))
	}
	if strings.Contains(tl.log(), "== trials") {
		t.Errorf("the trials stage started after SIGINT:\n%s", tl.log())
	}
}

// TestSecondSignalForceQuits: a second SIGINT does not wait for the
// finishing stages or graceful shutdowns: threadlab kills what it started
// and exits 130 at once.
func TestSecondSignalForceQuits(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "twice.yaml")
	// A child of the target ignores SIGTERM (SIG_IGN is inherited), so a
	// graceful stop would wait out the supervisor's 10 s grace.
	script := `trap "" TERM; sleep 300 & exec "$0" downstream --port "$1"`
	os.WriteFile(manifest, []byte(fmt.Sprintf(`name: twice
title: two SIGINTs mid-trial
question: does the second one quit at once?
variants:
  a: {command: [sh, -c, %q, %q, "{port}"], ready: /health, env: {%s: "1"}}
load: {model: closed, users: 1, duration: 60s, requests: [{path: /health}]}
trials: 1
cooldown: {max_busy_pct: 100, pause: 1ms}
`, script, os.Args[0], testMainEnv)), 0o644)
	tl := startThreadlab(t, nil, "run", "--quiet", "--data", filepath.Join(dir, "data"), "--reports", filepath.Join(dir, "reports"), manifest)
	waitFor(t, "the trial", 2*time.Minute, tl, func() bool {
		return strings.Contains(tl.log(), "== trials") && contains(cmdlines(tl), "downstream --port")
	})
	time.Sleep(500 * time.Millisecond)
	pids := descendants(tl.cmd.Process.Pid)
	tl.cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(time.Second) // the first one is waiting for the sleep to go
	select {
	case <-tl.exited:
		t.Fatalf("threadlab exited before the second SIGINT; the test needs a slow graceful stop:\n%s", tl.log())
	default:
	}
	tl.cmd.Process.Signal(syscall.SIGINT)
	start := time.Now()
	select {
	case <-tl.exited:
	case <-time.After(5 * time.Second):
		t.Fatalf("threadlab still runs 5 s after the second SIGINT:\n%s", tl.log())
	}
	if code := tl.cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit code %d after two SIGINTs, want 130:\n%s", code, tl.log())
	}
	t.Logf("quit %s after the second SIGINT", time.Since(start).Round(time.Millisecond))
	runs, _ := filepath.Glob(filepath.Join(dir, "data", "twice", "*"))
	var meta record.Meta
	if len(runs) != 1 {
		t.Errorf("run dirs %v, want one", runs)
	} else if err := record.ReadJSON(runs[0], record.RunFile, &meta); err != nil || meta.State != "interrupted" {
		t.Errorf("run.json state %q (%v) after a force-quit, want interrupted", meta.State, err)
	}
	for _, p := range pids {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat"); err == nil && !bytes.Contains(b, []byte(") Z ")) {
			t.Errorf("pid %d (%s) alive after force-quit", p, cmdline(p))
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

func cmdlines(tl *threadlab) []string {
	var out []string
	for _, p := range descendants(tl.cmd.Process.Pid) {
		out = append(out, cmdline(p))
	}
	return out
}

// TestRunSetupFailsWhileInterrupted: a run that cannot even be set up
// (its directory exists) while the context is cancelled reports the setup
// error; it used to dereference the missing state.
func TestRunSetupFailsWhileInterrupted(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "x.yaml")
	os.WriteFile(manifest, []byte("name: x\ntitle: t\nquestion: q\nvariants: {a: {command: [sleep, \"1\", \"{port}\"]}}\nload: {model: burst, burst: 1, requests: [{path: /}]}\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "data", "x", "taken"), 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"run", "--quiet", "--run-id", "taken", "--data", filepath.Join(dir, "data"), manifest}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "exists already") {
		t.Errorf("exit %d, stderr %q; want exit 1 and the setup error", code, errb.String())
	}
}

// TestSuperviseOverStdin is the remote form (ssh host threadlab supervise
// -- argv): the lifeline is stdin, and when it closes, as an SSH session's
// does, the program and its children are killed.
func TestSuperviseOverStdin(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "supervise", "--grace", "1s", "--", "sh", "-c", `sleep 300 & echo $! > "$0/pids"; echo $$ >> "$0/pids"; wait`, dir)
	cmd.Env = append(os.Environ(), testMainEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	deadline := time.Now().Add(20 * time.Second)
	for len(pids) < 2 && time.Now().Before(deadline) {
		b, _ := os.ReadFile(filepath.Join(dir, "pids"))
		pids = pids[:0]
		for _, f := range strings.Fields(string(b)) {
			p, _ := strconv.Atoi(f)
			pids = append(pids, p)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(pids) < 2 {
		t.Fatal("the supervised shell never started")
	}
	stdin.Close() // the session ends
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the supervisor still runs 5 s after its stdin closed")
	}
	for _, p := range pids {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat"); err == nil && !bytes.Contains(b, []byte(") Z ")) {
			t.Errorf("pid %d (%s) alive after the supervisor's stdin closed", p, cmdline(p))
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}
