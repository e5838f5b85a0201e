package env

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// host reads one machine's /proc and /sys. The live machine has root "/";
// tests point root at a recorded tree under testdata/ (or an empty
// directory, where every check must come back "unknown" without a panic).
type host struct {
	root   string
	self   int                                   // pid left out of "other processes"
	nofile func() (soft, hard uint64, err error) // RLIMIT_NOFILE of the process that will run the benchmark
	window time.Duration                         // how long to watch other processes' CPU
}

func liveHost() host {
	return host{root: "/", self: os.Getpid(), nofile: nofileLimit, window: 500 * time.Millisecond}
}

func nofileLimit() (soft, hard uint64, err error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, fmt.Errorf("getrlimit nofile: %w", err)
	}
	return rl.Cur, rl.Max, nil
}

func (h host) path(p string) string { return filepath.Join(h.root, p) }

// read returns a file's content with surrounding space trimmed.
func (h host) read(p string) (string, error) {
	b, err := os.ReadFile(h.path(p))
	return strings.TrimSpace(string(b)), err
}

func (h host) exists(p string) bool {
	_, err := os.Stat(h.path(p))
	return err == nil
}

// sysctl reads a sysctl by its dotted name from /proc/sys; tabs in
// multi-value sysctls (ip_local_port_range) become single spaces.
func (h host) sysctl(name string) (string, error) {
	v, err := h.read("/proc/sys/" + strings.ReplaceAll(name, ".", "/"))
	if err != nil {
		return "", err
	}
	return strings.Join(strings.Fields(v), " "), nil
}

// fingerprintSysctls are the kernel settings that change how a server under
// connection load behaves; they are recorded with every run.
var fingerprintSysctls = []string{
	"net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog", "net.ipv4.ip_local_port_range",
	"net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_syncookies",
	"net.core.netdev_max_backlog", "net.ipv4.tcp_congestion_control", "fs.file-max", "fs.nr_open",
	"vm.swappiness", "vm.overcommit_memory", "kernel.numa_balancing", "kernel.pid_max", "kernel.threads-max",
}

// bracketed returns the selected word of a sysfs choice file such as
// "always [madvise] never".
func bracketed(s string) string {
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return strings.TrimSpace(s)
}

// governors counts the cpufreq governor of every CPU that has one.
func (h host) governors() map[string]int {
	files, _ := filepath.Glob(h.path("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"))
	out := map[string]int{}
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			out[strings.TrimSpace(string(b))]++
		}
	}
	return out
}

// boost reports whether turbo/boost is on, from whichever driver exposes
// it, with the file that said so (the fix writes to the same file).
func (h host) boost() (on bool, file string, ok bool) {
	if v, err := h.read("/sys/devices/system/cpu/intel_pstate/no_turbo"); err == nil {
		return v == "0", "/sys/devices/system/cpu/intel_pstate/no_turbo", true
	}
	if v, err := h.read("/sys/devices/system/cpu/cpufreq/boost"); err == nil {
		return v == "1", "/sys/devices/system/cpu/cpufreq/boost", true
	}
	files, _ := filepath.Glob(h.path("/sys/devices/system/cpu/cpufreq/policy[0-9]*/boost"))
	if len(files) > 0 {
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(b)) == "1" {
				return true, "/sys/devices/system/cpu/cpufreq/policy*/boost", true
			}
		}
		return false, "/sys/devices/system/cpu/cpufreq/policy*/boost", true
	}
	return false, "", false
}

// Cache is one CPU cache level as sysfs describes it for cpu0.
type Cache struct {
	Level      int    `json:"level"`
	Type       string `json:"type"` // Data, Instruction, Unified
	Size       string `json:"size"` // as the kernel writes it, e.g. "32K"
	SharedCPUs string `json:"shared_cpus,omitempty"`
}

func (h host) caches() []Cache {
	dirs, _ := filepath.Glob(h.path("/sys/devices/system/cpu/cpu0/cache/index[0-9]*"))
	var out []Cache
	for _, d := range dirs {
		rd := func(name string) string {
			b, _ := os.ReadFile(filepath.Join(d, name))
			return strings.TrimSpace(string(b))
		}
		lvl, err := strconv.Atoi(rd("level"))
		if err != nil {
			continue
		}
		out = append(out, Cache{Level: lvl, Type: rd("type"), Size: rd("size"), SharedCPUs: rd("shared_cpu_list")})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Level != out[j].Level {
			return out[i].Level < out[j].Level
		}
		return out[i].Type < out[j].Type
	})
	return out
}

