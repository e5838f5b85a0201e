package env

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func open(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseCPUInfo(t *testing.T) {
	tests := []struct {
		file, why                       string
		model, vendor, microcode        string
		threads, cores, sockets, nFlags int
		wantErr                         string
		flag                            string // one flag that must be present
	}{
		{file: "epyc-2vcpu.txt", why: "recorded on the CI machine: 2 vCPUs, one socket, no SMT",
			model: "AMD EPYC", vendor: "AuthenticAMD", microcode: "0x1000065", threads: 2, cores: 2, sockets: 1, nFlags: 105, flag: "hypervisor"},
		{file: "epyc-2socket-smt.txt", why: "2 sockets x 2 cores x 2 threads: cores are distinct (physical id, core id) pairs",
			model: "AMD EPYC 7B13 64-Core Processor", vendor: "AuthenticAMD", microcode: "0x1000065", threads: 8, cores: 4, sockets: 2, nFlags: 105, flag: "avx512f"},
		{file: "arm64-graviton.txt", why: "arm64 has no model name or topology: model from implementer/part, each cpu a core",
			model: "implementer 0x41 part 0xd0c", vendor: "implementer 0x41", threads: 2, cores: 2, sockets: 1, nFlags: 17, flag: "asimd"},
		{file: "malformed-truncated.txt", why: "garbage lines are skipped; the truncated second entry still counts as a processor but has no topology",
			model: "AMD EPYC", vendor: "AuthenticAMD", microcode: "0x1000065", threads: 2, cores: 2, sockets: 1, nFlags: 105},
		{file: "not-cpuinfo.txt", why: "a file with no processor entries is an error, not a zero-cpu machine", wantErr: "no \"processor\" entries"},
		{file: "empty.txt", why: "an empty file (unreadable /proc under some sandboxes)", wantErr: "no \"processor\" entries"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParseCPUInfo(open(t, "cpuinfo/"+tt.file))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("%s: err = %v, want it to mention %q", tt.why, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tt.why, err)
			}
			if got.Model != tt.model || got.Vendor != tt.vendor || got.Microcode != tt.microcode {
				t.Errorf("%s: model/vendor/microcode = %q/%q/%q, want %q/%q/%q", tt.why, got.Model, got.Vendor, got.Microcode, tt.model, tt.vendor, tt.microcode)
			}
			if got.Threads != tt.threads || got.Cores != tt.cores || got.Sockets != tt.sockets {
				t.Errorf("%s: threads/cores/sockets = %d/%d/%d, want %d/%d/%d", tt.why, got.Threads, got.Cores, got.Sockets, tt.threads, tt.cores, tt.sockets)
			}
			if len(got.Flags) != tt.nFlags {
				t.Errorf("%s: %d flags, want %d", tt.why, len(got.Flags), tt.nFlags)
			}
			if !slices.IsSorted(got.Flags) {
				t.Errorf("%s: flags not sorted, so the flags hash would depend on file order", tt.why)
			}
			if tt.flag != "" && !slices.Contains(got.Flags, tt.flag) {
				t.Errorf("%s: flag %q missing", tt.why, tt.flag)
			}
		})
	}
}

func TestParsePidStat(t *testing.T) {
	tests := []struct {
		file, why string
		want      PidStat
		wantErr   string
	}{
		{file: "java.txt", why: "known numbers in every field the sampler uses",
			want: PidStat{PID: 77, Comm: "java", State: "S", PPID: 1, UTime: 1234, STime: 567, CUTime: 89, CSTime: 12, Threads: 42, StartTime: 9999, RSSPages: 25600}},
		{file: "weird-comm.txt", why: "a command name with spaces and parentheses: fields are counted from the last ')'",
			want: PidStat{PID: 4242, Comm: "my (odd) ) proc", State: "R", PPID: 19039, Threads: 1, StartTime: 66700, RSSPages: 392}},
		{file: "truncated.txt", why: "a file cut short (process exiting while read)", wantErr: "want at least 22"},
		{file: "no-parens.txt", why: "not a stat line", wantErr: "no \"(comm)\""},
		{file: "bad-utime.txt", why: "a non-numeric counter is an error naming the field", wantErr: "field 14"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParsePidStat(readFixture(t, "pidstat/"+tt.file))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("%s: err = %v, want it to mention %q", tt.why, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tt.why, err)
			}
			if got != tt.want {
				t.Errorf("%s:\n got %+v\nwant %+v", tt.why, got, tt.want)
			}
		})
	}

	// The recorded file of a real process parses and names it.
	st, err := ParsePidStat(readFixture(t, "pidstat/cat.txt"))
	if err != nil || st.Comm != "cat" || st.Threads != 1 || st.PID <= 0 {
		t.Errorf("recorded /proc/self/stat of cat: %+v, %v", st, err)
	}
}

