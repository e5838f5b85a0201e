package remote

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestQuoteArgs: the remote shell splits a quoted command line back into
// exactly the argv it came from, whatever the arguments hold.
func TestQuoteArgs(t *testing.T) {
	argv := []string{"plain", "", "two words", "it's", `"dq"`, "$HOME", "`id`", "a;b", "x\ny", "*", "--opt=1", "{port}", "é", "\\", "'"}
	out, err := exec.Command("sh", "-c", `printf '%s\0' `+QuoteArgs(argv)).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(got) != len(argv) {
		t.Fatalf("sh split %q into %d words, want %d: %q", QuoteArgs(argv), len(got), len(argv), got)
	}
	for i := range argv {
		if got[i] != argv[i] {
			t.Errorf("word %d = %q, want %q", i, got[i], argv[i])
		}
	}
	if Quote("root@10.0.0.2:/tmp/x-1.jar") != "root@10.0.0.2:/tmp/x-1.jar" {
		t.Errorf("a plain word was quoted: %s", Quote("root@10.0.0.2:/tmp/x-1.jar"))
	}
}

func TestExplain(t *testing.T) {
	cases := []struct {
		stderr string
		want   []string
		why    string
	}{
		{"@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n...\nHost key verification failed.",
			[]string{"host key mismatch", "ssh-keygen -R 10.0.0.2"}, "a changed key is told apart from an unknown one"},
		{"No ED25519 host key is known for 10.0.0.2 and you have requested strict checking.\nHost key verification failed.",
			[]string{"host key not trusted", "connect once with ssh bench@10.0.0.2"}, "an unknown key needs the user to accept it once"},
		{"bench@10.0.0.2: Permission denied (publickey).", []string{"the key was refused", "ssh-copy-id bench@10.0.0.2"}, "BatchMode never types a password"},
		{"ssh: connect to host 10.0.0.2 port 22: Connection refused", []string{"unreachable (ssh: connect to host 10.0.0.2 port 22: Connection refused)", "sshd listens"}, "nothing listening"},
		{"ssh: connect to host 10.0.0.9 port 22: No route to host", []string{"unreachable", "is up"}, "host down"},
		{"ssh: Could not resolve hostname nosuch: Name or service not known", []string{"does not resolve", "HostName in ~/.ssh/config"}, "a typo in the name"},
		{"something new", []string{"ssh failed", "something new", "ssh -v bench@10.0.0.2 true"}, "an unknown failure still says how to find out"},
	}
	for _, c := range cases {
		err := explain("target bench@10.0.0.2", "bench@10.0.0.2", "10.0.0.2", c.stderr, errors.New("exit status 255"))
		var he *HostError
		if !errors.As(err, &he) {
			t.Fatalf("%T is not a HostError", err)
		}
		if !strings.HasPrefix(err.Error(), "host target bench@10.0.0.2: ") || !strings.Contains(err.Error(), "; fix: ") {
			t.Errorf("%q does not name the host and a fix (%s)", err, c.why)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q lacks %q (%s)", err, w, c.why)
			}
		}
	}
}

func TestGoPlatform(t *testing.T) {
	cases := []struct{ sys, machine, os, arch, err string }{
		{"Linux", "x86_64", "linux", "amd64", ""},
		{"Linux", "aarch64", "linux", "arm64", ""},
		{"Darwin", "arm64", "", "", "needs Linux"},
		{"Linux", "m68k", "", "", "unknown machine"},
	}
	for _, c := range cases {
		goos, goarch, err := goPlatform(c.sys, c.machine)
		if goos != c.os || goarch != c.arch || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("goPlatform(%s, %s) = %s, %s, %v; want %s, %s, %q", c.sys, c.machine, goos, goarch, err, c.os, c.arch, c.err)
		}
	}
}

func TestHostOf(t *testing.T) {
	for dest, want := range map[string]string{"bench@10.0.0.2": "10.0.0.2", "h": "h", "ssh://u@h:2222": "[h]:2222", "ssh://h": "h"} {
		if got := hostOf(dest); got != want {
			t.Errorf("hostOf(%q) = %q, want %q", dest, got, want)
		}
	}
}

func TestHelperUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Helper([]string{"rtt", "x:1", "0"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "usage") {
		t.Errorf("rtt with 0 connects: exit %d, %q; want a usage error", code, errb.String())
	}
	errb.Reset()
	if code := Helper([]string{"what"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown question "what"`) {
		t.Errorf("unknown question: exit %d, %q", code, errb.String())
	}
	out.Reset()
	if code := Helper([]string{"freeport", "127.0.0.1"}, &out, &errb); code != 0 || strings.TrimSpace(out.String()) == "" {
		t.Errorf("freeport: exit %d, %q", code, out.String())
	}
}

var execCommand = exec.Command