// Cgroup is the effective resource limits of the cgroup threadlab runs in.
// A limit set on an ancestor binds as much as one on the cgroup itself, so
// each is the smallest found walking up to the hierarchy's root.
type Cgroup struct {
	Version     int      `json:"version"`               // 2 or 1 (of the hierarchy holding the cpu controller); 0 when none is visible
	Path        string   `json:"path,omitempty"`        // the cgroup of this process in that hierarchy
	CPUQuotaUs  int64    `json:"cpu_quota_us"`          // -1: no limit
	CPUPeriodUs int64    `json:"cpu_period_us"`         // 0 when unknown
	CPULimit    float64  `json:"cpu_limit_cores"`       // quota/period; 0: no limit
	CPUFile     string   `json:"cpu_file,omitempty"`    // the file holding the binding limit (the fix writes there)
	MemoryMax   int64    `json:"memory_max_bytes"`      // -1: no limit
	MemoryFile  string   `json:"memory_file,omitempty"` // the file holding the binding limit
	Cpuset      string   `json:"cpuset,omitempty"`      // effective cpuset, kernel list syntax
	Unreadable  []string `json:"unreadable,omitempty"`  // what could not be read, so "no limit" is never a guess
	MemoryKnown bool     `json:"memory_known"`
	CPUKnown    bool     `json:"cpu_known"`
}

// cgroupDir maps a process's cgroup path to a directory under a mount of
// that hierarchy. Inside a cgroup namespace the path may not exist below the
// mount; then the mount point itself is the process's cgroup.
func (h host) cgroupDir(m Mount, cgPath string) string {
	rel := cgPath
	if m.Root != "/" && strings.HasPrefix(cgPath, m.Root) {
		rel = strings.TrimPrefix(cgPath, m.Root)
	}
	dir := filepath.Join(m.Point, rel)
	if !h.exists(dir) {
		return m.Point
	}
	return dir
}

// ancestors lists dir and its parents up to and including top.
func ancestors(dir, top string) []string {
	out := []string{dir}
	for dir != top && strings.HasPrefix(dir, top) && dir != "/" {
		dir = filepath.Dir(dir)
		out = append(out, dir)
	}
	return out
}