func TestParsePidStatus(t *testing.T) {
	tests := []struct {
		file, why     string
		name          string
		threads       int
		rss, hwm      uint64
		wantErrSubstr string
	}{
		{file: "cat.txt", why: "recorded user process: RSS and peak in bytes (kB x 1024)", name: "cat", threads: 1, rss: 1764 * 1024, hwm: 1764 * 1024},
		{file: "kthreadd.txt", why: "kernel thread: no Vm lines, memory stays zero", name: "kthreadd", threads: 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParsePidStatus(open(t, "status/"+tt.file))
			if err != nil {
				t.Fatalf("%s: %v", tt.why, err)
			}
			if got.Name != tt.name || got.Threads != tt.threads || got.RSSBytes != tt.rss || got.HWMBytes != tt.hwm {
				t.Errorf("%s: got %+v", tt.why, got)
			}
		})
	}
	for _, bad := range []struct{ text, why string }{
		{"Name:\tx\nVmRSS:\t12 kB\n", "no Threads line: not a status file"},
		{"Name:\tx\nThreads:\tmany\n", "Threads not a number"},
		{"Threads:\t3\nVmRSS:\tlots kB\n", "VmRSS not a number"},
	} {
		if _, err := ParsePidStatus(strings.NewReader(bad.text)); err == nil {
			t.Errorf("%s: no error", bad.why)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		file, why string
		all       CPUTimes
		cpus      int
		btime     int64
		wantErr   string
	}{
		{file: "epyc-2vcpu.txt", why: "recorded: aggregate line, two cpus, steal column present",
			all: CPUTimes{User: 24898, System: 10242, Idle: 94822, IOWait: 1603, SoftIRQ: 750, Steal: 508}, cpus: 2, btime: 1795996127},
		{file: "old-kernel.txt", why: "pre-2.6.11 kernels print four columns; the rest are zero",
			all: CPUTimes{User: 100, System: 50, Idle: 850}, cpus: 1, btime: 1000},
		{file: "malformed.txt", why: "a short cpu line and a non-numeric one are skipped, the others kept",
			all: CPUTimes{User: 24898, System: 10242, Idle: 94822, IOWait: 1603, SoftIRQ: 750, Steal: 508}, cpus: 2, btime: 1795996127},
		{file: "no-aggregate.txt", why: "without the aggregate line host CPU cannot be measured", wantErr: "no aggregate"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParseProcStat(open(t, "procstat/"+tt.file))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("%s: err = %v, want %q", tt.why, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tt.why, err)
			}
			if got.All != tt.all || len(got.CPUs) != tt.cpus || got.BootTime != tt.btime {
				t.Errorf("%s: all %+v, %d cpus, btime %d", tt.why, got.All, len(got.CPUs), got.BootTime)
			}
		})
	}
}

func TestCPUTimesArithmetic(t *testing.T) {
	// Recorded aggregate: user 5711 + system 2971 + idle 47747 + iowait 504
	// + softirq 50 + steal 52 = 57035 ticks total; busy = 5711 + 2971 + 50 = 8732
	// (idle, iowait and steal are not this guest's work).
	c := CPUTimes{User: 5711, System: 2971, Idle: 47747, IOWait: 504, SoftIRQ: 50, Steal: 52, Guest: 7}
	if c.TotalTicks() != 57035 {
		t.Errorf("total = %d, want 57035 (guest is inside user, not added)", c.TotalTicks())
	}
	if c.BusyTicks() != 8732 {
		t.Errorf("busy = %d, want 8732", c.BusyTicks())
	}
	// A counter that went backwards (cpu hot-unplugged) is 0, not 2^64-ish.
	d := CPUTimes{User: 10, Idle: 100}.Sub(CPUTimes{User: 20, Idle: 50})
	if d.User != 0 || d.Idle != 50 {
		t.Errorf("sub = %+v, want user 0 idle 50", d)
	}
}

