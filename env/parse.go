package env

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// The parsers in this file are pure: they read what /proc or /sys would hold
// and never touch the machine, so each is table-tested on recorded files and
// on broken variants of them (testdata/). Where a file has lines that make no
// sense, they are skipped; only a file with nothing usable is an error.

// UserHZ is the unit of the tick counters in /proc/<pid>/stat and /proc/stat.
// The kernel fixes it at 100 for user space on every Linux architecture
// (USER_HZ, unrelated to CONFIG_HZ), and Go cannot call sysconf without cgo.
const UserHZ = 100

// CPUInfo is the part of /proc/cpuinfo that identifies a processor.
type CPUInfo struct {
	Model     string   // "model name" (x86) or "CPU implementer/part" (arm64)
	Vendor    string   // "vendor_id" (x86) or the arm64 implementer code
	Family    string   // "cpu family"
	ModelID   string   // "model"
	Stepping  string   // "stepping"
	Microcode string   // "microcode"; empty where the kernel does not expose it
	Threads   int      // logical processors: "processor" entries
	Cores     int      // physical cores: distinct (physical id, core id) pairs
	Sockets   int      // distinct physical ids
	Flags     []string // sorted "flags" (x86) or "Features" (arm64) of the first processor
	CacheSize string   // "cache size" of the first processor, e.g. "1024 KB"
}

// ParseCPUInfo reads /proc/cpuinfo. Cores and sockets come from the
// "physical id"/"core id" pairs; when the file lacks them (arm64, some VMs)
// every logical processor counts as a core on one socket, which is what the
// scheduler sees anyway.
func ParseCPUInfo(r io.Reader) (CPUInfo, error) {
	var info CPUInfo
	type coreKey struct{ socket, core string }
	cores := map[coreKey]bool{}
	sockets := map[string]bool{}
	var socket, core string
	haveTopology := true
	inProc := false
	endProc := func() {
		if !inProc {
			return
		}
		if socket == "" || core == "" {
			haveTopology = false
		} else {
			cores[coreKey{socket, core}] = true
			sockets[socket] = true
		}
		socket, core, inProc = "", "", false
	}
	var implementer, part string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			endProc()
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue // malformed: not "key : value"
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		first := info.Threads <= 1
		switch k {
		case "processor":
			if _, err := strconv.Atoi(v); err != nil {
				continue // old arm "Processor : ARMv7 ..." headline, not an entry
			}
			endProc()
			inProc = true
			info.Threads++
		case "physical id":
			socket = v
		case "core id":
			core = v
		case "model name":
			if first && info.Model == "" {
				info.Model = v
			}
		case "vendor_id":
			if first && info.Vendor == "" {
				info.Vendor = v
			}
		case "cpu family":
			if first && info.Family == "" {
				info.Family = v
			}
		case "model":
			if first && info.ModelID == "" {
				info.ModelID = v
			}
		case "stepping":
			if first && info.Stepping == "" {
				info.Stepping = v
			}
		case "microcode":
			if first && info.Microcode == "" {
				info.Microcode = v
			}
		case "cache size":
			if first && info.CacheSize == "" {
				info.CacheSize = v
			}
		case "flags", "Features":
			if first && info.Flags == nil {
				info.Flags = strings.Fields(v)
				sort.Strings(info.Flags)
			}
		case "CPU implementer":
			if implementer == "" {
				implementer = v
			}
		case "CPU part":
			if part == "" {
				part = v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return CPUInfo{}, fmt.Errorf("read cpuinfo: %w", err)
	}
	endProc()
	if info.Threads == 0 {
		return CPUInfo{}, fmt.Errorf("parse cpuinfo: no \"processor\" entries (is this /proc/cpuinfo?)")
	}
	if info.Vendor == "" && implementer != "" {
		info.Vendor = "implementer " + implementer
	}
	if info.Model == "" && implementer != "" {
		info.Model = "implementer " + implementer + " part " + part
	}
	if haveTopology && len(cores) > 0 {
		info.Cores, info.Sockets = len(cores), len(sockets)
	} else {
		info.Cores, info.Sockets = info.Threads, 1
	}
	return info, nil
}

// PidStat is the part of /proc/<pid>/stat that telemetry and the host check
// use. Times are in clock ticks (UserHZ per second).
type PidStat struct {
	PID   int
	Comm  string
	State string
	PPID  int
	UTime uint64 // field 14
	STime uint64 // field 15
	// CUTime and CSTime (fields 16, 17) are the user and system time of
	// the children this process waited for: a child that died between two
	// readings shows up here, in its reaper's counters.
	CUTime    int64
	CSTime    int64
	Threads   int    // field 20
	StartTime uint64 // field 22, ticks after boot: tells a recycled pid apart
	RSSPages  int64  // field 24
}

// ParsePidStat reads /proc/<pid>/stat. The command name is in parentheses
// and may itself contain spaces and parentheses, so the fields are counted
// from the last ')'.
func ParsePidStat(b []byte) (PidStat, error) {
	s := string(bytes.TrimSpace(b))
	open := strings.IndexByte(s, '(')
	closing := strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return PidStat{}, fmt.Errorf("parse pid stat: no \"(comm)\" in %q", trunc(s))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return PidStat{}, fmt.Errorf("parse pid stat: pid %q: %w", s[:open], err)
	}
	rest := strings.Fields(s[closing+1:])
	// rest[0] is field 3 (state); field n is rest[n-3].
	if len(rest) < 22 {
		return PidStat{}, fmt.Errorf("parse pid stat: %d fields after the command name, want at least 22 (truncated file?)", len(rest))
	}
	st := PidStat{PID: pid, Comm: s[open+1 : closing], State: rest[0]}
	nums := []struct {
		dst   any
		field int
	}{{&st.PPID, 4}, {&st.UTime, 14}, {&st.STime, 15}, {&st.CUTime, 16}, {&st.CSTime, 17}, {&st.Threads, 20}, {&st.StartTime, 22}, {&st.RSSPages, 24}}
	for _, n := range nums {
		v := rest[n.field-3]
		switch d := n.dst.(type) {
		case *int:
			*d, err = strconv.Atoi(v)
		case *uint64:
			*d, err = strconv.ParseUint(v, 10, 64)
		case *int64:
			*d, err = strconv.ParseInt(v, 10, 64)
		}
		if err != nil {
			return PidStat{}, fmt.Errorf("parse pid stat: field %d: %w", n.field, err)
		}
	}
	return st, nil
}