func (h host) cgroup() Cgroup {
	cg := Cgroup{CPUQuotaUs: -1, MemoryMax: -1}
	f, err := os.Open(h.path("/proc/self/cgroup"))
	if err != nil {
		cg.Unreadable = append(cg.Unreadable, "/proc/self/cgroup: "+err.Error())
		return cg
	}
	lines, err := ParseProcCgroup(f)
	f.Close()
	if err != nil {
		cg.Unreadable = append(cg.Unreadable, err.Error())
		return cg
	}
	mf, err := os.Open(h.path("/proc/self/mountinfo"))
	if err != nil {
		cg.Unreadable = append(cg.Unreadable, "/proc/self/mountinfo: "+err.Error())
		return cg
	}
	mounts, _ := ParseMountInfo(mf)
	mf.Close()

	// Which hierarchy holds each controller: v2 when the unified mount lists
	// it in cgroup.controllers (a hybrid host mounts cgroup2 without any).
	var v2 *Mount
	var v2Path string
	for i := range mounts {
		if mounts[i].FSType == "cgroup2" {
			v2 = &mounts[i]
			break
		}
	}
	for _, l := range lines {
		if l.ID == 0 && len(l.Controllers) == 0 {
			v2Path = l.Path
		}
	}
	v2Has := map[string]bool{}
	if v2 != nil {
		if s, err := h.read(filepath.Join(v2.Point, "cgroup.controllers")); err == nil {
			for _, c := range strings.Fields(s) {
				v2Has[c] = true
			}
		}
	}
	v1 := func(ctrl string) (Mount, string, bool) {
		for _, l := range lines {
			for _, c := range l.Controllers {
				if c != ctrl {
					continue
				}
				for _, m := range mounts {
					if m.FSType != "cgroup" {
						continue
					}
					for _, o := range m.SuperOpts {
						if o == ctrl {
							return m, l.Path, true
						}
					}
				}
			}
		}
		return Mount{}, "", false
	}

	// CPU quota.
	switch m, p, ok := v1("cpu"); {
	case v2Has["cpu"]:
		cg.Version, cg.Path = 2, v2Path
		dir := h.cgroupDir(*v2, v2Path)
		for _, d := range ancestors(dir, v2.Point) {
			s, err := h.read(filepath.Join(d, "cpu.max"))
			if err != nil {
				continue // the root cgroup has no cpu.max
			}
			q, per, err := ParseCPUMax(s)
			if err != nil {
				cg.Unreadable = append(cg.Unreadable, filepath.Join(d, "cpu.max")+": "+err.Error())
				continue
			}
			cg.CPUKnown = true
			cg.tighterCPU(q, per, filepath.Join(d, "cpu.max"))
		}
		// The root cgroup has no cpu.max because it cannot be limited: a
		// process there (or a cgroup whose files are hidden) has no quota.
		cg.CPUKnown = cg.CPUKnown || dir == v2.Point
	case ok:
		cg.Version, cg.Path = 1, p
		dir := h.cgroupDir(m, p)
		for _, d := range ancestors(dir, m.Point) {
			qs, err1 := h.read(filepath.Join(d, "cpu.cfs_quota_us"))
			ps, err2 := h.read(filepath.Join(d, "cpu.cfs_period_us"))
			if err1 != nil || err2 != nil {
				continue
			}
			q, per, err := ParseCFSQuota(qs, ps)
			if err != nil {
				cg.Unreadable = append(cg.Unreadable, err.Error())
				continue
			}
			cg.CPUKnown = true
			cg.tighterCPU(q, per, filepath.Join(d, "cpu.cfs_quota_us"))
		}
	default:
		cg.Unreadable = append(cg.Unreadable, "no cgroup hierarchy with the cpu controller is mounted")
	}

	// Memory limit.
	switch m, p, ok := v1("memory"); {
	case v2Has["memory"]:
		if cg.Version == 0 {
			cg.Version, cg.Path = 2, v2Path
		}
		dir := h.cgroupDir(*v2, v2Path)
		cg.memoryWalk(h, ancestors(dir, v2.Point), "memory.max")
		cg.MemoryKnown = cg.MemoryKnown || dir == v2.Point // the root cgroup has no memory.max
	case ok:
		if cg.Version == 0 {
			cg.Version, cg.Path = 1, p
		}
		cg.memoryWalk(h, ancestors(h.cgroupDir(m, p), m.Point), "memory.limit_in_bytes")
	default:
		cg.Unreadable = append(cg.Unreadable, "no cgroup hierarchy with the memory controller is mounted")
	}

	// Cpuset: the effective list on v2, cpuset.effective_cpus (or cpus) on v1.
	if v2Has["cpuset"] {
		if s, err := h.read(filepath.Join(h.cgroupDir(*v2, v2Path), "cpuset.cpus.effective")); err == nil {
			cg.Cpuset = s
		}
	} else if m, p, ok := v1("cpuset"); ok {
		dir := h.cgroupDir(m, p)
		for _, name := range []string{"cpuset.effective_cpus", "cpuset.cpus"} {
			if s, err := h.read(filepath.Join(dir, name)); err == nil {
				cg.Cpuset = s
				break
			}
		}
	}
	return cg
}

func (cg *Cgroup) tighterCPU(quota, period int64, file string) {
	if quota < 0 {
		if cg.CPUPeriodUs == 0 {
			cg.CPUPeriodUs = period
		}
		return
	}
	cores := float64(quota) / float64(period)
	if cg.CPULimit == 0 || cores < cg.CPULimit {
		cg.CPUQuotaUs, cg.CPUPeriodUs, cg.CPULimit, cg.CPUFile = quota, period, cores, file
	}
}

