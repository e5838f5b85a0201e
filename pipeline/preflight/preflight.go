// Package preflight refuses a plan that does not fit this host before
// anything starts: more file descriptors, ephemeral ports or memory than
// the host allows at once. A refusal names the limit, the point of the
// sweep that needs more, and the exact fix.
//
// Data flow: the manifest (or a resumed run's copy of it) and what the host
// allows (Read: /proc and the cgroup tree) -> Problems, one sentence per
// limit -> Check's error, which the orchestrator returns before it creates
// the run directory. It imports nothing of the orchestrator's.
package preflight

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/store/record"
)

// Host limits, honestly (issue 12): a plan that needs more file
// descriptors, ephemeral ports or memory than this host allows is refused
// before anything starts, with the exact fix, instead of measuring the
// host's limit and calling it the server's (a connect that fails for want
// of a port looks like a refusal). The open-file limit is lint's check
// (experiments' hostProblems, which Load already applies); ports and memory
// are checked here against what the host check reads.

// Per-connection and per-JVM memory floors: what a plan needs at the
// least, so a refusal is certain rather than a guess. A loopback
// connection costs two kernel sockets (~2 KiB each without queued data),
// a generator worker (an 8 KiB goroutine stack and its read and write
// buffers) and the server's state for it; 32 KiB in all is below every
// target here. A JVM needs its heap plus at least 128 MiB beyond it
// (metaspace, code cache, thread stacks, GC structures).
const (
	connFloor      = 32 << 10
	jvmBeyondHeap  = 128 << 20
	maxClientPorts = 65535 - 1024 + 1 // ip_local_port_range "1024 65535": the most one client address can use
)

// Check refuses the run when the plan does not fit this host. m nil is a
// resumed run: its manifest is read from its directory resume (resume
// reads it again and reports a damaged one).
func Check(m *experiments.Manifest, resume string) error {
	if m == nil {
		if resume == "" {
			return nil
		}
		var err error
		if m, err = experiments.Load(filepath.Join(resume, record.ManifestFile), ""); err != nil || m == nil {
			return nil
		}
	}
	var lines []string
	for _, p := range m.HostLimits() {
		lines = append(lines, p.Msg)
	}
	lines = append(lines, Problems(m, Read("/"))...)
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("this host cannot run %s as planned (refused before anything started):\n  - %s", m.Name, strings.Join(lines, "\n  - "))
}

// Allows is what a host lets one run hold at once; a zero field is
// unknown (unreadable), and unknown is never a refusal.
type Allows struct {
	Ports     int    // ephemeral ports in net.ipv4.ip_local_port_range
	PortRange string // as the sysctl reads
	Mem       uint64 // bytes available: MemAvailable, or what the cgroup's limit leaves if less
	MemFrom   string // which of the two
}

// Read reads the limits under root ("/" for this host; tests pass a
// tree).
func Read(root string) Allows {
	var a Allows
	if b, err := os.ReadFile(filepath.Join(root, "proc/sys/net/ipv4/ip_local_port_range")); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			lo, err1 := strconv.Atoi(f[0])
			hi, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && hi >= lo {
				a.Ports, a.PortRange = hi-lo+1, f[0]+" "+f[1]
			}
		}
	}
	if f, err := os.Open(filepath.Join(root, "proc/meminfo")); err == nil {
		if mi, err := env.ParseMeminfo(f); err == nil && mi["MemAvailable"] > 0 {
			a.Mem, a.MemFrom = mi["MemAvailable"], "MemAvailable in /proc/meminfo"
		}
		f.Close()
	}
	if limit, used, file, ok := cgroupMemory(root); ok && (a.Mem == 0 || limit-min(used, limit) < a.Mem) {
		a.Mem, a.MemFrom = limit-min(used, limit), "the limit of cgroup "+file+" less what it uses"
	}
	return a
}

// cgroupMemory finds the tightest cgroup v2 memory.max on the path of
// this process's cgroup, and that cgroup's memory.current.
func cgroupMemory(root string) (limit, used uint64, file string, ok bool) {
	f, err := os.Open(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0, 0, "", false
	}
	lines, err := env.ParseProcCgroup(f)
	f.Close()
	if err != nil {
		return 0, 0, "", false
	}
	for _, l := range lines {
		if l.ID != 0 {
			continue // v1 hierarchies: the host check reports them
		}
		for dir := l.Path; ; dir = filepath.Dir(dir) {
			base := filepath.Join(root, "sys/fs/cgroup", dir)
			if b, err := os.ReadFile(filepath.Join(base, "memory.max")); err == nil {
				if n, err := env.ParseMemoryMax(string(b)); err == nil && n >= 0 && (!ok || uint64(n) < limit) {
					limit, file, ok = uint64(n), filepath.Join(base, "memory.max"), true
					used = 0
					if c, err := os.ReadFile(filepath.Join(base, "memory.current")); err == nil {
						used, _ = strconv.ParseUint(strings.TrimSpace(string(c)), 10, 64)
					}
				}
			}
			if dir == "/" || dir == "." {
				break
			}
		}
	}
	return limit, used, file, ok
}