// PidStatus is the part of /proc/<pid>/status that telemetry uses.
type PidStatus struct {
	Name     string
	Threads  int
	RSSBytes uint64 // VmRSS
	HWMBytes uint64 // VmHWM, the peak RSS
}

// ParsePidStatus reads /proc/<pid>/status. Threads is required (every Linux
// since 2.6 has it); the memory lines are absent for kernel threads and
// zombies and then stay zero.
func ParsePidStatus(r io.Reader) (PidStatus, error) {
	var st PidStatus
	haveThreads := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Name":
			st.Name = v
		case "Threads":
			n, err := strconv.Atoi(v)
			if err != nil {
				return PidStatus{}, fmt.Errorf("parse pid status: Threads %q: %w", v, err)
			}
			st.Threads, haveThreads = n, true
		case "VmRSS", "VmHWM":
			b, err := parseKB(v)
			if err != nil {
				return PidStatus{}, fmt.Errorf("parse pid status: %s %q: %w", k, v, err)
			}
			if k == "VmRSS" {
				st.RSSBytes = b
			} else {
				st.HWMBytes = b
			}
		}
	}
	if err := sc.Err(); err != nil {
		return PidStatus{}, fmt.Errorf("read pid status: %w", err)
	}
	if !haveThreads {
		return PidStatus{}, fmt.Errorf("parse pid status: no Threads line (is this /proc/<pid>/status?)")
	}
	return st, nil
}

// CPUTimes is one "cpu" line of /proc/stat, in clock ticks.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal, Guest, GuestNice uint64
}

// TotalTicks is all time the line accounts for. Guest time is already part of
// user time, so it is not added again.
func (c CPUTimes) TotalTicks() uint64 {
	return c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal
}

// BusyTicks is time spent running something: everything but idle, I/O wait
// (an idle CPU waiting for a disk) and steal (time the hypervisor gave to
// someone else, which this guest did not use).
func (c CPUTimes) BusyTicks() uint64 {
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ
}

// Sub returns c - prev field by field; a field that went backwards (a CPU
// taken offline and back, or a wrapped counter) counts as zero rather than
// as a huge unsigned number.
func (c CPUTimes) Sub(prev CPUTimes) CPUTimes {
	d := func(a, b uint64) uint64 {
		if a < b {
			return 0
		}
		return a - b
	}
	return CPUTimes{d(c.User, prev.User), d(c.Nice, prev.Nice), d(c.System, prev.System), d(c.Idle, prev.Idle),
		d(c.IOWait, prev.IOWait), d(c.IRQ, prev.IRQ), d(c.SoftIRQ, prev.SoftIRQ), d(c.Steal, prev.Steal),
		d(c.Guest, prev.Guest), d(c.GuestNice, prev.GuestNice)}
}

// ProcStat is /proc/stat: the all-CPU line, one line per CPU, and a few
// scheduler counters.
type ProcStat struct {
	All          CPUTimes
	CPUs         []CPUTimes // in file order (cpu0, cpu1, ...)
	BootTime     int64      // btime, seconds since the epoch
	ProcsRunning int
	ProcsBlocked int
}

