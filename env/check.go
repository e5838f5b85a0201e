package env

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Check statuses. Fail means the host cannot meet what the manifest asks
// (the numbers would measure the host, not the server); warn means results
// will be noisier or less comparable than they could be; unknown means the
// host hides the file the check needs (common in containers and VMs).
const (
	OK      = "ok"
	Warn    = "warn"
	Fail    = "fail"
	Unknown = "unknown"
)

// Check is one row of the host check. Fix is the exact command that would
// fix a warn or fail row; threadlab never runs it.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Value  string `json:"value"`
	Want   string `json:"want"`
	Fix    string `json:"fix,omitempty"`
}

// Requirements are what a manifest's load asks of the host. The zero value
// checks general benchmark hygiene only.
type Requirements struct {
	// Connections is the most TCP connections open to the target at once
	// (e.g. 20000 for the largest connection burst). Both the accept queue
	// and the file-descriptor limits must hold that many.
	Connections int
	// Ports is how many ephemeral ports the client needs at once: open
	// connections plus those left in TIME_WAIT when keep-alive is off. All
	// traffic goes to one address and port, so the local port range is the
	// ceiling. 0 means Connections.
	Ports int
}

// baselineConns is the connection count every host should handle without a
// manifest asking: the kernel's own somaxconn default since Linux 5.4.
const baselineConns = 4096

// fdHeadroom is what a JVM or the generator holds besides the sockets
// counted in Requirements: jars, logs, epoll, the database pool.
const fdHeadroom = 1024

// HostCheck inspects the host and returns one row per check in a fixed
// order. It never changes the host and never fails: a file it cannot read is
// an "unknown" row. It watches the CPU of other processes for half a second.
func HostCheck(ctx context.Context, req Requirements) []Check {
	return liveHost().check(ctx, req)
}

func (h host) sudo() string {
	if h.root == "/" && os.Geteuid() == 0 {
		return ""
	}
	return "sudo "
}

func (h host) check(ctx context.Context, req Requirements) []Check {
	info, infoErr := h.cpuinfo()
	cg := h.cgroup()
	out := []Check{
		h.checkGovernor(),
		h.checkBoost(),
		h.checkSMT(info, infoErr),
		h.checkCPUs(),
		h.checkLoad(ctx, info, infoErr),
		h.checkBacklog("net.core.somaxconn", req),
		h.checkBacklog("net.ipv4.tcp_max_syn_backlog", req),
		h.checkPortRange(req),
		h.checkTWReuse(),
		h.checkNofile(req),
		h.checkCgroupCPU(cg, info, infoErr),
		h.checkCgroupMemory(cg),
		h.checkSwap(),
		h.checkTHP(),
		h.checkVirt(info, infoErr),
	}
	return out
}

func unknown(name, want, why string) Check {
	return Check{Name: name, Status: Unknown, Value: why, Want: want}
}

func (h host) checkGovernor() Check {
	const name, want = "cpu governor", "performance on every cpu"
	g := h.governors()
	if len(g) == 0 {
		return unknown(name, want, "no cpufreq in /sys (usual in VMs: the hypervisor sets the clock)")
	}
	var parts []string
	for gov, n := range g {
		parts = append(parts, fmt.Sprintf("%s on %d cpus", gov, n))
	}
	sort.Strings(parts)
	c := Check{Name: name, Status: OK, Value: strings.Join(parts, ", "), Want: want}
	if len(g) != 1 || g["performance"] == 0 {
		c.Status = Warn
		c.Fix = "echo performance | " + h.sudo() + "tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"
	}
	return c
}

func (h host) checkBoost() Check {
	const name, want = "turbo boost", "off: the clock must not depend on temperature and on what other cores do"
	on, file, ok := h.boost()
	if !ok {
		return unknown(name, want, "no intel_pstate/no_turbo or cpufreq boost file (usual in VMs)")
	}
	if !on {
		return Check{Name: name, Status: OK, Value: "off (" + file + ")", Want: want}
	}
	val := "0"
	if strings.HasSuffix(file, "no_turbo") {
		val = "1"
	}
	return Check{Name: name, Status: Warn, Value: "on (" + file + ")", Want: want,
		Fix: "echo " + val + " | " + h.sudo() + "tee " + file}
}

