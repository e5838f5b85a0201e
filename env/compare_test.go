package env

import (
	"testing"
)

func baseFingerprint() *Fingerprint {
	return &Fingerprint{
		Hostname:   "a",
		CPU:        CPU{Model: "AMD EPYC", Vendor: "AuthenticAMD", Cores: 2, Threads: 2, Sockets: 1, Allowed: "0-1", FlagsHash: "6a93d771884cba54", Microcode: "0x1000065"},
		Memory:     Memory{TotalBytes: 24 << 30},
		Kernel:     Kernel{Release: "6.18.44", Arch: "amd64"},
		Cgroup:     Cgroup{CPULimit: 0, MemoryMax: -1},
		JDK:        JDK{Vendor: "Eclipse Adoptium", Version: "25.0.3"},
		JVMFlags:   []string{"-Xmx1g"},
		Components: map[string]string{"spring-boot": "4.0.7"},
		Sysctls:    map[string]string{"net.core.somaxconn": "4096"},
		Threadlab:  Build{Commit: "aaa"},
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		why     string
		change  func(*Fingerprint)
		field   string
		matters bool
	}{
		{"another CPU model", func(f *Fingerprint) { f.CPU.Model = "Intel Xeon" }, "cpu.model", true},
		{"fewer cores", func(f *Fingerprint) { f.CPU.Cores = 1 }, "cpu.cores", true},
		{"another JDK", func(f *Fingerprint) { f.JDK.Version = "21.0.5" }, "jdk.version", true},
		{"another kernel", func(f *Fingerprint) { f.Kernel.Release = "6.8.0" }, "kernel.release", true},
		{"a cpu quota appeared", func(f *Fingerprint) { f.Cgroup.CPULimit = 1.5 }, "cgroup.cpu_limit_cores", true},
		{"a memory limit appeared", func(f *Fingerprint) { f.Cgroup.MemoryMax = 1 << 30 }, "cgroup.memory_max_bytes", true},
		{"other JVM flags", func(f *Fingerprint) { f.JVMFlags = []string{"-Xmx4g"} }, "jvm_flags", true},
		{"another Spring Boot", func(f *Fingerprint) { f.Components["spring-boot"] = "4.1.2" }, "components.spring-boot", true},
		{"a component only one run recorded", func(f *Fingerprint) { f.Components["netty"] = "4.2.18.Final" }, "components.netty", true},
		{"same model, AVX-512 masked by the hypervisor", func(f *Fingerprint) { f.CPU.FlagsHash = "0000000000000000" }, "cpu.flags_hash", true},
		// 24 GiB vs 12 GiB: 50% apart, beyond the 10% tolerance: the default heap halves.
		{"half the memory", func(f *Fingerprint) { f.Memory.TotalBytes = 12 << 30 }, "memory.total_bytes", true},
		// 24 GiB vs 23.5 GiB: 2% apart, kernel reservations between boots.
		{"memory within 10%", func(f *Fingerprint) { f.Memory.TotalBytes = 24<<30 - 512<<20 }, "memory.total_bytes", false},
		{"microcode update", func(f *Fingerprint) { f.CPU.Microcode = "0x1000066" }, "cpu.microcode", false},
		{"another commit", func(f *Fingerprint) { f.Threadlab.Commit = "bbb" }, "threadlab.commit", false},
		{"another host name", func(f *Fingerprint) { f.Hostname = "b" }, "hostname", false},
		{"a sysctl", func(f *Fingerprint) { f.Sysctls["net.core.somaxconn"] = "128" }, "sysctls.net.core.somaxconn", false},
	}
	for _, tt := range tests {
		a, b := baseFingerprint(), baseFingerprint()
		tt.change(b)
		d := Compare(a, b)
		if len(d) != 1 {
			t.Errorf("%s: %d differences, want 1: %+v", tt.why, len(d), d)
			continue
		}
		if d[0].Field != tt.field || d[0].Matters != tt.matters || d[0].A == d[0].B {
			t.Errorf("%s: got %+v, want field %s matters %v", tt.why, d[0], tt.field, tt.matters)
		}
	}

	if d := Compare(baseFingerprint(), baseFingerprint()); len(d) != 0 {
		t.Errorf("identical fingerprints differ: %+v", d)
	}
	// Several at once: those that matter come first, whatever the field order.
	a, b := baseFingerprint(), baseFingerprint()
	b.Hostname, b.JDK.Vendor = "b", "Azul"
	if d := Compare(a, b); len(d) != 2 || d[0].Field != "jdk.vendor" || !d[0].Matters || d[1].Field != "hostname" || d[1].Matters {
		t.Errorf("ordering: %+v", d)
	}
	if d := Compare(a, nil); len(d) != 1 || !d[0].Matters || d[0].B != "missing" {
		t.Errorf("missing fingerprint: %+v", d)
	}
}