// ParseProcStat reads /proc/stat. Kernels before 2.6.11 have fewer columns
// on the cpu lines; missing trailing columns are zero. A file without the
// aggregate "cpu" line is an error: host CPU cannot be measured from it.
func ParseProcStat(r io.Reader) (ProcStat, error) {
	var ps ProcStat
	haveAll := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024) // the intr line is long
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch {
		case f[0] == "cpu" || strings.HasPrefix(f[0], "cpu"):
			t, ok := parseCPUTimes(f[1:])
			if !ok {
				continue // malformed line: skip it, keep the rest
			}
			if f[0] == "cpu" {
				ps.All, haveAll = t, true
			} else {
				ps.CPUs = append(ps.CPUs, t)
			}
		case f[0] == "btime" && len(f) > 1:
			ps.BootTime, _ = strconv.ParseInt(f[1], 10, 64)
		case f[0] == "procs_running" && len(f) > 1:
			ps.ProcsRunning, _ = strconv.Atoi(f[1])
		case f[0] == "procs_blocked" && len(f) > 1:
			ps.ProcsBlocked, _ = strconv.Atoi(f[1])
		}
	}
	if err := sc.Err(); err != nil {
		return ProcStat{}, fmt.Errorf("read /proc/stat: %w", err)
	}
	if !haveAll {
		return ProcStat{}, fmt.Errorf("parse /proc/stat: no aggregate \"cpu\" line (is this /proc/stat?)")
	}
	return ps, nil
}

func parseCPUTimes(f []string) (CPUTimes, bool) {
	if len(f) < 4 {
		return CPUTimes{}, false
	}
	var v [10]uint64
	for i := 0; i < len(f) && i < len(v); i++ {
		n, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return CPUTimes{}, false
		}
		v[i] = n
	}
	return CPUTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]}, true
}

// ParseMeminfo reads /proc/meminfo into bytes by key ("MemTotal",
// "SwapTotal", ...). Values given in kB are converted; unitless counts
// (HugePages_Total) are kept as they are. Malformed lines are skipped; a file
// without MemTotal is an error.
func ParseMeminfo(r io.Reader) (map[string]uint64, error) {
	m := map[string]uint64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		var n uint64
		var err error
		if strings.HasSuffix(v, "kB") {
			n, err = parseKB(v)
		} else {
			n, err = strconv.ParseUint(v, 10, 64)
		}
		if err != nil {
			continue
		}
		m[strings.TrimSpace(k)] = n
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read /proc/meminfo: %w", err)
	}
	if _, ok := m["MemTotal"]; !ok {
		return nil, fmt.Errorf("parse /proc/meminfo: no MemTotal line (is this /proc/meminfo?)")
	}
	return m, nil
}

func parseKB(v string) (uint64, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
	if err != nil {
		return 0, err
	}
	return n * 1024, nil
}

// ParseOSRelease reads an os-release(5) file, and the JDK's "release" file,
// which uses the same KEY="value" shell syntax. Quotes are removed and the
// backslash escapes of double-quoted values undone; comments, blank lines
// and lines that are not assignments are skipped.
func ParseOSRelease(r io.Reader) (map[string]string, error) {
	m := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024) // a JDK release file has a long MODULES line
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !validShellName(k) {
			continue
		}
		val, ok := unquoteShell(v)
		if !ok {
			continue
		}
		m[k] = val
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read os-release: %w", err)
	}
	return m, nil
}

