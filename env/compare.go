package env

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Difference is one fingerprint field whose value differs between two runs.
// Matters marks differences that can move the numbers on their own (another
// CPU, fewer cores, another JDK or kernel, other cgroup limits, other JVM
// flags or library versions); the rest (hostname, commit, a sysctl not in
// play) are listed so nothing is hidden, but do not make runs incomparable.
type Difference struct {
	Field   string `json:"field"`
	A       string `json:"a"`
	B       string `json:"b"`
	Matters bool   `json:"matters"`
}

type fpField struct {
	name    string
	value   string
	matters bool
}

// fields flattens a fingerprint into named values in a fixed order.
func (fp *Fingerprint) fields() []fpField {
	i := strconv.Itoa
	f := []fpField{
		{"cpu.model", fp.CPU.Model, true},
		{"cpu.vendor", fp.CPU.Vendor, true},
		{"cpu.cores", i(fp.CPU.Cores), true},
		{"cpu.threads", i(fp.CPU.Threads), true},
		{"cpu.sockets", i(fp.CPU.Sockets), true},
		{"cpu.allowed", fp.CPU.Allowed, true},
		// Same model, other flags: a hypervisor hiding SHA-NI or AVX-512
		// changes what the JIT emits for the /cpu endpoint.
		{"cpu.flags_hash", fp.CPU.FlagsHash, true},
		{"cpu.governor", fp.CPU.Governor, true},
		{"cpu.boost", fp.CPU.Boost, true},
		{"cpu.smt", fp.CPU.SMT, true},
		{"cgroup.cpu_limit_cores", strconv.FormatFloat(fp.Cgroup.CPULimit, 'g', 4, 64), true},
		{"cgroup.memory_max_bytes", strconv.FormatInt(fp.Cgroup.MemoryMax, 10), true},
		{"cgroup.cpuset", fp.Cgroup.Cpuset, true},
		{"jdk.vendor", fp.JDK.Vendor, true},
		{"jdk.version", fp.JDK.Version, true},
		{"jvm_flags", strings.Join(fp.JVMFlags, " "), true},
		{"kernel.release", fp.Kernel.Release, true},
		{"kernel.arch", fp.Kernel.Arch, true},
		{"virtualization.vm", fp.Virtualization.VM, true},
		// Without -Xmx the JVM sizes its heap from total memory.
		{"memory.total_bytes", strconv.FormatUint(fp.Memory.TotalBytes, 10), true},

		{"cpu.microcode", fp.CPU.Microcode, false},
		{"cpu.caches", cachesString(fp.CPU.Caches), false},
		{"memory.swap_bytes", strconv.FormatUint(fp.Memory.SwapBytes, 10), false},
		{"memory.thp", fp.Memory.THP, false},
		{"jdk.runtime", fp.JDK.Runtime, false},
		{"jdk.vm", fp.JDK.VM, false},
		{"kernel.cmdline", fp.Kernel.Cmdline, false},
		{"distro", fp.Distro.PrettyName, false},
		{"virtualization.container", fp.Virtualization.Container, false},
		{"nofile_hard", strconv.FormatUint(fp.NofileHard, 10), false},
		{"go", fp.Go, false},
		{"threadlab.version", fp.Threadlab.Version, false},
		{"threadlab.commit", fp.Threadlab.Commit, false},
		{"threadlab.dirty", strconv.FormatBool(fp.Threadlab.Dirty), false},
		{"manifest.sha256", fp.Manifest.SHA256, false},
		{"hostname", fp.Hostname, false},
	}
	for _, k := range sortedKeys(fp.Components) {
		f = append(f, fpField{"components." + k, fp.Components[k], true})
	}
	for _, k := range sortedKeys(fp.Sysctls) {
		f = append(f, fpField{"sysctls." + k, fp.Sysctls[k], false})
	}
	return f
}

func cachesString(cs []Cache) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("L%d %s %s", c.Level, c.Type, c.Size))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// memoryTolerance: total memory as reported moves by a few MiB between boots
// of the same machine (kernel reservations); only a real change matters.
const memoryTolerance = 0.10

// Compare lists the fields that differ between a and b: those that matter
// first, then the minor ones, each group in a fixed order. A field present
// in only one fingerprint (a component one run did not record) differs too,
// with "" on the other side.
func Compare(a, b *Fingerprint) []Difference {
	if a == nil || b == nil {
		return []Difference{{Field: "fingerprint", A: present(a), B: present(b), Matters: true}}
	}
	fa, fb := a.fields(), b.fields()
	bv := map[string]fpField{}
	for _, f := range fb {
		bv[f.name] = f
	}
	var major, minor []Difference
	seen := map[string]bool{}
	add := func(name, x, y string, matters bool) {
		if x == y {
			return
		}
		if name == "memory.total_bytes" && matters {
			matters = !withinRatio(x, y, memoryTolerance)
		}
		d := Difference{Field: name, A: x, B: y, Matters: matters}
		if matters {
			major = append(major, d)
		} else {
			minor = append(minor, d)
		}
	}
	for _, f := range fa {
		seen[f.name] = true
		add(f.name, f.value, bv[f.name].value, f.matters)
	}
	for _, f := range fb {
		if !seen[f.name] {
			add(f.name, "", f.value, f.matters)
		}
	}
	return append(major, minor...)
}

func present(fp *Fingerprint) string {
	if fp == nil {
		return "missing"
	}
	return "present"
}

func withinRatio(x, y string, tol float64) bool {
	a, err1 := strconv.ParseFloat(x, 64)
	b, err2 := strconv.ParseFloat(y, 64)
	if err1 != nil || err2 != nil || a == 0 || b == 0 {
		return false
	}
	return math.Abs(a-b)/math.Max(a, b) <= tol
}
