// Package hosts reads a host inventory (hosts.yaml): which machine plays
// which role in a multi-host run. It only describes hosts; package
// env/remote drives them over SSH.
//
// A host is an SSH destination exactly as the user's own ssh understands it
// ("bench@10.0.0.2", "ssh://bench@10.0.0.2:2222", or an alias of
// ~/.ssh/config, where keys, agents, ProxyJump and known_hosts apply), plus
// an optional address the host's services listen on and an optional CPU
// set. The inventory never holds a secret: a field that looks like one is
// refused with where the secret belongs instead.
//
//	# hosts.yaml
//	ssh_config: ssh_config      # optional: passed to ssh -F (relative to this file)
//	target:                     # exactly one: the system under test
//	  ssh: bench@10.0.0.2
//	  address: 10.0.0.2         # listen here, not on every interface
//	  cpus: 0-3
//	load:                       # one or more load generators
//	  - ssh: gen1
//	  - gen2                    # a bare string is the ssh destination
//	downstream: { ssh: svc1, address: 10.0.0.5 }
//	database: db1
package hosts

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/internal/yamlpos"
	"github.com/threadlab/threadlab/store/record"
	"gopkg.in/yaml.v3"
)

// Roles a host can play.
const (
	RoleTarget     = "target"
	RoleLoad       = "load"
	RoleDatabase   = "database"
	RoleDownstream = "downstream"
)

// Host is one machine of the inventory.
type Host struct {
	Role    string // RoleTarget, RoleLoad, RoleDatabase or RoleDownstream
	Index   int    // position among the load hosts (0 for the others)
	SSH     string // destination as ssh understands it
	Address string // IP address its services listen on; "" = the destination's host name
	CPUs    string // CPU list (taskset -c syntax); "" = all
	Line    int    // where it is in the file
	Col     int
}

// Name is how messages and the run record name the host: its role and its
// destination, e.g. "load[1] gen2".
func (h Host) Name() string {
	if h.Role == RoleLoad {
		return fmt.Sprintf("%s[%d] %s", h.Role, h.Index, h.SSH)
	}
	return h.Role + " " + h.SSH
}

// Inventory is a parsed hosts.yaml.
type Inventory struct {
	File       string
	SSHConfig  string // absolute path of an ssh_config file for ssh -F, or ""
	Target     Host
	Load       []Host
	Database   *Host
	Downstream *Host
}

// All lists every host: target, load hosts, downstream, database.
func (inv *Inventory) All() []Host {
	out := []Host{inv.Target}
	out = append(out, inv.Load...)
	if inv.Downstream != nil {
		out = append(out, *inv.Downstream)
	}
	if inv.Database != nil {
		out = append(out, *inv.Database)
	}
	return out
}

// Problem is one thing wrong with an inventory, with where and how to fix it.
type Problem = yamlpos.Problem

// Problems is every problem of one inventory; it is the error Load returns.
type Problems = yamlpos.Problems

// maxSize bounds an inventory file: it lists a handful of hosts.
const maxSize = 1 << 20

// Load reads and checks an inventory file.
func Load(path string) (*Inventory, error) {
	b, err := record.ReadUserFile(path, maxSize)
	if err != nil {
		return nil, fmt.Errorf("read the host inventory: %w (pass --hosts with a hosts.yaml; see scripts/netns-hosts.sh for an example)", err)
	}
	inv, err := Parse(path, b)
	if err != nil {
		return nil, err
	}
	if inv.SSHConfig != "" && !filepath.IsAbs(inv.SSHConfig) {
		inv.SSHConfig = filepath.Join(filepath.Dir(path), inv.SSHConfig)
	}
	if inv.SSHConfig != "" {
		if abs, err := filepath.Abs(inv.SSHConfig); err == nil {
			inv.SSHConfig = abs
		}
		if st, err := os.Stat(inv.SSHConfig); err != nil {
			return nil, Problems{{File: path, Field: "ssh_config", Msg: fmt.Sprintf("%v (name an existing ssh_config file, relative to %s, or remove the field to use ~/.ssh/config)", err, path)}}
		} else if !st.Mode().IsRegular() {
			return nil, Problems{{File: path, Field: "ssh_config", Msg: fmt.Sprintf("%s is not a regular file (ssh -F reads one file): name the ssh_config file itself, or remove the field to use ~/.ssh/config", inv.SSHConfig)}}
		}
	}
	return inv, nil
}