func (h host) checkSMT(info CPUInfo, infoErr error) Check {
	const name, want = "smt", "off, or target and generator pinned to different physical cores"
	ctl, err := h.read("/sys/devices/system/cpu/smt/control")
	if err != nil {
		if infoErr != nil {
			return unknown(name, want, "no /sys/devices/system/cpu/smt/control and no /proc/cpuinfo")
		}
		if info.Threads > info.Cores {
			return Check{Name: name, Status: Warn, Value: fmt.Sprintf("%d threads on %d cores (from cpuinfo)", info.Threads, info.Cores), Want: want}
		}
		return Check{Name: name, Status: OK, Value: fmt.Sprintf("one thread per core (%d cores, from cpuinfo)", info.Cores), Want: want}
	}
	switch ctl {
	case "on":
		return Check{Name: name, Status: Warn, Value: "on: sibling threads share one core's execution units", Want: want,
			Fix: "echo off | " + h.sudo() + "tee /sys/devices/system/cpu/smt/control"}
	case "off", "forceoff":
		return Check{Name: name, Status: OK, Value: ctl, Want: want}
	case "notsupported", "notimplemented":
		return Check{Name: name, Status: OK, Value: ctl + ": each cpu the kernel sees is its own core", Want: want}
	}
	return unknown(name, want, "unrecognised smt/control value "+strconv.Quote(ctl))
}

func (h host) checkCPUs() Check {
	const name, want = "cpus", "at least 2, so target and load generator need not share one"
	online, err := h.read("/sys/devices/system/cpu/online")
	if err != nil {
		return unknown(name, want, "no /sys/devices/system/cpu/online")
	}
	cpus, err := ParseCPUList(online)
	if err != nil {
		return unknown(name, want, err.Error())
	}
	allowed := cpus
	if h.root == "/" {
		allowed = Allowed()
	}
	c := Check{Name: name, Status: OK, Want: want,
		Value: fmt.Sprintf("%d online (%s), %d allowed to threadlab (%s)", len(cpus), online, len(allowed), FormatCPUList(allowed))}
	if len(allowed) < 2 {
		c.Status = Warn
	}
	return c
}

func (h host) checkLoad(ctx context.Context, info CPUInfo, infoErr error) Check {
	const name, want = "load", "other processes below 10% of all cpus"
	la, laErr := h.read("/proc/loadavg")
	other, procs, err := h.busy(ctx)
	if err != nil {
		if laErr != nil {
			return unknown(name, want, "cannot read /proc/stat or /proc/loadavg: "+err.Error())
		}
		return unknown(name, want, "load average "+la+"; cannot watch other processes: "+err.Error())
	}
	var parts []string
	if l1, l5, l15, err := ParseLoadavg(la); err == nil {
		n := "?"
		if infoErr == nil {
			n = strconv.Itoa(info.Threads)
		}
		parts = append(parts, fmt.Sprintf("load average %.2f %.2f %.2f on %s cpus", l1, l5, l15, n))
	}
	parts = append(parts, fmt.Sprintf("other processes used %.0f%% of all cpus over %s", other, h.window))
	var busiest []string
	var kill []string
	for i, p := range procs {
		if i == 5 {
			break
		}
		busiest = append(busiest, fmt.Sprintf("%s (pid %d) %.0f%%", p.Comm, p.PID, p.CPUPct))
		if p.CPUPct >= 5 {
			kill = append(kill, strconv.Itoa(p.PID))
		}
	}
	if len(busiest) > 0 {
		parts = append(parts, "busiest: "+strings.Join(busiest, ", "))
	}
	c := Check{Name: name, Status: OK, Value: strings.Join(parts, "; "), Want: want}
	if other >= 10 {
		c.Status = Warn
		if len(kill) > 0 {
			c.Fix = "kill " + strings.Join(kill, " ") + "   # or wait for them to finish"
		}
	}
	return c
}

// conns is the connection count the host must accept at once.
func (r Requirements) conns() int { return max(r.Connections, baselineConns) }

func (h host) checkBacklog(sysctl string, req Requirements) Check {
	need := req.conns()
	want := fmt.Sprintf(">= %d (accept queue for the connections opened at once)", need)
	v, err := h.sysctl(sysctl)
	if err != nil {
		return unknown(sysctl, want, "cannot read /proc/sys: "+err.Error())
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return unknown(sysctl, want, "not a number: "+strconv.Quote(v))
	}
	c := Check{Name: sysctl, Status: OK, Value: v, Want: want}
	if n < need {
		c.Status = Warn
		if n < req.Connections {
			c.Status = Fail // the kernel, not the server, would refuse the burst
		}
		c.Fix = fmt.Sprintf("%ssysctl -w %s=%d", h.sudo(), sysctl, need)
	}
	return c
}

