// Package netnstest gives tests fake hosts: Linux network namespaces with
// an OpenSSH server each (scripts/netns-hosts.sh). A test that calls Up is
// skipped, with the script's reason, only where this machine cannot do it:
// not root, namespaces refused by the kernel, no sshd.
package netnstest

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/internal/testenv"
)

// Hosts are fake hosts that are up.
type Hosts struct {
	Dir       string            // ssh_config, hosts.yaml, keys, known_hosts
	SSHConfig string            // DIR/ssh_config
	Inventory string            // DIR/hosts.yaml (when the names make one)
	Namespace map[string]string // name -> network namespace
	Address   map[string]string // name -> IP address
	Netem     string            // what the script said about tc netem
}

// Script is the path of scripts/netns-hosts.sh, found from the working
// directory up to the module root.
func Script() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "scripts", "netns-hosts.sh"), nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = up
	}
}

// Up starts the named hosts (see the script for names and roles) with
// namespace prefix and 10.x.y subnet net, and takes them down when the
// test ends.
func Up(t testing.TB, prefix, net string, names ...string) *Hosts {
	t.Helper()
	script, err := Script()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "hosts")
	cmd := exec.Command(script, append([]string{"up", dir}, names...)...)
	cmd.Env = append(os.Environ(), "NETNS_PREFIX="+prefix, "NETNS_NET="+net)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Cleanup(func() {
		down := exec.Command(script, "down", dir)
		down.Env = cmd.Env
		if b, err := down.CombinedOutput(); err != nil {
			t.Errorf("netns-hosts.sh down: %v\n%s", err, b)
		}
	})
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			testenv.Need(t, errors.New(strings.TrimSpace(stderr.String())), "network-namespace hosts", "scripts/setup.sh installs openssh-server and iproute2; run as root")
		}
		t.Fatalf("netns-hosts.sh up: %v\n%s%s", err, out, stderr.String())
	}
	h := &Hosts{Dir: dir, SSHConfig: filepath.Join(dir, "ssh_config"), Inventory: filepath.Join(dir, "hosts.yaml"),
		Namespace: map[string]string{}, Address: map[string]string{}}
	b, err := os.ReadFile(filepath.Join(dir, "hosts.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 {
			h.Namespace[f[0]], h.Address[f[0]] = f[1], f[2]
		}
	}
	netem, _ := os.ReadFile(filepath.Join(dir, "netem.txt"))
	h.Netem = strings.TrimSpace(string(netem))
	t.Logf("fake hosts up in %s; %s", dir, h.Netem)
	return h
}

// Procs lists the processes in a host's network namespace as "pid comm"
// lines (ip netns pids).
func (h *Hosts) Procs(name string) []string {
	out, _ := exec.Command("ip", "netns", "pids", h.Namespace[name]).Output()
	var lines []string
	for _, pid := range strings.Fields(string(out)) {
		comm, err := os.ReadFile("/proc/" + pid + "/comm")
		if err != nil {
			continue // gone meanwhile
		}
		cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		lines = append(lines, pid+" "+strings.TrimSpace(string(comm))+" "+strings.ReplaceAll(strings.TrimSpace(string(cmdline)), "\x00", " "))
	}
	return lines
}

// Strays lists the processes of every host other than its sshd: what a
// run left behind.
func (h *Hosts) Strays() []string {
	var out []string
	for name := range h.Namespace {
		for _, p := range h.Procs(name) {
			if f := strings.Fields(p); len(f) >= 2 && f[1] != "sshd" && f[1] != "sshd-session" {
				out = append(out, name+": "+p)
			}
		}
	}
	return out
}

// Threadlab builds bin/threadlab from this module into a temporary
// directory (go build; the build cache makes repeats quick) and returns its
// path: the binary a multi-host run ships, and runs as the controller.
func Threadlab(t testing.TB) string {
	t.Helper()
	script, err := Script()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(filepath.Dir(script))
	out := filepath.Join(t.TempDir(), "threadlab")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/threadlab")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/threadlab: %v\n%s", err, b)
	}
	return out
}