// Parse checks an inventory held in memory; file names it in messages.
// Relative ssh_config paths are left as written (Load resolves them).
func Parse(file string, b []byte) (*Inventory, error) {
	p := &parser{file: file}
	if len(b) > maxSize {
		return nil, Problems{{File: file, Msg: fmt.Sprintf("%d bytes is not an inventory (at most %d): a hosts.yaml lists a few hosts", len(b), maxSize)}}
	}
	if !utf8.Valid(b) {
		return nil, Problems{{File: file, Msg: "not UTF-8 text: save hosts.yaml as UTF-8"}}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, Problems{{File: file, Line: 1, Col: 1, Msg: "the file is empty: an inventory names a target host and one or more load hosts (see the example in env/hosts/hosts.go)"}}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		return nil, Problems{{File: file, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, Problems{{File: file, Line: extra.Line, Col: extra.Column, Msg: "a second YAML document (after ---) would be ignored: an inventory is one document"}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		line, col := 1, 1
		if len(doc.Content) == 1 {
			line, col = doc.Content[0].Line, doc.Content[0].Column
		}
		return nil, Problems{{File: file, Line: line, Col: col, Msg: "an inventory is a YAML mapping with target, load and optionally database, downstream and ssh_config"}}
	}
	inv := p.inventory(doc.Content[0])
	if len(p.probs) > 0 {
		return nil, p.probs
	}
	return inv, nil
}

type parser struct {
	file  string
	probs Problems
}

func (p *parser) add(n *yaml.Node, field, format string, a ...any) {
	p.probs = append(p.probs, Problem{File: p.file, Line: n.Line, Col: n.Column, Field: field, Msg: fmt.Sprintf(format, a...)})
}

// secretWords are field names that would hold a secret; the inventory never does.
var secretWords = []string{"password", "passphrase", "secret", "token", "key", "identity"}

func (p *parser) inventory(m *yaml.Node) *Inventory {
	inv := &Inventory{File: p.file}
	seen := map[string]bool{}
	var targetNode *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.add(k, "", "a key must be a plain name (target, load, database, downstream or ssh_config)")
			continue
		}
		if seen[k.Value] {
			p.add(k, k.Value, "given twice: keep one (YAML would silently use the last)")
			continue
		}
		seen[k.Value] = true
		switch k.Value {
		case "ssh_config":
			if s, ok := p.scalar(v, "ssh_config", "the path of an ssh_config file"); ok {
				inv.SSHConfig = s
			}
		case RoleTarget:
			targetNode = v
			if v.Kind == yaml.SequenceNode {
				p.add(v, RoleTarget, "exactly one target host: a run measures one system under test (several generators go under load)")
				continue
			}
			if h, ok := p.host(v, RoleTarget, RoleTarget, 0); ok {
				inv.Target = h
			}
		case RoleLoad:
			nodes := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				nodes = v.Content
				if len(nodes) == 0 {
					p.add(v, RoleLoad, "no load hosts: list one or more, e.g. load: [gen1, gen2]")
				}
			}
			for j, n := range nodes {
				field := RoleLoad
				if v.Kind == yaml.SequenceNode {
					field = fmt.Sprintf("load[%d]", j)
				}
				if h, ok := p.host(n, field, RoleLoad, j); ok {
					inv.Load = append(inv.Load, h)
				}
			}
		case RoleDatabase, RoleDownstream:
			if v.Kind == yaml.SequenceNode {
				p.add(v, k.Value, "one %s host, not a list", k.Value)
				continue
			}
			if h, ok := p.host(v, k.Value, k.Value, 0); ok {
				if k.Value == RoleDatabase {
					inv.Database = &h
				} else {
					inv.Downstream = &h
				}
			}
		default:
			p.add(k, k.Value, "%s", unknownKey(k.Value, "target, load, database, downstream, ssh_config"))
		}
	}
	if targetNode == nil {
		p.add(m, RoleTarget, "missing: name the host the system under test runs on, e.g. target: {ssh: bench@10.0.0.2, address: 10.0.0.2}")
	}
	if !seen[RoleLoad] {
		p.add(m, RoleLoad, "missing: list the load generator hosts, e.g. load: [gen1]")
	}
	if len(p.probs) == 0 {
		p.shared(inv, func(a, b Host) (bool, string) { return sameMachine(a, b), "" })
		p.loopback(inv)
	}
	return inv
}

// sameMachine reports whether two destinations name one machine (by host
// part; two aliases of one machine are caught once ssh has resolved them:
// Inventory.SharedAfterSSH).
func sameMachine(a, b Host) bool { return strings.EqualFold(HostPart(a.SSH), HostPart(b.SSH)) }

// SharedAfterSSH is Parse's check of the measured hosts (the target and the
// load hosts: no two on one machine unless their cpus lists keep them
// apart) once ssh has said where each destination goes: two aliases of
// ~/.ssh/config (or names in two spellings) that ssh -G resolves to one
// host name are one machine, which the destinations as written do not
// show. hostname maps a destination to the host name ssh -G printed for
// it; a destination it lacks is compared as written.
func (inv *Inventory) SharedAfterSSH(hostname map[string]string) Problems {
	p := &parser{file: inv.File}
	p.shared(inv, func(a, b Host) (bool, string) {
		x, y := hostname[a.SSH], hostname[b.SSH]
		if x == "" || y == "" || sameMachine(a, b) {
			return sameMachine(a, b), "" // Parse said so already
		}
		if strings.EqualFold(x, y) {
			return true, fmt.Sprintf(" (ssh connects to both at %s)", x)
		}
		return false, ""
	})
	return p.probs
}

