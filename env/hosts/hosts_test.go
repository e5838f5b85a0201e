package hosts

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestLoadExample(t *testing.T) {
	inv, err := Load(filepath.Join("testdata", "hosts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Target.SSH != "root@tl-target" || inv.Target.Address != "10.77.0.2" || inv.Target.CPUs != "0-1" {
		t.Errorf("target = %+v", inv.Target)
	}
	if len(inv.Load) != 2 || inv.Load[1].SSH != "root@tl-load2" || inv.Load[1].Index != 1 || inv.Load[0].Address != "10.77.0.3" {
		t.Errorf("load = %+v", inv.Load)
	}
	if inv.Downstream == nil || inv.Downstream.Address != "10.77.0.5" || inv.Database != nil {
		t.Errorf("downstream = %+v, database = %+v", inv.Downstream, inv.Database)
	}
	if want, _ := filepath.Abs(filepath.Join("testdata", "ssh_config")); inv.SSHConfig != want {
		t.Errorf("ssh_config = %q, want %q (relative to the inventory)", inv.SSHConfig, want)
	}
	if got := len(inv.All()); got != 4 {
		t.Errorf("All() has %d hosts, want 4", got)
	}
	if inv.Load[1].Name() != "load[1] root@tl-load2" || inv.Target.Name() != "target root@tl-target" {
		t.Errorf("names %q, %q", inv.Load[1].Name(), inv.Target.Name())
	}
}

func TestParseProblems(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string // substrings of the error, file:line:col first
		why        string
	}{
		{"empty", "", []string{"h.yaml:1:1", "empty"}, "an empty file must say what an inventory holds"},
		{"no target", "load: [g]\n", []string{"h.yaml:1:1: target: missing"}, "a run measures one target"},
		{"no load", "target: t\n", []string{"load: missing"}, "without a generator nothing is measured"},
		{"empty load", "target: t\nload: []\n", []string{"h.yaml:2:7: load: no load hosts"}, "an empty list is no generator either"},
		{"two targets", "target: [a, b]\nload: [g]\n", []string{"h.yaml:1:9: target: exactly one target"}, "two systems under test are two runs"},
		{"unknown role", "target: t\nload: [g]\nloader: x\n", []string{"h.yaml:3:1: loader: unknown field (known: target, load"}, "a typo must not be ignored"},
		{"unknown host field", "target: {ssh: t, adress: 10.0.0.1}\nload: [g]\n", []string{"h.yaml:1:18: target.adress: unknown field (known: ssh, address, cpus)"}, "a typo in a host must not be ignored"},
		{"password field", "target: {ssh: t, password: hunter2}\nload: [g]\n", []string{"target.password: threadlab never stores secrets", "ssh-agent"}, "a secret belongs in ssh's own config"},
		{"identity field", "target: t\nload: [{ssh: g, identity_file: ~/.ssh/id}]\n", []string{"load[0].identity_file: threadlab never stores secrets"}, "keys are ssh_config's business"},
		{"password in url", "target: ssh://u:pw@h:22\nload: [g]\n", []string{"h.yaml:1:9: target: the destination carries a password"}, "ssh:// URLs can carry a password"},
		{"option injection", "target: t\nload: [\"-oProxyCommand=sh\"]\n", []string{"h.yaml:2:8: load[0]", "would read as an option"}, "a destination must never become an ssh option"},
		{"space in destination", "target: \"a b\"\nload: [g]\n", []string{"target: \"a b\" contains spaces"}, "options go in ssh_config, not the destination"},
		{"password without ssh://", "target: bench:hunter2@h\nload: [g]\n", []string{"target: the destination carries a password"}, "ssh takes user bench:hunter2, a password in all but name"},
		{"command substitution in the host", "target: t\nload: [\"x$(touch${IFS}p)\"]\n", []string{"load[0]", "is not a host name or address"}, "ProxyCommand %h would hand it to a shell (OpenSSH < 9.6)"},
		{"command substitution in the user", "target: \"ssh://u$(id)@h\"\nload: [g]\n", []string{"target:", "the user \"u$(id)\" may hold only"}, "the user reaches %r in ssh_config too"},
		{"backtick in the host", "target: \"h`id`\"\nload: [g]\n", []string{"is not a host name or address"}, "a backtick is a command too"},
		{"bad port", "target: \"ssh://h:99999\"\nload: [g]\n", []string{"the port \"99999\""}, "a port is 1..65535"},
		{"semicolon", "target: \"h;reboot\"\nload: [g]\n", []string{"is not a host name or address"}, "a shell separator"},
		{"missing ssh", "target: {address: 10.0.0.1}\nload: [g]\n", []string{"h.yaml:1:9: target.ssh: missing"}, "every host needs a destination"},
		{"null host", "target: t\nload: [g]\ndownstream:\n", []string{"downstream: empty"}, "an empty role is a mistake, not an absent one"},
		{"host name as address", "target: {ssh: t, address: bench.local}\nload: [g]\n", []string{"h.yaml:1:27: target.address: \"bench.local\" is not an IP address"}, "a listen address must be one interface"},
		{"any address", "target: {ssh: t, address: 0.0.0.0}\nload: [g]\n", []string{"target.address: 0.0.0.0 listens on every interface"}, "listeners bind to one address"},
		{"bad cpus", "target: {ssh: t, cpus: 3-1}\nload: [g]\n", []string{"target.cpus:", "taskset -c"}, "a CPU list taskset would refuse"},
		{"duplicate key", "target: t\ntarget: u\nload: [g]\n", []string{"h.yaml:2:1: target: given twice"}, "YAML keeps the last silently"},
		{"list database", "target: t\nload: [g]\ndatabase: [a, b]\n", []string{"database: one database host"}, "one database"},
		{"not a mapping", "- t\n", []string{"h.yaml:1:1: an inventory is a YAML mapping"}, "a list is not an inventory"},
		{"two documents", "target: t\nload: [g]\n---\ntarget: u\n", []string{"a second YAML document"}, "the second would be ignored"},
		{"bad yaml", "target: [\n", []string{"h.yaml: not valid YAML"}, "a syntax error names the file"},
		{"alias", "x: &a t\ntarget: *a\nload: [g]\n", []string{"x: unknown field", "target: want an ssh destination"}, "aliases are not expanded into hosts"},
		{"ssh not a string", "target: {ssh: [a]}\nload: [g]\n", []string{"target.ssh: want an ssh destination"}, "a list is not a destination"},
		{"target is a load host", "target: bench@h\nload: [g, h]\n", []string{"h.yaml:2:11: load[1]: h is the same machine as target bench@h (line 1)", "cpus"}, "a generator on the target takes its CPU"},
		{"two load hosts on one machine", "target: t\nload: [g, \"ssh://u@G:2222\"]\n", []string{"load[1]: ssh://u@G:2222 is the same machine as load[0] g"}, "two generators count one machine's CPU twice"},
		{"overlapping cpus", "target: {ssh: h, cpus: 0-3}\nload: [{ssh: h, cpus: 3-4}]\n", []string{"load[0]: h is the same machine as target h"}, "a shared CPU is sharing"},
		{"cpus on one side only", "target: {ssh: h, cpus: 0-3}\nload: [h]\n", []string{"load[0]: h is the same machine"}, "the generator without a list may run on every CPU"},
		{"loopback target", "target: {ssh: t, address: 127.0.0.1}\nload: [g]\n", []string{"h.yaml:1:9: target.address: 127.0.0.1 is each machine's own loopback, and load[0] g is another machine"}, "a load host would reach itself"},
		{"loopback downstream", "target: t\nload: [g]\ndownstream: {ssh: s, address: \"::1\"}\n", []string{"downstream.address: ::1 is each machine's own loopback, and target t is another machine"}, "the target would reach itself"},
		{"several problems", "target: {ssh: t, cpus: x}\nload: [\"-x\"]\n", []string{"target.cpus", "load[0]"}, "every problem at once, not one per attempt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("h.yaml", []byte(c.yaml))
			if err == nil {
				t.Fatalf("no error; want one (%s)", c.why)
			}
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("error %T is not Problems", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q (%s)", err, w, c.why)
				}
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	cases := []struct {
		name, yaml string
		check      func(*Inventory) bool
		why        string
	}{
		{"bare strings", "target: bench@10.0.0.2\nload: gen1\n", func(i *Inventory) bool {
			return i.Target.SSH == "bench@10.0.0.2" && len(i.Load) == 1 && i.Load[0].SSH == "gen1"
		}, "a single load host need not be a list"},
		{"ssh url with port", "target: ssh://bench@[fe80::1]:2222\nload: [g]\n", func(i *Inventory) bool {
			return HostPart(i.Target.SSH) == "fe80::1"
		}, "ssh's URL form with a port is a destination"},
		{"ipv6 address", "target: {ssh: t, address: \"fd00::2\"}\nload: [g]\n", func(i *Inventory) bool { return i.Target.Address == "fd00::2" }, "IPv6 listen addresses"},
		{"services share a machine", "target: h\nload: [g]\ndatabase: h\ndownstream: g\n", func(i *Inventory) bool { return len(i.All()) == 4 }, "the database and downstream are not measured: they may share a machine"},
		{"loopback on the machine that reaches it", "target: {ssh: h, address: 10.0.0.2}\nload: [g]\ndatabase: {ssh: u@h, address: 127.0.0.1}\n", func(i *Inventory) bool { return i.Database.Address == "127.0.0.1" }, "a database beside the target is reached on loopback"},
		{"disjoint cpus", "target: {ssh: h, cpus: 0-3}\nload: [{ssh: u@h, cpus: 4-7}]\n", func(i *Inventory) bool { return len(i.All()) == 2 }, "one big machine split by cpus is a setup a user may mean"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv, err := Parse("h.yaml", []byte(c.yaml))
			if err != nil {
				t.Fatalf("%v (%s)", err, c.why)
			}
			if !c.check(inv) {
				t.Errorf("parsed %+v (%s)", inv, c.why)
			}
		})
	}
}

// TestSharedAfterSSH: once ssh -G has resolved each destination, two
// aliases of one machine as measured hosts are refused like two spellings
// of one host name; the services, disjoint cpus and distinct machines pass.
func TestSharedAfterSSH(t *testing.T) {
	cases := []struct {
		name, yaml string
		resolved   map[string]string
		want       string // "" = no problem
		why        string
	}{
		{"two aliases of the target's machine", "target: bench\nload: [gen]\n", map[string]string{"bench": "10.0.0.2", "gen": "10.0.0.2"},
			"h.yaml:2:8: load[0]: gen is the same machine as target bench (line 1) (ssh connects to both at 10.0.0.2): their processes would share its CPUs", "ssh_config names one machine twice"},
		{"host names differ in case", "target: bench\nload: [g1, g2]\n", map[string]string{"bench": "t.lab", "g1": "G.lab", "g2": "g.lab"},
			"load[1]: g2 is the same machine as load[0] g1 (line 2) (ssh connects to both at g.lab)", "DNS names are case-insensitive"},
		{"aliases kept apart by cpus", "target: {ssh: bench, cpus: 0-3}\nload: [{ssh: gen, cpus: 4-7}]\n", map[string]string{"bench": "h", "gen": "h"},
			"", "one big machine split by cpus is a setup a user may mean"},
		{"distinct machines", "target: bench\nload: [gen]\n", map[string]string{"bench": "10.0.0.2", "gen": "10.0.0.3"},
			"", "aliases of two machines"},
		{"database on the target's machine", "target: bench\nload: [gen]\ndatabase: db\n", map[string]string{"bench": "h", "gen": "g", "db": "h"},
			"", "the database is not measured"},
		{"ssh -G said nothing", "target: bench\nload: [gen]\n", map[string]string{},
			"", "unresolved destinations compare as written"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv, err := Parse("h.yaml", []byte(c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			probs := inv.SharedAfterSSH(c.resolved)
			switch {
			case c.want == "" && len(probs) > 0:
				t.Errorf("refused: %v (%s)", probs, c.why)
			case c.want != "" && (len(probs) != 1 || !strings.Contains(probs.Error(), c.want)):
				t.Errorf("got %v, want one problem containing %q (%s)", probs, c.want, c.why)
			}
		})
	}
}

func TestHostPart(t *testing.T) {
	for dest, want := range map[string]string{
		"bench@10.0.0.2":         "10.0.0.2",
		"10.0.0.2":               "10.0.0.2",
		"alias":                  "alias",
		"ssh://u@h.example:2222": "h.example",
		"ssh://h":                "h",
		"ssh://[fd00::1]":        "fd00::1",
	} {
		if got := HostPart(dest); got != want {
			t.Errorf("HostPart(%q) = %q, want %q", dest, got, want)
		}
	}
}

func TestLoadMissingSSHConfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "hosts.yaml")
	if err := os.WriteFile(p, []byte("ssh_config: nope\ntarget: t\nload: [g]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	if err == nil || !strings.Contains(err.Error(), "ssh_config") || !strings.Contains(err.Error(), "remove the field") {
		t.Fatalf("err = %v, want a missing ssh_config named with a fix", err)
	}
}

func TestLoadSSHConfigDirectory(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "hosts.yaml")
	if err := os.WriteFile(p, []byte("ssh_config: .\ntarget: t\nload: [g]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	if err == nil || !strings.Contains(err.Error(), "ssh_config: "+dir+" is not a regular file") {
		t.Fatalf("err = %v, want a directory named as not an ssh_config file", err)
	}
}

func FuzzParse(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "hosts.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("target: t\nload: [g]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		inv, err := Parse("fuzz.yaml", data)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
			t.Fatalf("%d bytes of input allocated %d MB", len(data), alloc>>20)
		}
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("error is not Problems: %T %v", err, err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		// What parses is usable: one target, load hosts, safe destinations.
		if len(inv.Load) == 0 {
			t.Fatal("accepted an inventory without load hosts")
		}
		for _, h := range inv.All() {
			if h.SSH == "" || strings.HasPrefix(h.SSH, "-") || strings.ContainsAny(h.SSH, " \t\n\x00") {
				t.Fatalf("accepted destination %q", h.SSH)
			}
		}
	})
}

// TestDestSyntax: the destinations people write are accepted.
func TestDestSyntax(t *testing.T) {
	for _, d := range []string{"bench@10.0.0.2", "10.0.0.2", "bench-1", "tlp_target", "ci.example.com", "u.name@host-1.lan",
		"ssh://bench@10.0.0.2:2222", "ssh://[fe80::1]:22", "ssh://host", "fe80::1", "u@::1"} {
		if err := checkDestSyntax(d); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
}