func (cg *Cgroup) memoryWalk(h host, dirs []string, name string) {
	for _, d := range dirs {
		s, err := h.read(filepath.Join(d, name))
		if err != nil {
			continue
		}
		n, err := ParseMemoryMax(s)
		if err != nil {
			cg.Unreadable = append(cg.Unreadable, filepath.Join(d, name)+": "+err.Error())
			continue
		}
		cg.MemoryKnown = true
		if n >= 0 && (cg.MemoryMax < 0 || n < cg.MemoryMax) {
			cg.MemoryMax, cg.MemoryFile = n, filepath.Join(d, name)
		}
	}
}

// Virtualization says whether the machine is a VM, a container, both, or
// neither, and what evidence said so: steal time and noisy neighbours make
// numbers from virtual machines wider, and a reader should know.
type Virtualization struct {
	VM        string   `json:"vm,omitempty"`        // kvm, qemu, vmware, hyperv, xen, firecracker, amazon, google, or "unknown hypervisor"
	Container string   `json:"container,omitempty"` // docker, podman, kubernetes, lxc
	Evidence  []string `json:"evidence,omitempty"`
}

func (v Virtualization) String() string {
	var parts []string
	if v.VM != "" {
		parts = append(parts, "vm: "+v.VM)
	}
	if v.Container != "" {
		parts = append(parts, "container: "+v.Container)
	}
	if len(parts) == 0 {
		return "none detected"
	}
	return strings.Join(parts, ", ")
}

// virtInputs are the facts virtualization is inferred from; detectVirt is
// pure so each combination is a table row.
type virtInputs struct {
	HypervisorFlag         bool   // "hypervisor" in the cpuinfo flags (set by every x86 hypervisor)
	DMIVendor, DMIProduct  string // /sys/class/dmi/id/{sys_vendor,product_name}
	XenType                string // /sys/hypervisor/type
	Cmdline                string // /proc/cmdline
	DockerEnv, PodmanEnv   bool   // /.dockerenv, /run/.containerenv
	InitCgroup, SelfCgroup string // /proc/1/cgroup, /proc/self/cgroup
}

func detectVirt(in virtInputs) Virtualization {
	var v Virtualization
	dmi := strings.ToLower(in.DMIVendor + " " + in.DMIProduct)
	for _, c := range []struct{ needle, name string }{
		{"firecracker", "firecracker"}, {"qemu", "qemu"}, {"kvm", "kvm"}, {"vmware", "vmware"},
		{"microsoft corporation", "hyperv"}, {"virtualbox", "virtualbox"}, {"innotek", "virtualbox"},
		{"xen", "xen"}, {"amazon ec2", "amazon"}, {"google", "google"}, {"parallels", "parallels"},
	} {
		if strings.Contains(dmi, c.needle) {
			v.VM = c.name
			v.Evidence = append(v.Evidence, "dmi: "+strings.TrimSpace(in.DMIVendor+" "+in.DMIProduct))
			break
		}
	}
	if v.VM == "" && in.XenType != "" {
		v.VM = in.XenType
		v.Evidence = append(v.Evidence, "/sys/hypervisor/type: "+in.XenType)
	}
	if v.VM == "" && strings.Contains(in.Cmdline, "firecracker") {
		v.VM = "firecracker"
		v.Evidence = append(v.Evidence, "kernel cmdline mentions firecracker")
	}
	if in.HypervisorFlag {
		if v.VM == "" {
			v.VM = "unknown hypervisor"
		}
		v.Evidence = append(v.Evidence, "cpu flag: hypervisor")
	}
	cg := in.InitCgroup + "\n" + in.SelfCgroup
	switch {
	case in.PodmanEnv:
		v.Container = "podman"
		v.Evidence = append(v.Evidence, "/run/.containerenv")
	case strings.Contains(cg, "kubepods"):
		v.Container = "kubernetes"
		v.Evidence = append(v.Evidence, "cgroup path: kubepods")
	case in.DockerEnv:
		v.Container = "docker"
		v.Evidence = append(v.Evidence, "/.dockerenv")
	case strings.Contains(cg, "/docker/") || strings.Contains(cg, "docker-"):
		v.Container = "docker"
		v.Evidence = append(v.Evidence, "cgroup path: docker")
	case strings.Contains(cg, "/lxc/") || strings.Contains(cg, "lxc.payload"):
		v.Container = "lxc"
		v.Evidence = append(v.Evidence, "cgroup path: lxc")
	}
	return v
}