// loopback refuses a loopback address that a host on another machine must
// reach: the target's, which the load hosts reach, and the downstream's
// and database's, which the target reaches. Each host's loopback is its
// own, so they would reach themselves.
func (p *parser) loopback(inv *Inventory) {
	refuse := func(h Host, field string, from Host) {
		if ip := net.ParseIP(h.Address); ip == nil || !ip.IsLoopback() || sameMachine(h, from) {
			return
		}
		p.probs = append(p.probs, Problem{File: p.file, Line: h.Line, Col: h.Col, Field: field + ".address",
			Msg: fmt.Sprintf("%s is each machine's own loopback, and %s is another machine: it would reach itself; name the address it reaches %s at, e.g. 10.0.0.2", h.Address, from.Name(), h.SSH)})
	}
	for _, l := range inv.Load {
		if !sameMachine(inv.Target, l) {
			refuse(inv.Target, RoleTarget, l)
			break
		}
	}
	for _, h := range []*Host{inv.Downstream, inv.Database} {
		if h != nil {
			refuse(*h, h.Role, inv.Target)
		}
	}
}

// shared refuses a machine that is both the target and a load host, or two
// load hosts, unless their cpus lists keep them apart: a generator on the
// target's CPUs takes CPU from the system under test (what a multi-host run
// is there to avoid), and two generators on one machine count its CPU
// twice in the generator's self-check. The downstream service and the
// database may share a machine with anything: they are not measured.
// same says whether two hosts are one machine, and how that shows when
// their destinations differ.
func (p *parser) shared(inv *Inventory, same func(a, b Host) (bool, string)) {
	measured := append([]Host{inv.Target}, inv.Load...)
	for i, a := range measured {
		for _, b := range measured[:i] {
			one, how := same(a, b)
			if !one || disjointCPUs(a.CPUs, b.CPUs) {
				continue
			}
			field := RoleTarget
			if a.Role == RoleLoad {
				field = fmt.Sprintf("load[%d]", a.Index)
			}
			p.probs = append(p.probs, Problem{File: p.file, Line: a.Line, Col: a.Col, Field: field,
				Msg: fmt.Sprintf("%s is the same machine as %s (line %d)%s: their processes would share its CPUs; use another host, or give both a cpus list and keep the lists apart (e.g. cpus: 0-3 and cpus: 4-7)", a.SSH, b.Name(), b.Line, how)})
		}
	}
}

// disjointCPUs reports whether two cpus lists are both given and share no CPU.
func disjointCPUs(a, b string) bool {
	x, err1 := env.ParseCPUList(a)
	y, err2 := env.ParseCPUList(b)
	if err1 != nil || err2 != nil || len(x) == 0 || len(y) == 0 {
		return false
	}
	for _, c := range x {
		if slices.Contains(y, c) {
			return false
		}
	}
	return true
}

func unknownKey(k, known string) string {
	lk := strings.ToLower(k)
	for _, w := range secretWords {
		if strings.Contains(lk, w) {
			return "threadlab never stores secrets: put keys in ssh-agent or IdentityFile in ~/.ssh/config (or the ssh_config this inventory names) and remove this field"
		}
	}
	return "unknown field (known: " + known + ")"
}

// scalar reads a string scalar; what names the expected value in the message.
func (p *parser) scalar(n *yaml.Node, field, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.add(n, field, "want %s, a plain string", what)
		return "", false
	}
	return n.Value, true
}

