package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/env/remote/netnstest"
)

// TestFakeHosts drives real sshd servers in network namespaces: the
// preflight failures, shipping by hash, and the lifeline of remote programs.
func TestFakeHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: starts sshd in network namespaces and builds threadlab")
	}
	hs := netnstest.Up(t, "tlr", "10.78.0", "target", "load1", "nojdk:nojdk")
	bin := netnstest.Threadlab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := NewSession(Options{SSHConfig: hs.SSHConfig, ConnectTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	target, err := s.Connect(ctx, "tlr-target", "target tlr-target")
	if err != nil {
		t.Fatal(err)
	}
	if target.OS != "linux" || target.Workdir == "" || target.SSHName != hs.Address["target"] {
		t.Fatalf("connected host %+v", target)
	}
	if err := target.SetBinary(ctx, bin); err != nil {
		t.Fatal(err)
	}

	t.Run("ship by content hash", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "a.jar")
		os.WriteFile(f, []byte("jar bytes"), 0o644)
		p1, err := target.Ship(ctx, f, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		g := filepath.Join(t.TempDir(), "a.jar")
		os.WriteFile(g, []byte("jar bytes"), 0o644)
		p2, err := target.Ship(ctx, g, 0o644)
		if err != nil || p2 != p1 {
			t.Errorf("the same content shipped twice: %s, %s (%v)", p1, p2, err)
		}
		if !strings.HasPrefix(p1, target.Workdir+"/") {
			t.Errorf("%s is outside the run's working directory %s", p1, target.Workdir)
		}
		out, err := target.Run(ctx, "cat", p1)
		if err != nil || string(out) != "jar bytes" {
			t.Errorf("remote copy holds %q (%v)", out, err)
		}
	})

	t.Run("jdk", func(t *testing.T) {
		home, major, err := target.JDK(ctx)
		if err != nil || major < 21 || home == "" {
			t.Fatalf("JDK on the target host: %s %d %v", home, major, err)
		}
		nojdk, err := s.Connect(ctx, "tlr-nojdk", "target tlr-nojdk")
		if err != nil {
			t.Fatal(err)
		}
		if err := nojdk.SetBinary(ctx, bin); err != nil {
			t.Fatal(err)
		}
		_, _, err = nojdk.JDK(ctx)
		var he *HostError
		if !errors.As(err, &he) || !strings.Contains(err.Error(), "host target tlr-nojdk: no JDK >= 21") || !strings.Contains(err.Error(), "fix: install one there") {
			t.Errorf("a host without a JDK: %v", err)
		}
	})

	t.Run("stop ends the program's group", func(t *testing.T) {
		p, err := target.Start(Spec{Argv: []string{"sh", "-c", "sleep 301 & sleep 302"}})
		if err != nil {
			t.Fatal(err)
		}
		waitProcs(t, hs, "target", "sleep 302", true)
		p.Stop()
		waitProcs(t, hs, "target", "sleep 30", false)
	})

	t.Run("a dead controller ends the program", func(t *testing.T) {
		// What kill -9 of threadlab does to a session: its ssh client dies
		// and the remote supervisor reads EOF on its lifeline.
		p, err := target.Start(Spec{Argv: []string{"sh", "-c", "sleep 303 & sleep 304"}})
		if err != nil {
			t.Fatal(err)
		}
		waitProcs(t, hs, "target", "sleep 304", true)
		p.cmd.Process.Kill()
		waitProcs(t, hs, "target", "sleep 30", false)
	})

	t.Run("rtt and free port", func(t *testing.T) {
		load, err := s.Connect(ctx, "tlr-load1", "load[0] tlr-load1")
		if err != nil {
			t.Fatal(err)
		}
		if err := load.SetBinary(ctx, bin); err != nil {
			t.Fatal(err)
		}
		ds, err := load.RTT(ctx, hs.Address["target"]+":22", 10)
		if err != nil || len(ds) != 10 {
			t.Fatalf("rtt: %v %v", ds, err)
		}
		t.Logf("round trips load1 -> target: %v (%s)", ds, hs.Netem)
		port, err := target.FreePort(ctx, hs.Address["target"])
		if err != nil || port <= 0 {
			t.Errorf("free port: %d %v", port, err)
		}
	})

	t.Run("workdir removed at close", func(t *testing.T) {
		s2, err := NewSession(Options{SSHConfig: hs.SSHConfig})
		if err != nil {
			t.Fatal(err)
		}
		h, err := s2.Connect(ctx, "tlr-load1", "load[0] tlr-load1")
		if err != nil {
			t.Fatal(err)
		}
		// The namespaces share this file system: the remote directory is visible here.
		if _, err := os.Stat(h.Workdir); err != nil {
			t.Fatalf("working directory: %v", err)
		}
		s2.Close()
		if _, err := os.Stat(h.Workdir); !os.IsNotExist(err) {
			t.Errorf("%s still there after Close (%v)", h.Workdir, err)
		}
		if _, err := os.Stat(s2.dir); !os.IsNotExist(err) {
			t.Errorf("control socket directory %s still there", s2.dir)
		}
	})
}