func (h host) virtualization(flags []string) Virtualization {
	in := virtInputs{DockerEnv: h.exists("/.dockerenv"), PodmanEnv: h.exists("/run/.containerenv")}
	for _, f := range flags {
		if f == "hypervisor" {
			in.HypervisorFlag = true
		}
	}
	in.DMIVendor, _ = h.read("/sys/class/dmi/id/sys_vendor")
	in.DMIProduct, _ = h.read("/sys/class/dmi/id/product_name")
	in.XenType, _ = h.read("/sys/hypervisor/type")
	in.Cmdline, _ = h.read("/proc/cmdline")
	in.InitCgroup, _ = h.read("/proc/1/cgroup")
	in.SelfCgroup, _ = h.read("/proc/self/cgroup")
	return detectVirt(in)
}

// CPUModel is this machine's processor as its fingerprint identifies it
// (CPU.Identity: cpu.model with its family and model numbers), "" when
// /proc/cpuinfo cannot be read: what the planner matches earlier runs'
// costs against (cost.PredictOn).
func CPUModel() string {
	info, err := liveHost().cpuinfo()
	if err != nil {
		return ""
	}
	return CPU{Model: info.Model, Family: info.Family, ModelID: info.ModelID}.Identity()
}

func (h host) cpuinfo() (CPUInfo, error) {
	f, err := os.Open(h.path("/proc/cpuinfo"))
	if err != nil {
		return CPUInfo{}, err
	}
	defer f.Close()
	return ParseCPUInfo(f)
}

func (h host) procStat() (ProcStat, error) {
	f, err := os.Open(h.path("/proc/stat"))
	if err != nil {
		return ProcStat{}, err
	}
	defer f.Close()
	return ParseProcStat(f)
}

func (h host) meminfo() (map[string]uint64, error) {
	f, err := os.Open(h.path("/proc/meminfo"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseMeminfo(f)
}

// busyProc is another process's CPU use over the host check's window.
type busyProc struct {
	PID     int     `json:"pid"`
	Comm    string  `json:"comm"`
	CPUPct  float64 `json:"cpu_pct"` // % of one core
	Threads int     `json:"threads"`
}

// pidStats reads /proc/<pid>/stat of every process, keyed by pid.
func (h host) pidStats() map[int]PidStat {
	ents, _ := os.ReadDir(h.path("/proc"))
	out := map[int]PidStat{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(h.path(fmt.Sprintf("/proc/%d/stat", pid)))
		if err != nil {
			continue // exited since the listing
		}
		if st, err := ParsePidStat(b); err == nil {
			out[pid] = st
		}
	}
	return out
}

// busy watches the host for h.window: the share of all CPUs busy outside
// this process (%), and the other processes sorted by CPU use. A pid whose
// start time changed in between is a different process and is left out.
func (h host) busy(ctx context.Context) (otherPct float64, procs []busyProc, err error) {
	s0, err := h.procStat()
	if err != nil {
		return 0, nil, err
	}
	p0 := h.pidStats()
	t0 := time.Now()
	select {
	case <-ctx.Done():
		return 0, nil, ctx.Err()
	case <-time.After(h.window):
	}
	s1, err := h.procStat()
	if err != nil {
		return 0, nil, err
	}
	p1 := h.pidStats()
	secs := time.Since(t0).Seconds()
	d := s1.All.Sub(s0.All)
	var selfTicks uint64
	for pid, b := range p1 {
		a, ok := p0[pid]
		if !ok || a.StartTime != b.StartTime {
			continue
		}
		ticks := (b.UTime + b.STime) - min(a.UTime+a.STime, b.UTime+b.STime)
		if pid == h.self {
			selfTicks = ticks
			continue
		}
		if ticks == 0 {
			continue
		}
		procs = append(procs, busyProc{PID: pid, Comm: b.Comm, Threads: b.Threads, CPUPct: float64(ticks) / UserHZ / secs * 100})
	}
	sort.Slice(procs, func(i, j int) bool { return procs[i].CPUPct > procs[j].CPUPct })
	if tot := d.TotalTicks(); tot > 0 {
		busy := d.BusyTicks() - min(selfTicks, d.BusyTicks())
		otherPct = float64(busy) / float64(tot) * 100
	}
	return otherPct, procs, nil
}