func TestParseMeminfo(t *testing.T) {
	m, err := ParseMeminfo(open(t, "meminfo/epyc-24g.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if m["MemTotal"] != 24684096*1024 || m["SwapTotal"] != 0 || m["HugePages_Total"] != 0 || m["Hugepagesize"] != 2048*1024 {
		t.Errorf("recorded meminfo: MemTotal %d SwapTotal %d Hugepagesize %d", m["MemTotal"], m["SwapTotal"], m["Hugepagesize"])
	}
	m, err = ParseMeminfo(open(t, "meminfo/malformed.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// "MemFree: lots" and "nonsense line" are skipped; a unitless count is kept as is.
	if _, ok := m["MemFree"]; ok || m["MemTotal"] != 1000*1024 || m["SwapTotal"] != 2048*1024 || m["HugePages_Total"] != 4 {
		t.Errorf("malformed meminfo parsed as %v", m)
	}
	if _, err := ParseMeminfo(open(t, "meminfo/no-memtotal.txt")); err == nil {
		t.Error("meminfo without MemTotal: no error")
	}
}

func TestParseOSRelease(t *testing.T) {
	tests := []struct {
		file, why string
		want      map[string]string
		absent    []string
	}{
		{file: "debian12.txt", why: "recorded /etc/os-release",
			want: map[string]string{"ID": "debian", "VERSION_ID": "12", "PRETTY_NAME": "Debian GNU/Linux 12 (bookworm)"}},
		{file: "quoted.txt", why: "single quotes literal, double-quote escapes undone, empty value allowed",
			want: map[string]string{"NAME": "Single Quoted Linux", "ID": "ubuntu", "VERSION_ID": "24.04",
				"PRETTY_NAME": `Ubuntu "Noble" 24.04 $HOME \ LTS`, "EMPTY": ""}},
		{file: "malformed.txt", why: "non-assignments, bad names, unterminated quotes and unquoted spaces are skipped",
			want: map[string]string{"ID": "fedora", "VERSION_ID": "40"}, absent: []string{"1BAD", "UNTERMINATED", "SPACES"}},
		{file: "temurin25-release.txt", why: "the JDK release file uses the same syntax (and a very long MODULES line)",
			want: map[string]string{"IMPLEMENTOR": "Eclipse Adoptium", "JAVA_VERSION": "25.0.3", "JAVA_RUNTIME_VERSION": "25.0.3+9-LTS"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			m, err := ParseOSRelease(open(t, "osrelease/"+tt.file))
			if err != nil {
				t.Fatalf("%s: %v", tt.why, err)
			}
			for k, v := range tt.want {
				if got, ok := m[k]; !ok || got != v {
					t.Errorf("%s: %s = %q (present %v), want %q", tt.why, k, got, ok, v)
				}
			}
			for _, k := range tt.absent {
				if _, ok := m[k]; ok {
					t.Errorf("%s: %s should have been skipped, got %q", tt.why, k, m[k])
				}
			}
		})
	}
}

func TestParseLoadavg(t *testing.T) {
	l1, l5, l15, err := ParseLoadavg("0.15 0.22 0.10 1/96 6348\n")
	if err != nil || l1 != 0.15 || l5 != 0.22 || l15 != 0.10 {
		t.Errorf("got %v %v %v %v", l1, l5, l15, err)
	}
	for _, bad := range []string{"", "0.1 0.2", "a b c"} {
		if _, _, _, err := ParseLoadavg(bad); err == nil {
			t.Errorf("ParseLoadavg(%q): no error", bad)
		}
	}
}

func TestParseProcCgroup(t *testing.T) {
	lines, err := ParseProcCgroup(open(t, "cgroup/v1-hybrid-proc-cgroup.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Recorded: 9 v1 hierarchies plus the (empty) v2 line.
	if len(lines) != 10 {
		t.Fatalf("%d lines, want 10: %+v", len(lines), lines)
	}
	mem := lines[5]
	if mem.ID != 4 || !slices.Equal(mem.Controllers, []string{"memory"}) || mem.Path != "/process_api/895079a11df0449f616005c806fa6fc1" {
		t.Errorf("memory line = %+v", mem)
	}
	if v2 := lines[9]; v2.ID != 0 || v2.Controllers != nil || v2.Path != "/" {
		t.Errorf("v2 line = %+v", v2)
	}
	got, err := ParseProcCgroup(strings.NewReader("junk\n4:cpu,cpuacct:/docker/x\nx:cpu:/a\n5:memory:relative\n"))
	if err != nil || len(got) != 1 || !slices.Equal(got[0].Controllers, []string{"cpu", "cpuacct"}) {
		t.Errorf("malformed lines not skipped: %+v, %v", got, err)
	}
	if _, err := ParseProcCgroup(strings.NewReader("nothing here\n")); err == nil {
		t.Error("no valid line: no error")
	}
}

func TestParseMountInfo(t *testing.T) {
	ms, err := ParseMountInfo(open(t, "cgroup/v1-hybrid-mountinfo.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var v2, mem *Mount
	for i := range ms {
		switch {
		case ms[i].FSType == "cgroup2":
			v2 = &ms[i]
		case ms[i].FSType == "cgroup" && slices.Contains(ms[i].SuperOpts, "memory"):
			mem = &ms[i]
		}
	}
	if v2 == nil || v2.Point != "/sys/fs/cgroup/unified" || mem == nil || mem.Point != "/sys/fs/cgroup/memory" || mem.Root != "/" {
		t.Errorf("recorded mountinfo: v2 %+v memory %+v", v2, mem)
	}
	ms, _ = ParseMountInfo(strings.NewReader("1 2 0:1 / /mnt/with\\040space rw - ext4 /dev/x rw\nshort line - x\n"))
	if len(ms) != 1 || ms[0].Point != "/mnt/with space" {
		t.Errorf("octal escape / malformed line: %+v", ms)
	}
}

func TestParseCgroupLimits(t *testing.T) {
	cpuMax := []struct {
		in, why       string
		quota, period int64
		wantErr       bool
	}{
		{"max 100000", "v2 unlimited", -1, 100000, false},
		{"150000 100000", "1.5 cpus", 150000, 100000, false},
		{"50000", "quota only: the kernel's default period", 50000, 100000, false},
		{"", "empty file", 0, 0, true},
		{"max 0", "zero period", 0, 0, true},
		{"lots 100000", "quota not a number", 0, 0, true},
		{"1 2 3", "too many fields", 0, 0, true},
	}
	for _, tt := range cpuMax {
		q, p, err := ParseCPUMax(tt.in)
		if (err != nil) != tt.wantErr || q != tt.quota || p != tt.period {
			t.Errorf("ParseCPUMax(%q) [%s] = %d, %d, %v", tt.in, tt.why, q, p, err)
		}
	}
	v1 := []struct {
		quota, period, why string
		q, p               int64
		wantErr            bool
	}{
		{"-1\n", "100000\n", "recorded: unlimited", -1, 100000, false},
		{"200000", "100000", "2 cpus", 200000, 100000, false},
		{"x", "100000", "garbage quota", 0, 0, true},
		{"-1", "0", "zero period", 0, 0, true},
	}
	for _, tt := range v1 {
		q, p, err := ParseCFSQuota(tt.quota, tt.period)
		if (err != nil) != tt.wantErr || q != tt.q || p != tt.p {
			t.Errorf("ParseCFSQuota(%q, %q) [%s] = %d, %d, %v", tt.quota, tt.period, tt.why, q, p, err)
		}
	}
	mem := []struct {
		in, why string
		want    int64
		wantErr bool
	}{
		{"max\n", "v2 unlimited", -1, false},
		{"9223372036854771712\n", "recorded v1 unlimited: page-aligned 2^63", -1, false},
		{"1073741824", "1 GiB", 1 << 30, false},
		{"-5", "negative", 0, true},
		{"1G", "units are not part of the format", 0, true},
	}
	for _, tt := range mem {
		got, err := ParseMemoryMax(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseMemoryMax(%q) [%s] = %d, %v", tt.in, tt.why, got, err)
		}
	}
}