// TestPreflightFailures: every way a host cannot take part fails Connect
// with the host named and a fix.
func TestPreflightFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: starts sshd in network namespaces")
	}
	hs := netnstest.Up(t, "tlp", "10.80.0", "target")
	cfg, _ := os.ReadFile(hs.SSHConfig)
	variant := func(name, known, key string) string {
		c := string(cfg)
		if known != "" {
			c = strings.ReplaceAll(c, filepath.Join(hs.Dir, "known_hosts"), known)
		}
		if key != "" {
			c = strings.ReplaceAll(c, filepath.Join(hs.Dir, "id_ed25519"), key)
		}
		p := filepath.Join(t.TempDir(), name)
		os.WriteFile(p, []byte(c), 0o644)
		return p
	}
	dir := t.TempDir()
	// A known_hosts that records another key for the target's address.
	other := filepath.Join(dir, "other")
	if out, err := execOut("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other); err != nil {
		t.Fatal(err, out)
	}
	pub, _ := os.ReadFile(other + ".pub")
	wrongKnown := filepath.Join(dir, "known_wrong")
	f := strings.Fields(string(pub))
	os.WriteFile(wrongKnown, []byte(hs.Address["target"]+" "+f[0]+" "+f[1]+"\n"), 0o644)
	emptyKnown := filepath.Join(dir, "known_empty")
	os.WriteFile(emptyKnown, nil, 0o644)

	cases := []struct {
		name, config, dest string
		want               []string
	}{
		{"host key mismatch", variant("mismatch", wrongKnown, ""), "tlp-target", []string{"host target tlp-target: host key mismatch", "fix: verify the new key", "ssh-keygen -R " + hs.Address["target"]}},
		{"unknown host key", variant("unknown", emptyKnown, ""), "tlp-target", []string{"host target tlp-target: host key not trusted", "fix: connect once with ssh tlp-target"}},
		{"key refused", variant("refused", "", other), "tlp-target", []string{"host target tlp-target: the key was refused", "ssh-copy-id"}},
		{"connection refused", hs.SSHConfig, "ssh://root@" + hs.Address["target"] + ":2", []string{"unreachable", "Connection refused", "fix: check that the host is up"}},
		{"no such address", hs.SSHConfig, "root@10.80.0.250", []string{"host target root@10.80.0.250: unreachable", "fix:"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := NewSession(Options{SSHConfig: c.config, ConnectTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			t0 := time.Now()
			_, err = s.Connect(context.Background(), c.dest, "target "+c.dest)
			if err == nil {
				t.Fatal("connected; want a refusal")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			t.Logf("%s in %s: %v", c.name, time.Since(t0).Round(time.Millisecond), err)
		})
	}
}

func execOut(name string, args ...string) (string, error) {
	b, err := execCommand(name, args...).CombinedOutput()
	return string(b), err
}

// waitProcs waits up to 5 s until a process whose command line contains
// sub is (want) or is not (!want) in the host's namespace.
func waitProcs(t *testing.T, hs *netnstest.Hosts, host, sub string, want bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		found := false
		for _, p := range hs.Procs(host) {
			if strings.Contains(p, sub) {
				found = true
			}
		}
		if found == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s, %q running in %s is %v, want %v: %q", sub, host, found, want, hs.Procs(host))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