func (h host) checkPortRange(req Requirements) Check {
	const name = "net.ipv4.ip_local_port_range"
	need := max(req.Ports, req.Connections)
	floor := 16384
	want := fmt.Sprintf(">= %d ephemeral ports", max(need, floor))
	v, err := h.sysctl(name)
	if err != nil {
		return unknown(name, want, "cannot read /proc/sys: "+err.Error())
	}
	f := strings.Fields(v)
	var lo, hi int
	if len(f) == 2 {
		lo, err = strconv.Atoi(f[0])
		if err == nil {
			hi, err = strconv.Atoi(f[1])
		}
	}
	if len(f) != 2 || err != nil || hi < lo {
		return unknown(name, want, "unreadable range "+strconv.Quote(v))
	}
	ports := hi - lo + 1
	c := Check{Name: name, Status: OK, Value: fmt.Sprintf("%s (%d ports)", v, ports), Want: want}
	if ports < max(need, floor) {
		c.Status = Warn
		if ports < need {
			c.Status = Fail
		}
		c.Fix = h.sudo() + `sysctl -w net.ipv4.ip_local_port_range="1024 65535"`
	}
	return c
}

func (h host) checkTWReuse() Check {
	const name, want = "net.ipv4.tcp_tw_reuse", "1, or 2 (loopback only: all threadlab traffic is local)"
	v, err := h.sysctl(name)
	if err != nil {
		return unknown(name, want, "cannot read /proc/sys: "+err.Error())
	}
	switch v {
	case "1":
		return Check{Name: name, Status: OK, Value: "1 (reuse TIME_WAIT ports)", Want: want}
	case "2":
		return Check{Name: name, Status: OK, Value: "2 (reuse TIME_WAIT ports on loopback)", Want: want}
	}
	return Check{Name: name, Status: Warn, Value: v + " (no reuse: runs without keep-alive run out of ports)", Want: want,
		Fix: h.sudo() + "sysctl -w net.ipv4.tcp_tw_reuse=1"}
}

func (h host) checkNofile(req Requirements) Check {
	const name = "open files (RLIMIT_NOFILE)"
	need := req.conns() + fdHeadroom
	want := fmt.Sprintf("hard limit >= %d (the generator and the JVM each raise their soft limit to the hard one)", need)
	if h.nofile == nil {
		return unknown(name, want, "getrlimit not available")
	}
	soft, hard, err := h.nofile()
	if err != nil {
		return unknown(name, want, err.Error())
	}
	c := Check{Name: name, Status: OK, Value: fmt.Sprintf("soft %d, hard %d", soft, hard), Want: want}
	if hard >= uint64(need) {
		return c
	}
	c.Status = Warn
	if req.Connections > 0 && hard < uint64(req.Connections+fdHeadroom) {
		c.Status = Fail // the generator would run out of sockets before the burst is out
	}
	c.Fix = fmt.Sprintf("ulimit -n %d   # in the shell that starts threadlab", need)
	if h.sudo() != "" {
		c.Fix = fmt.Sprintf("echo '* - nofile %d' | sudo tee -a /etc/security/limits.conf   # then log in again", need)
	}
	if nr, err := h.sysctl("fs.nr_open"); err == nil {
		if n, err := strconv.Atoi(nr); err == nil && n < need {
			c.Fix = fmt.Sprintf("%ssysctl -w fs.nr_open=%d && %s", h.sudo(), need, c.Fix)
		}
	}
	return c
}

func (h host) checkCgroupCPU(cg Cgroup, info CPUInfo, infoErr error) Check {
	const name, want = "cgroup cpu limit", "no quota below the cpus in use (a quota throttles in bursts, seen as latency spikes)"
	if !cg.CPUKnown {
		return unknown(name, want, "no cpu.max or cpu.cfs_quota_us readable: "+strings.Join(cg.Unreadable, "; "))
	}
	if cg.CPULimit == 0 {
		return Check{Name: name, Status: OK, Value: fmt.Sprintf("no quota (cgroup v%d %s)", cg.Version, cg.Path), Want: want}
	}
	c := Check{Name: name, Status: OK, Want: want,
		Value: fmt.Sprintf("%.2f cpus (%d/%d us in %s)", cg.CPULimit, cg.CPUQuotaUs, cg.CPUPeriodUs, cg.CPUFile)}
	if infoErr != nil || cg.CPULimit < float64(info.Threads) {
		c.Status = Warn
		unlimited := "max"
		if cg.Version == 1 {
			unlimited = "-1"
		}
		c.Fix = "echo " + unlimited + " | " + h.sudo() + "tee " + cg.CPUFile
	}
	return c
}

