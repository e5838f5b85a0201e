package preflight

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
)

const limitsManifest = `name: limits
title: Host limits
question: Does the plan fit this host?
variants:
  small: {target: spring-mvc, jvm: [-Xmx256m]}
  big: {target: spring-webflux, jvm: ["%s"]}
sweep:
  users: {load: burst, values: [50, %d]}
load:
  model: burst
  burst: 10
  requests: [{path: /io}]
trials: 3
`

func limitsPlan(t *testing.T, heap string, users int) *experiments.Manifest {
	t.Helper()
	m, err := experiments.Parse("limits.yaml", []byte(fmt.Sprintf(limitsManifest, heap, users)), "")
	if err != nil && (m == nil || !experiments.HostOnly(err)) { // over this host's open files: still a plan
		t.Fatal(err)
	}
	return m
}

func TestLimitProblems(t *testing.T) {
	const gib = 1 << 30
	roomy := Allows{Ports: 28232, PortRange: "32768 60999", Mem: 20 * gib, MemFrom: "MemAvailable in /proc/meminfo"}
	tests := []struct {
		name  string
		heap  string
		users int
		host  Allows
		want  []string // substrings of the problems; none for a plan that fits
		why   string
	}{
		{"fits", "-Xmx2g", 2000, roomy, nil, "2,000 connections and a 2 GiB heap fit a roomy host"},
		{"unknown host", "-Xmx2g", 60000, Allows{}, nil, "a limit the host hides is never a refusal"},
		{"ports", "-Xmx2g", 30000, roomy,
			[]string{`ports: the load holds 30000 connections at once at users=30000, but net.ipv4.ip_local_port_range (32768 60999) gives the generator 28232 ports; fix: sudo sysctl -w net.ipv4.ip_local_port_range="1024 65535"`},
			"seed 002's 30k burst needs more ports than the default range"},
		{"more than any range", "-Xmx2g", 70000, roomy,
			[]string{"no port range holds that many from one client address (at most 64512)"},
			"past 64,512 no sysctl helps: the generator must move to more hosts"},
		{"heap", "-Xmx30g", 100, roomy,
			[]string{"memory: the plan needs at least 30.1 GiB at users=50", "lower -Xmx in variants.big.jvm to at most 19.9 GiB"},
			"a heap above the available memory is refused with the largest heap that fits"},
		{"heap size forms", "-XX:MaxHeapSize=32212254720", 100, roomy,
			[]string{"heap 30.0 GiB (-Xmx of big)"}, "-XX:MaxHeapSize in bytes is a heap too"},
		{"connections and memory", "-Xmx256m", 15000, Allows{Ports: 64512, PortRange: "1024 65535", Mem: 512 << 20, MemFrom: "MemAvailable in /proc/meminfo"},
			[]string{"memory: the plan needs at least 853 MiB at users=15000 (15000 connections x 32 KiB + heap 256 MiB"},
			"15,000 connections cost memory of their own"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Problems(limitsPlan(t, tt.heap, tt.users), tt.host)
			if (len(got) == 0) != (len(tt.want) == 0) || len(got) > 1 {
				t.Fatalf("problems %q, want %d saying %q (%s)", got, min(len(tt.want), 1), tt.want, tt.why)
			}
			for _, w := range tt.want {
				if !strings.Contains(got[0], w) {
					t.Errorf("problem %q\nwant it to say %q (%s)", got[0], w, tt.why)
				}
			}
		})
	}
}

func TestReadHostAllows(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/sys/net/ipv4/ip_local_port_range", "32768\t60999\n")
	write("proc/meminfo", "MemTotal:       24683008 kB\nMemAvailable:   20971520 kB\n")
	write("proc/self/cgroup", "0::/user.slice/run.scope\n")
	write("sys/fs/cgroup/user.slice/memory.max", "4294967296\n")
	write("sys/fs/cgroup/user.slice/memory.current", "1073741824\n")
	write("sys/fs/cgroup/user.slice/run.scope/memory.max", "max\n")
	a := Read(root)
	if a.Ports != 28232 || a.PortRange != "32768 60999" {
		t.Errorf("ports %d (%q), want 28232 from the range 32768-60999", a.Ports, a.PortRange)
	}
	// 20 GiB available, but the parent cgroup caps the run at 4 GiB of
	// which 1 GiB is in use: 3 GiB is what the plan may have.
	if a.Mem != 3<<30 || !strings.Contains(a.MemFrom, "user.slice/memory.max") {
		t.Errorf("memory %d from %q, want 3 GiB from the tightest cgroup limit less its use", a.Mem, a.MemFrom)
	}
	if empty := Read(t.TempDir()); empty != (Allows{}) {
		t.Errorf("an empty tree reads as %+v, want every limit unknown", empty)
	}
}

// TestCheck: a plan over the limits is refused with every problem on a
// line of its own and the words a user greps for; a resumed run without a
// readable manifest is left to resume, which says what is wrong.
func TestCheck(t *testing.T) {
	a := Read("/")
	if a.Mem == 0 {
		t.Skip("this host hides its available memory")
	}
	m := limitsPlan(t, fmt.Sprintf("-Xmx%dm", a.Mem>>20+1024), 100)
	err := Check(m, "")
	if err == nil || !strings.Contains(err.Error(), "this host cannot run limits as planned (refused before anything started):\n  - ") || !strings.Contains(err.Error(), "memory:") {
		t.Errorf("Check = %v; want a refusal naming memory", err)
	}
	if err := Check(nil, ""); err != nil {
		t.Errorf("Check(nil, \"\") = %v; want nil (no plan yet)", err)
	}
	if err := Check(nil, t.TempDir()); err != nil {
		t.Errorf("Check of a resume without a manifest = %v; want nil (resume reports it)", err)
	}
}