// Problems compares each sweep point's peak with what the host allows, one
// sentence per limit the plan exceeds (none when it fits).
func Problems(m *experiments.Manifest, a Allows) []string {
	var out []string
	portsSaid, memSaid := false, false
	heap, heapOf := largestHeap(m)
	for _, p := range m.Sweep.Points() {
		var v experiments.Variant
		if len(m.Variants) > 0 {
			v = m.Variants[0] // its vars fill the request templates; the connections are the same for all
		}
		groups, err := m.LoadGroups(v, p)
		if err != nil {
			continue
		}
		conns := 0
		for _, g := range groups {
			conns += max(load.HeldConns(g), g.Preallocate)
		}
		at := ""
		if pt := record.FormatPoint(p); pt != "" {
			at = " at " + strings.ReplaceAll(pt, ";", " ")
		}
		if a.Ports > 0 && conns > a.Ports && !portsSaid {
			portsSaid = true
			fix := `fix: sudo sysctl -w net.ipv4.ip_local_port_range="1024 65535"`
			if conns > maxClientPorts {
				fix = fmt.Sprintf("no port range holds that many from one client address (at most %d): lower users/burst, or run the load generator from several hosts", maxClientPorts)
			}
			out = append(out, fmt.Sprintf("ports: the load holds %d connections at once%s, but net.ipv4.ip_local_port_range (%s) gives the generator %d ports; %s",
				conns, at, a.PortRange, a.Ports, fix))
		}
		need := uint64(conns) * connFloor
		if heap > 0 || hasTarget(m) {
			need += heap + jvmBeyondHeap
		}
		if a.Mem > 0 && need > a.Mem && !memSaid {
			memSaid = true
			parts := fmt.Sprintf("%d connections x %s", conns, mib(connFloor))
			fix := "lower users/burst, or run this point on a host with more memory"
			if heap > 0 {
				parts += fmt.Sprintf(" + heap %s (-Xmx of %s) + %s beyond the heap", mib(heap), heapOf, mib(jvmBeyondHeap))
				if room := int64(a.Mem) - int64(need-heap); room >= 256<<20 {
					fix = fmt.Sprintf("lower -Xmx in variants.%s.jvm to at most %s, or %s", heapOf, mib(room), fix)
				}
			}
			out = append(out, fmt.Sprintf("memory: the plan needs at least %s%s (%s), but %s is %s; %s (stopping other processes frees memory too)",
				mib(need), at, parts, a.MemFrom, mib(a.Mem), fix))
		}
	}
	return out
}

// largestHeap is the largest maximum heap a variant asks for (-Xmx or
// -XX:MaxHeapSize=) and that variant's name; 0 when none sets one, since a
// JVM without it sizes its heap to the machine.
func largestHeap(m *experiments.Manifest) (uint64, string) {
	var most uint64
	name := ""
	for _, v := range m.Variants {
		for _, a := range v.JVM {
			var s string
			switch {
			case strings.HasPrefix(a, "-Xmx"):
				s = a[len("-Xmx"):]
			case strings.HasPrefix(a, "-XX:MaxHeapSize="):
				s = a[len("-XX:MaxHeapSize="):]
			default:
				continue
			}
			if n, err := parseJVMSize(s); err == nil && n > most {
				most, name = n, v.Name
			}
		}
	}
	return most, name
}

func hasTarget(m *experiments.Manifest) bool {
	for _, v := range m.Variants {
		if v.Target != "" {
			return true
		}
	}
	return false
}

// parseJVMSize reads a JVM memory size: bytes, or a number with k, m, g or t.
func parseJVMSize(s string) (uint64, error) {
	mult := uint64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		case 't', 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > (1<<62)/mult {
		return 0, errors.New("not a JVM memory size")
	}
	return n * mult, nil
}

// mib renders bytes for a message: "2.0 GiB", "512 MiB", "32 KiB".
func mib[T int64 | uint64 | int](b T) string {
	x := float64(b)
	switch {
	case x >= 1<<30:
		return fmt.Sprintf("%.1f GiB", x/(1<<30))
	case x >= 1<<20:
		return fmt.Sprintf("%.0f MiB", x/(1<<20))
	}
	return fmt.Sprintf("%.0f KiB", x/(1<<10))
}
