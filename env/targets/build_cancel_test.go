package targets

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/threadlab/threadlab/internal/testenv"
)

// TestBuildCancelStopsMaven: cancelling a build (Ctrl-C in the build stage)
// stops Maven and everything it forked promptly, and frees the lock so the
// next build can run. mvn here is a script that starts a child and a
// grandchild and waits, as Maven's forked JVMs would.
func TestBuildCancelStopsMaven(t *testing.T) {
	_, _, err := FindJDK()
	testenv.Need(t, err, "a JDK >= 21 (Build needs one before it runs Maven)", "install Temurin 25 or openjdk-21-jdk, or set JAVA_HOME")
	root := fakeTree(t)
	bin := t.TempDir()
	pids := filepath.Join(bin, "pids")
	write(t, filepath.Join(bin, "mvn"), "#!/bin/sh\nsleep 300 &\necho $! >> "+pids+"\nsh -c 'echo $$ >> "+pids+"; sleep 300; echo never' &\necho $$ >> "+pids+"\nwait\n")
	os.Chmod(filepath.Join(bin, "mvn"), 0o755)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var started []int
	go func() {
		for ctx.Err() == nil {
			b, _ := os.ReadFile(pids)
			if lines := strings.Fields(string(b)); len(lines) == 3 {
				for _, l := range lines {
					p, _ := strconv.Atoi(l)
					started = append(started, p)
				}
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	_, err = Build(ctx, root, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Build after cancel: %v, want it to wrap context.Canceled", err)
	}
	if len(started) != 3 {
		t.Fatalf("fake mvn pids %v, want 3", started)
	}
	for _, p := range started {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat"); err == nil && !strings.Contains(string(b), ") Z ") {
			t.Errorf("pid %d still runs after the cancelled build returned", p)
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
	abs, _ := filepath.Abs(root)
	lockCtx, stop := context.WithTimeout(context.Background(), time.Second)
	defer stop()
	f, err := lockBuild(lockCtx, abs)
	if err != nil {
		t.Fatalf("build lock after the cancelled build: %v, want it free", err)
	}
	f.Close()
}

// TestConcurrentBuildsBuildOnce: two runs building the same tree at once
// run Maven once; the second waits for the lock and finds the jars fresh.
func TestConcurrentBuildsBuildOnce(t *testing.T) {
	_, _, err := FindJDK()
	testenv.Need(t, err, "a JDK >= 21 (Build needs one before it runs Maven)", "install Temurin 25 or openjdk-21-jdk, or set JAVA_HOME")
	root := fakeTree(t)
	bin := t.TempDir()
	runs := filepath.Join(bin, "runs")
	write(t, filepath.Join(bin, "mvn"), "#!/bin/sh\necho start >> "+runs+"\nsleep 0.5\n"+
		"for m in spring-mvc spring-webflux; do mkdir -p $m/target && : > $m/target/$m.jar; done\necho end >> "+runs+"\n")
	os.Chmod(filepath.Join(bin, "mvn"), 0o755)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := Build(context.Background(), root, nil)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(runs); string(b) != "start\nend\n" {
		t.Errorf("maven runs:\n%s\nwant exactly one build (start, end)", b)
	}
}