// minMemory is below what a Spring Boot target with a few thousand threads
// plus the database and downstream services need; the JVM also sizes its
// default heap at a quarter of the container limit.
const minMemory = 2 << 30

func (h host) checkCgroupMemory(cg Cgroup) Check {
	const name = "cgroup memory limit"
	want := fmt.Sprintf("none, or >= %s", bytesHuman(minMemory))
	if !cg.MemoryKnown {
		return unknown(name, want, "no memory.max or memory.limit_in_bytes readable: "+strings.Join(cg.Unreadable, "; "))
	}
	if cg.MemoryMax < 0 {
		return Check{Name: name, Status: OK, Value: "no limit", Want: want}
	}
	c := Check{Name: name, Status: OK, Value: bytesHuman(uint64(cg.MemoryMax)) + " (" + cg.MemoryFile + ")", Want: want}
	if cg.MemoryMax < minMemory {
		c.Status = Warn
		unlimited := "max"
		if strings.HasSuffix(cg.MemoryFile, "limit_in_bytes") {
			unlimited = "-1"
		}
		c.Fix = "echo " + unlimited + " | " + h.sudo() + "tee " + cg.MemoryFile
	}
	return c
}

func (h host) checkSwap() Check {
	const name, want = "swap", "off: a paged-out heap shows up as GC pauses"
	m, err := h.meminfo()
	if err != nil {
		return unknown(name, want, "cannot read /proc/meminfo: "+err.Error())
	}
	total := m["SwapTotal"]
	if total == 0 {
		return Check{Name: name, Status: OK, Value: "none", Want: want}
	}
	sw, _ := h.sysctl("vm.swappiness")
	return Check{Name: name, Status: Warn, Want: want,
		Value: fmt.Sprintf("%s swap, %s used, swappiness %s", bytesHuman(total), bytesHuman(total-m["SwapFree"]), sw),
		Fix:   h.sudo() + "swapoff -a"}
}

func (h host) checkTHP() Check {
	const name, want = "transparent huge pages", "madvise or never (always: khugepaged compaction stalls)"
	v, err := h.read("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return unknown(name, want, "no /sys/kernel/mm/transparent_hugepage/enabled")
	}
	sel := bracketed(v)
	if sel == "always" {
		return Check{Name: name, Status: Warn, Value: sel, Want: want,
			Fix: "echo madvise | " + h.sudo() + "tee /sys/kernel/mm/transparent_hugepage/enabled"}
	}
	return Check{Name: name, Status: OK, Value: sel, Want: want}
}

// maxBootSteal is the share of CPU time since boot that the hypervisor may
// have given to other guests before the host counts as noisy.
const maxBootSteal = 1.0

func (h host) checkVirt(info CPUInfo, infoErr error) Check {
	const name, want = "virtualization", "bare metal, or a VM whose steal time stays below 1%"
	v := h.virtualization(info.Flags)
	val := v.String()
	ps, err := h.procStat()
	steal := -1.0
	if err == nil && ps.All.TotalTicks() > 0 {
		steal = float64(ps.All.Steal) / float64(ps.All.TotalTicks()) * 100
		val += fmt.Sprintf("; steal %.2f%% since boot", steal)
	}
	if len(v.Evidence) > 0 {
		val += " (" + strings.Join(v.Evidence, ", ") + ")"
	}
	c := Check{Name: name, Status: OK, Value: val, Want: want}
	switch {
	case steal < 0 && (v.VM != "" || infoErr != nil):
		c.Status = Unknown // a VM of unknown steal, or no cpu flags to tell
	case steal >= maxBootSteal:
		c.Status = Warn // nothing to run from inside the guest: series.csv's host_steal_pct shows when it hit
	}
	return c
}

func bytesHuman(b uint64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := uint64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}
