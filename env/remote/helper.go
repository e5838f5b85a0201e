package remote

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/threadlab/threadlab/env/supervise"
	"github.com/threadlab/threadlab/env/targets"
)

// HelperCommand is the hidden subcommand of threadlab that answers the
// questions a controller asks a host: `threadlab remote-helper jdk`,
// `... freeport ADDRESS`, `... rtt HOST:PORT N`, and samples /proc there
// during a trial (`... sample [PIDFILE]`, sample.go).
const HelperCommand = "remote-helper"

// Helper is the body of `threadlab remote-helper`; it returns the exit status.
func Helper(args []string, stdout, stderr io.Writer) int {
	return helper(args, os.Stdin, stdout, stderr)
}

func helper(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: threadlab remote-helper jdk | freeport ADDRESS | rtt HOST:PORT N | sample [PIDFILE] | sink ADDRESS | push HOST:PORT BYTES | postgres LISTEN ALLOW...")
		return 2
	}
	switch args[0] {
	case "sample":
		return sampleHelper(args[1:], stdin, stdout, stderr)
	case "postgres":
		return postgresHelper(args[1:], stdin, stdout, stderr)
	case "sink":
		return sinkHelper(args[1:], stdin, stdout, stderr)
	case "push":
		return pushHelper(args[1:], stdout, stderr)
	case "jdk":
		home, major, err := targets.FindJDK()
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 3
		}
		fmt.Fprintf(stdout, "%d %s\n", major, home)
		return 0
	case "freeport":
		if len(args) != 2 {
			fmt.Fprintln(stderr, "usage: threadlab remote-helper freeport ADDRESS")
			return 2
		}
		port, err := supervise.FreePort(args[1])
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprintln(stdout, port)
		return 0
	case "rtt":
		n := 0
		if len(args) == 3 {
			n, _ = strconv.Atoi(args[2])
		}
		if n <= 0 || n > 10000 {
			fmt.Fprintln(stderr, "usage: threadlab remote-helper rtt HOST:PORT N (1..10000)")
			return 2
		}
		// A TCP connect is one round trip (SYN, SYN-ACK); the first one
		// may include ARP and is dropped.
		for i := 0; i <= n; i++ {
			t0 := time.Now()
			c, err := net.DialTimeout("tcp", args[1], 5*time.Second)
			d := time.Since(t0)
			if err != nil {
				fmt.Fprintf(stderr, "connect to %s: %v\n", args[1], err)
				return 1
			}
			c.Close()
			if i > 0 {
				fmt.Fprintln(stdout, d.Microseconds())
			}
			time.Sleep(10 * time.Millisecond)
		}
		return 0
	}
	fmt.Fprintf(stderr, "threadlab remote-helper: unknown question %q\n", args[0])
	return 2
}

// JDK finds the newest JDK >= 21 on the host (as threadlab does locally:
// $JAVA_HOME, then /usr/lib/jvm) and returns its home and major version.
func (h *Host) JDK(ctx context.Context) (string, int, error) {
	out, err := h.Run(ctx, h.Threadlab(), HelperCommand, "jdk")
	if err != nil {
		return "", 0, &HostError{Host: h.Name, What: "no JDK >= 21 for the target (" + lastLine(err.Error()) + ")",
			Fix: "install one there, e.g. apt-get install openjdk-21-jdk-headless, or Temurin 25 under /usr/lib/jvm"}
	}
	major, home, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	m, err := strconv.Atoi(major)
	if err != nil || home == "" {
		return "", 0, fmt.Errorf("host %s: remote-helper jdk printed %q", h.Name, out)
	}
	return home, m, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

// FreePort asks the host for a free TCP port on address.
func (h *Host) FreePort(ctx context.Context, address string) (int, error) {
	out, err := h.Run(ctx, h.Threadlab(), HelperCommand, "freeport", address)
	if err != nil {
		return 0, fmt.Errorf("%w (is %s an address of that host? fix the address in hosts.yaml)", err, address)
	}
	p, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || p <= 0 {
		return 0, fmt.Errorf("host %s: remote-helper freeport printed %q", h.Name, out)
	}
	return p, nil
}

// RTT measures n TCP connects from the host to addr (host:port), each one
// round trip, and returns them.
func (h *Host) RTT(ctx context.Context, addr string, n int) ([]time.Duration, error) {
	out, err := h.Run(ctx, h.Threadlab(), HelperCommand, "rtt", addr, strconv.Itoa(n))
	if err != nil {
		return nil, err
	}
	var ds []time.Duration
	for _, f := range strings.Fields(string(out)) {
		us, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("host %s: remote-helper rtt printed %q", h.Name, f)
		}
		ds = append(ds, time.Duration(us)*time.Microsecond)
	}
	return ds, nil
}

// Binary returns a threadlab binary for goos/goarch: this very executable
// when it matches, else a cross-build of the module in repoDir (go build,
// CGO off), cached by platform under the user's cache directory.
func Binary(ctx context.Context, goos, goarch, repoDir string) (string, error) {
	if goos == runtime.GOOS && goarch == runtime.GOARCH {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("find threadlab's own binary: %w", err)
		}
		return exe, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	out := filepath.Join(cache, "threadlab", "bin", "threadlab-"+goos+"-"+goarch)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, "./cmd/threadlab")
	cmd.Dir = repoDir
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("cross-build threadlab for %s/%s in %s: %w%s (fix: run threadlab from its source tree with Go installed, or use hosts of this machine's platform)", goos, goarch, repoDir, err, indent(string(b)))
	}
	return out, nil
}