func validShellName(k string) bool {
	if k == "" {
		return false
	}
	for i, c := range k {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// unquoteShell undoes the quoting os-release allows: "double" with \" \\ \$
// \` escapes, 'single' taken literally, or a bare word.
func unquoteShell(v string) (string, bool) {
	if v == "" {
		return "", true
	}
	switch v[0] {
	case '\'':
		if len(v) < 2 || v[len(v)-1] != '\'' {
			return "", false
		}
		return v[1 : len(v)-1], true
	case '"':
		if len(v) < 2 || v[len(v)-1] != '"' {
			return "", false
		}
		var b strings.Builder
		in := v[1 : len(v)-1]
		for i := 0; i < len(in); i++ {
			if in[i] == '\\' && i+1 < len(in) && strings.IndexByte("\"\\$`", in[i+1]) >= 0 {
				i++
			} else if in[i] == '"' {
				return "", false // unescaped quote inside: not one value
			}
			b.WriteByte(in[i])
		}
		return b.String(), true
	}
	if strings.ContainsAny(v, " \t\"'") {
		return "", false
	}
	return v, true
}

// ParseLoadavg reads /proc/loadavg: the 1, 5 and 15 minute load averages.
func ParseLoadavg(s string) (l1, l5, l15 float64, err error) {
	f := strings.Fields(s)
	if len(f) < 3 {
		return 0, 0, 0, fmt.Errorf("parse /proc/loadavg: %q has %d fields, want at least 3", trunc(s), len(f))
	}
	var v [3]float64
	for i := range v {
		if v[i], err = strconv.ParseFloat(f[i], 64); err != nil {
			return 0, 0, 0, fmt.Errorf("parse /proc/loadavg: %w", err)
		}
	}
	return v[0], v[1], v[2], nil
}

// CgroupLine is one line of /proc/<pid>/cgroup: hierarchy ID, the
// controllers bound to it (none for the v2 line, "0::/path") and the path
// inside that hierarchy.
type CgroupLine struct {
	ID          int
	Controllers []string
	Path        string
}

// ParseProcCgroup reads /proc/<pid>/cgroup. Malformed lines are skipped; a
// file with no valid line is an error.
func ParseProcCgroup(r io.Reader) ([]CgroupLine, error) {
	var out []CgroupLine
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		parts := strings.SplitN(strings.TrimSpace(sc.Text()), ":", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") {
			continue
		}
		id, err := strconv.Atoi(parts[0])
		if err != nil {
			continue
		}
		var ctrl []string
		if parts[1] != "" {
			ctrl = strings.Split(parts[1], ",")
		}
		out = append(out, CgroupLine{ID: id, Controllers: ctrl, Path: parts[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read /proc/self/cgroup: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("parse /proc/self/cgroup: no \"id:controllers:/path\" lines")
	}
	return out, nil
}

// Mount is one line of /proc/<pid>/mountinfo.
type Mount struct {
	Root      string // the directory of the filesystem mounted here (a cgroup path for cgroup mounts)
	Point     string // where it is mounted
	FSType    string // "cgroup", "cgroup2", ...
	SuperOpts []string
}

// ParseMountInfo reads /proc/<pid>/mountinfo. Octal escapes (\040 for a
// space) are undone; malformed lines are skipped.
func ParseMountInfo(r io.Reader) ([]Mount, error) {
	var out []Mount
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		a, b := strings.Fields(pre), strings.Fields(post)
		if len(a) < 6 || len(b) < 3 {
			continue
		}
		out = append(out, Mount{Root: unescapeOctal(a[3]), Point: unescapeOctal(a[4]), FSType: b[0], SuperOpts: strings.Split(b[2], ",")})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	return out, nil
}

func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ParseCPUMax reads cgroup v2 cpu.max, "$MAX $PERIOD" in microseconds.
// quota is -1 for "max" (no limit).
func ParseCPUMax(s string) (quota, period int64, err error) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f) > 2 {
		return 0, 0, fmt.Errorf("parse cpu.max: %q, want \"max 100000\" or \"<quota> <period>\"", trunc(s))
	}
	period = 100000 // the kernel default when the file holds only the quota
	if len(f) == 2 {
		if period, err = strconv.ParseInt(f[1], 10, 64); err != nil || period <= 0 {
			return 0, 0, fmt.Errorf("parse cpu.max: period %q is not a positive number", f[1])
		}
	}
	if f[0] == "max" {
		return -1, period, nil
	}
	if quota, err = strconv.ParseInt(f[0], 10, 64); err != nil || quota <= 0 {
		return 0, 0, fmt.Errorf("parse cpu.max: quota %q is neither \"max\" nor a positive number", f[0])
	}
	return quota, period, nil
}

// ParseCFSQuota reads cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us;
// quota is -1 when unlimited.
func ParseCFSQuota(quotaFile, periodFile string) (quota, period int64, err error) {
	if quota, err = strconv.ParseInt(strings.TrimSpace(quotaFile), 10, 64); err != nil {
		return 0, 0, fmt.Errorf("parse cpu.cfs_quota_us %q: %w", trunc(quotaFile), err)
	}
	if period, err = strconv.ParseInt(strings.TrimSpace(periodFile), 10, 64); err != nil || period <= 0 {
		return 0, 0, fmt.Errorf("parse cpu.cfs_period_us %q: not a positive number", trunc(periodFile))
	}
	if quota < 0 {
		quota = -1
	}
	return quota, period, nil
}

// v1Unlimited: cgroup v1 reports "no memory limit" as the largest multiple
// of the page size below 2^63 (9223372036854771712 with 4 KiB pages), not as
// a word; anything this large is no limit.
const v1Unlimited = int64(1) << 62

// ParseMemoryMax reads cgroup v2 memory.max ("max" or bytes) or v1
// memory.limit_in_bytes; -1 means no limit.
func ParseMemoryMax(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "max" || s == "-1" {
		return -1, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("parse memory limit %q: neither \"max\" nor a byte count", trunc(s))
	}
	if n >= v1Unlimited {
		return -1, nil
	}
	return n, nil
}

func trunc(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
