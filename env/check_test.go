package env

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// treeHost is a host whose /proc and /sys are a recorded tree under
// testdata/hosts (or any directory), with a fixed open-file limit.
func treeHost(root string, soft, hard uint64) host {
	return host{root: root, self: -1, window: 10 * time.Millisecond,
		nofile: func() (uint64, uint64, error) { return soft, hard, nil }}
}

func TestCgroupFromTrees(t *testing.T) {
	tests := []struct {
		tree, why string
		version   int
		path      string
		cpuLimit  float64
		cpuFile   string
		memMax    int64
		memFile   string
		cpuset    string
	}{
		{tree: "v1-hybrid", why: "recorded CI machine: v1 controllers, an empty cgroup2 mount that must not be mistaken for v2, no limits",
			version: 1, path: "/", memMax: -1, cpuset: "0-1"},
		{tree: "v1-docker", why: "docker on v1: the container's cgroup is bind-mounted at the mount point (mountinfo root = cgroup path)",
			version: 1, path: "/docker/3f2a9c", cpuLimit: 1.5, cpuFile: "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us",
			memMax: 1 << 30, memFile: "/sys/fs/cgroup/memory/memory.limit_in_bytes", cpuset: "0-3"},
		{tree: "v2-systemd", why: "pure v2: limits set on ancestors (user.slice cpu, user-1000.slice memory) bind the session",
			version: 2, path: "/user.slice/user-1000.slice/session-3.scope", cpuLimit: 2, cpuFile: "/sys/fs/cgroup/user.slice/cpu.max",
			memMax: 1 << 30, memFile: "/sys/fs/cgroup/user.slice/user-1000.slice/memory.max", cpuset: "0-7"},
		{tree: "v2-container-ns", why: "cgroup namespace: the path in /proc/self/cgroup does not exist under the mount, the mount point is the cgroup",
			version: 2, path: "/kubepods.slice/kubepods-burstable.slice/cri-containerd-77ab.scope", cpuLimit: 0.5, cpuFile: "/sys/fs/cgroup/cpu.max",
			memMax: 512 << 20, memFile: "/sys/fs/cgroup/memory.max"},
	}
	for _, tt := range tests {
		t.Run(tt.tree, func(t *testing.T) {
			cg := treeHost(filepath.Join("testdata/hosts", tt.tree), 0, 0).cgroup()
			if !cg.CPUKnown || !cg.MemoryKnown {
				t.Fatalf("%s: cpu known %v, memory known %v, unreadable %v", tt.why, cg.CPUKnown, cg.MemoryKnown, cg.Unreadable)
			}
			if cg.Version != tt.version || cg.Path != tt.path || cg.CPULimit != tt.cpuLimit || cg.CPUFile != tt.cpuFile ||
				cg.MemoryMax != tt.memMax || cg.MemoryFile != tt.memFile || cg.Cpuset != tt.cpuset {
				t.Errorf("%s:\n got %+v", tt.why, cg)
			}
		})
	}

	// A process in the v2 root cgroup: no cpu.max or memory.max exists
	// there because the root cannot be limited. That is "no limit", known.
	root := t.TempDir()
	for name, content := range map[string]string{
		"proc/self/cgroup":                 "0::/\n",
		"proc/self/mountinfo":              "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
		"sys/fs/cgroup/cgroup.controllers": "cpu memory\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cg := treeHost(root, 0, 0).cgroup()
	if !cg.CPUKnown || !cg.MemoryKnown || cg.CPULimit != 0 || cg.MemoryMax != -1 || cg.Version != 2 {
		t.Errorf("v2 root cgroup: want known, unlimited; got %+v", cg)
	}

	cg = treeHost(t.TempDir(), 0, 0).cgroup()
	if cg.CPUKnown || cg.MemoryKnown || cg.Version != 0 || len(cg.Unreadable) == 0 {
		t.Errorf("no /proc at all: want nothing known and the reason recorded, got %+v", cg)
	}
}

func statuses(checks []Check) map[string]Check {
	m := map[string]Check{}
	for _, c := range checks {
		m[c.Name] = c
	}
	return m
}

func TestHostCheckOnTrees(t *testing.T) {
	type row struct{ status, fix, value string } // fix and value: substrings that must appear
	tests := []struct {
		tree, why  string
		soft, hard uint64
		req        Requirements
		want       map[string]row
	}{
		{tree: "v1-hybrid", why: "the CI machine as recorded, no manifest: only the SYN backlog is below the baseline",
			soft: 20000, hard: 20000,
			want: map[string]row{
				"cpu governor":                 {status: Unknown},
				"turbo boost":                  {status: Unknown},
				"smt":                          {status: OK, value: "notsupported"},
				"cpus":                         {status: OK, value: "2 online"},
				"load":                         {status: OK, value: "load average 0.15 0.22 0.10 on 2 cpus"},
				"net.core.somaxconn":           {status: OK, value: "4096"},
				"net.ipv4.tcp_max_syn_backlog": {status: Warn, fix: "sudo sysctl -w net.ipv4.tcp_max_syn_backlog=4096"},
				"net.ipv4.ip_local_port_range": {status: OK, value: "28232 ports"},
				"net.ipv4.tcp_tw_reuse":        {status: OK, value: "loopback"},
				"open files (RLIMIT_NOFILE)":   {status: OK, value: "hard 20000"},
				"cgroup cpu limit":             {status: OK, value: "no quota"},
				"cgroup memory limit":          {status: OK, value: "no limit"},
				"swap":                         {status: OK, value: "none"},
				"transparent huge pages":       {status: OK, value: "madvise"},
				"virtualization":               {status: OK, value: "vm: firecracker"},
			}},
		{tree: "v1-hybrid", why: "the same machine asked for a 20k-connection burst: accept queues and fds cannot hold it",
			soft: 20000, hard: 20000, req: Requirements{Connections: 20000},
			want: map[string]row{
				"net.core.somaxconn":           {status: Fail, fix: "sysctl -w net.core.somaxconn=20000"},
				"net.ipv4.tcp_max_syn_backlog": {status: Fail, fix: "net.ipv4.tcp_max_syn_backlog=20000"},
				"net.ipv4.ip_local_port_range": {status: OK},
				"open files (RLIMIT_NOFILE)":   {status: Fail, fix: "nofile 21024"},
			}},
		{tree: "v2-systemd", why: "a badly tuned bare-metal host: every tunable is flagged with its fix",
			soft: 1024, hard: 4096,
			want: map[string]row{
				"cpu governor":                 {status: Warn, value: "powersave on 7 cpus", fix: "echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"},
				"turbo boost":                  {status: Warn, fix: "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo"},
				"smt":                          {status: Warn, fix: "echo off | sudo tee /sys/devices/system/cpu/smt/control"},
				"cpus":                         {status: OK, value: "8 online"},
				"load":                         {status: OK, value: "7.50"},
				"net.core.somaxconn":           {status: Warn, value: "128", fix: "net.core.somaxconn=4096"},
				"net.ipv4.tcp_max_syn_backlog": {status: Warn, value: "512"},
				"net.ipv4.ip_local_port_range": {status: Warn, value: "5000 ports", fix: `ip_local_port_range="1024 65535"`},
				"net.ipv4.tcp_tw_reuse":        {status: Warn, fix: "sysctl -w net.ipv4.tcp_tw_reuse=1"},
				"open files (RLIMIT_NOFILE)":   {status: Warn, fix: "nofile 5120"},
				"cgroup cpu limit":             {status: Warn, value: "2.00 cpus", fix: "echo max | sudo tee /sys/fs/cgroup/user.slice/cpu.max"},
				"cgroup memory limit":          {status: Warn, value: "1.0 GiB", fix: "echo max | sudo tee /sys/fs/cgroup/user.slice/user-1000.slice/memory.max"},
				"swap":                         {status: Warn, value: "8.0 GiB swap", fix: "swapoff -a"},
				"transparent huge pages":       {status: Warn, value: "always", fix: "echo madvise"},
				"virtualization":               {status: OK, value: "none detected"},
			}},
		{tree: "v2-systemd", why: "a manifest needing 10000 ports on a 5000-port range fails, not warns",
			soft: 1024, hard: 4096, req: Requirements{Connections: 1000, Ports: 10000},
			want: map[string]row{
				"net.ipv4.ip_local_port_range": {status: Fail},
				"net.core.somaxconn":           {status: Fail},
				"open files (RLIMIT_NOFILE)":   {status: Warn}, // 4096 >= 1000+1024 asked, but below the baseline
			}},
		{tree: "v1-docker", why: "a v1 container with a 1.5-cpu quota on a 2-cpu host: the fix writes -1 (v1 syntax) to the quota file",
			soft: 1 << 20, hard: 1 << 20,
			want: map[string]row{
				"cgroup cpu limit":    {status: Warn, value: "1.50 cpus", fix: "echo -1 | sudo tee /sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us"},
				"cgroup memory limit": {status: Warn, fix: "echo -1 | sudo tee /sys/fs/cgroup/memory/memory.limit_in_bytes"},
				"virtualization":      {value: "container: docker"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.tree, func(t *testing.T) {
			checks := treeHost(filepath.Join("testdata/hosts", tt.tree), tt.soft, tt.hard).check(context.Background(), tt.req)
			got := statuses(checks)
			if len(checks) != 15 || len(got) != 15 {
				t.Errorf("%d checks with %d distinct names, want 15", len(checks), len(got))
			}
			for name, w := range tt.want {
				c, ok := got[name]
				if !ok {
					t.Errorf("%s: no %q row", tt.why, name)
					continue
				}
				if w.status != "" && c.Status != w.status {
					t.Errorf("%s: %s status %s, want %s (value %q)", tt.why, name, c.Status, w.status, c.Value)
				}
				if !strings.Contains(c.Value, w.value) {
					t.Errorf("%s: %s value %q, want it to contain %q", tt.why, name, c.Value, w.value)
				}
				if !strings.Contains(c.Fix, w.fix) {
					t.Errorf("%s: %s fix %q, want it to contain %q", tt.why, name, c.Fix, w.fix)
				}
			}
			for _, c := range checks {
				if (c.Status == Warn || c.Status == Fail) && c.Fix == "" && c.Name != "virtualization" && c.Name != "cpus" && c.Name != "load" {
					t.Errorf("%s: %s is %s without a fix command", tt.why, c.Name, c.Status)
				}
				if c.Status == OK && c.Fix != "" {
					t.Errorf("%s: %s is ok but carries fix %q", tt.why, c.Name, c.Fix)
				}
			}
		})
	}
}

// A host that hides all of /proc and /sys gets "unknown" rows, never a panic.
func TestHostCheckEmptyRoot(t *testing.T) {
	checks := treeHost(t.TempDir(), 1024, 1<<20).check(context.Background(), Requirements{Connections: 100})
	if len(checks) != 15 {
		t.Fatalf("%d checks, want 15", len(checks))
	}
	for _, c := range checks {
		want := Unknown
		if c.Name == "open files (RLIMIT_NOFILE)" {
			want = OK // from getrlimit, not from a file
		}
		if c.Status != want {
			t.Errorf("%s: %s (%s), want %s", c.Name, c.Status, c.Value, want)
		}
		if c.Value == "" || c.Want == "" {
			t.Errorf("%s: empty value or want: %+v", c.Name, c)
		}
	}
}

func TestHostCheckLive(t *testing.T) {
	if testing.Short() {
		t.Skip("watches the host for half a second")
	}
	checks := HostCheck(context.Background(), Requirements{})
	got := statuses(checks)
	// Facts of any Linux machine this runs on: /proc/sys and getrlimit exist.
	for _, name := range []string{"net.core.somaxconn", "net.ipv4.ip_local_port_range", "open files (RLIMIT_NOFILE)", "load", "cpus"} {
		c, ok := got[name]
		if !ok || c.Status == Unknown || c.Value == "" {
			t.Errorf("%s on this machine: %+v", name, c)
		}
	}
}

func TestDetectVirt(t *testing.T) {
	tests := []struct {
		why                 string
		in                  virtInputs
		vm, container, text string
	}{
		{"bare metal: no evidence at all", virtInputs{DMIVendor: "Dell Inc.", DMIProduct: "PowerEdge R650"}, "", "", "none detected"},
		{"kvm named by DMI, flag agrees", virtInputs{HypervisorFlag: true, DMIVendor: "QEMU", DMIProduct: "Standard PC (Q35 + ICH9, 2009)"}, "qemu", "", "vm: qemu"},
		{"hyper-v is Microsoft in DMI", virtInputs{HypervisorFlag: true, DMIVendor: "Microsoft Corporation", DMIProduct: "Virtual Machine"}, "hyperv", "", "vm: hyperv"},
		{"firecracker has no DMI; the CI machine's cmdline names it", virtInputs{HypervisorFlag: true, Cmdline: "-- --firecracker-init", DockerEnv: true}, "firecracker", "docker", "vm: firecracker, container: docker"},
		{"only the cpu flag: a VM, hypervisor unknown", virtInputs{HypervisorFlag: true}, "unknown hypervisor", "", "vm: unknown hypervisor"},
		{"kubernetes pod on bare metal", virtInputs{SelfCgroup: "0::/kubepods.slice/kubepods-pod1.slice"}, "", "kubernetes", "container: kubernetes"},
		{"podman marks its containers", virtInputs{PodmanEnv: true}, "", "podman", "container: podman"},
		{"docker seen only in the cgroup path (v1)", virtInputs{InitCgroup: "4:memory:/docker/abc"}, "", "docker", "container: docker"},
	}
	for _, tt := range tests {
		v := detectVirt(tt.in)
		if v.VM != tt.vm || v.Container != tt.container || v.String() != tt.text {
			t.Errorf("%s: got %+v (%q)", tt.why, v, v.String())
		}
		if (tt.vm != "" || tt.container != "") && len(v.Evidence) == 0 {
			t.Errorf("%s: no evidence recorded", tt.why)
		}
	}
}

func TestBytesHuman(t *testing.T) {
	for _, tt := range []struct {
		in   uint64
		want string
	}{{512, "512 B"}, {2048, "2.0 KiB"}, {1 << 30, "1.0 GiB"}, {8589930496, "8.0 GiB"}} {
		if got := bytesHuman(tt.in); got != tt.want {
			t.Errorf("bytesHuman(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