// host reads one host: a bare destination string or a mapping.
func (p *parser) host(n *yaml.Node, field, role string, index int) (Host, bool) {
	h := Host{Role: role, Index: index, Line: n.Line, Col: n.Column}
	n0 := len(p.probs)
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			p.add(n, field, "empty: write the host's ssh destination, e.g. %s: bench@10.0.0.2", role)
			return h, false
		}
		h.SSH = n.Value
		p.checkDest(n, field, h.SSH)
	case yaml.MappingNode:
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				p.add(k, field, "a key must be a plain name (ssh, address or cpus)")
				continue
			}
			f := field + "." + k.Value
			if seen[k.Value] {
				p.add(k, f, "given twice: keep one")
				continue
			}
			seen[k.Value] = true
			switch k.Value {
			case "ssh":
				if s, ok := p.scalar(v, f, "an ssh destination such as bench@10.0.0.2 or an alias of ~/.ssh/config"); ok {
					h.SSH = s
					p.checkDest(v, f, s)
				}
			case "address":
				if s, ok := p.scalar(v, f, "an IP address of this host"); ok {
					h.Address = s
					if ip := net.ParseIP(s); ip == nil {
						p.add(v, f, "%q is not an IP address: write the address this host's services listen on, e.g. 10.0.0.2 (a name could resolve to another interface)", s)
					} else if ip.IsUnspecified() {
						p.add(v, f, "%s listens on every interface: name the one address the load hosts reach, e.g. 10.0.0.2", s)
					}
				}
			case "cpus":
				if s, ok := p.scalar(v, f, "a CPU list such as 0-3 or 0,2"); ok {
					h.CPUs = s
					if _, err := env.ParseCPUList(s); err != nil || strings.TrimSpace(s) == "" {
						msg := "empty"
						if err != nil {
							msg = err.Error()
						}
						p.add(v, f, "%s: write a CPU list as taskset -c takes it, e.g. 0-3 or 0,2 (or remove cpus for all)", msg)
					}
				}
			default:
				p.add(k, f, "%s", unknownKey(k.Value, "ssh, address, cpus"))
			}
		}
		if !seen["ssh"] {
			p.add(n, field+".ssh", "missing: every host needs its ssh destination, e.g. ssh: bench@10.0.0.2")
		}
	default:
		p.add(n, field, "want an ssh destination or a mapping with ssh, address and cpus")
	}
	return h, len(p.probs) == n0
}

// checkDest refuses destinations ssh would misread or that carry a secret.
func (p *parser) checkDest(n *yaml.Node, field, s string) {
	switch {
	case s == "":
		p.add(n, field, "empty: write the host's ssh destination, e.g. bench@10.0.0.2")
	case strings.HasPrefix(s, "-"):
		p.add(n, field, "%q starts with '-', which ssh would read as an option: write a destination such as bench@10.0.0.2", s)
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		p.add(n, field, "%q contains spaces or control characters: a destination is one word (put options in ~/.ssh/config under a Host alias)", s)
	case hasPassword(s):
		p.add(n, field, "the destination carries a password: threadlab never stores secrets; use a key (ssh-agent or IdentityFile in ~/.ssh/config) and write user@host")
	default:
		if err := checkDestSyntax(s); err != nil {
			p.add(n, field, "%q: %v; write user@host, host, or ssh://user@host:port, with a host name, an IPv4 address or an IPv6 address (in [brackets] in the ssh:// form), or an alias of ~/.ssh/config", s, err)
		}
	}
}

// hasPassword reports a user:password@ in a destination, ssh:// or not
// (bench:hunter2@host reaches ssh as the user "bench:hunter2").
func hasPassword(s string) bool {
	rest := strings.TrimPrefix(s, "ssh://")
	at := strings.LastIndex(rest, "@")
	return at >= 0 && strings.Contains(rest[:at], ":")
}

var (
	destUserRE = regexp.MustCompile(`^[A-Za-z0-9._][A-Za-z0-9._-]*$`)
	destHostRE = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9._-]*[A-Za-z0-9_])?$`) // a name, an IPv4 address or an ssh_config alias
)

// checkDestSyntax accepts only the characters a destination needs: a user
// of letters, digits, '.', '_' and '-'; a host name, IPv4 address, IPv6
// address or alias; a port of digits. Nothing else reaches ssh, whose
// ProxyCommand %h or Match exec in ~/.ssh/config would hand a "$(...)" to
// a shell (OpenSSH before 9.6 does not refuse it).
func checkDestSyntax(s string) error {
	rest, url := strings.CutPrefix(s, "ssh://")
	host := rest
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if user := rest[:at]; !destUserRE.MatchString(user) {
			return fmt.Errorf("the user %q may hold only letters, digits, '.', '_' and '-'", user)
		}
		host = rest[at+1:]
	}
	if url {
		if h, port, err := net.SplitHostPort(host); err == nil {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				return fmt.Errorf("the port %q is not a number in 1..65535", port)
			}
			host = h
		} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
			host = host[1 : len(host)-1]
		}
	}
	if ip := net.ParseIP(host); ip != nil {
		return nil
	}
	if !destHostRE.MatchString(host) {
		return fmt.Errorf("the host %q is not a host name or address", host)
	}
	return nil
}

// HostPart is the host name or address of an ssh destination, without
// user, scheme or port ("bench@10.0.0.2" -> "10.0.0.2"). For an alias of
// ssh_config it is the alias; ask ssh -G for the real name.
func HostPart(dest string) string {
	s, url := strings.CutPrefix(dest, "ssh://")
	if i := strings.LastIndex(s, "@"); i >= 0 {
		s = s[i+1:]
	}
	if url {
		if h, _, err := net.SplitHostPort(s); err == nil {
			return h
		}
		s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	}
	return s
}
