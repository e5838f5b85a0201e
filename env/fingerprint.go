package env

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/threadlab/threadlab/store/record"
)

// Fingerprint is the machine and software a run was measured on, saved as
// fingerprint.json. Anything that could not be read is listed in Warnings
// instead of being guessed, so a blank field always has a reason.
type Fingerprint struct {
	Schema         int               `json:"schema"` // bumped when fields change meaning
	Time           time.Time         `json:"time"`
	Hostname       string            `json:"hostname"`
	CPU            CPU               `json:"cpu"`
	Memory         Memory            `json:"memory"`
	Kernel         Kernel            `json:"kernel"`
	Distro         Distro            `json:"distro"`
	Virtualization Virtualization    `json:"virtualization"`
	Cgroup         Cgroup            `json:"cgroup"`
	Sysctls        map[string]string `json:"sysctls"`
	NofileSoft     uint64            `json:"nofile_soft"`
	NofileHard     uint64            `json:"nofile_hard"`
	JDK            JDK               `json:"jdk"`
	JVMFlags       []string          `json:"jvm_flags"`
	// JVMSettings are the effective settings of the target JVM for each
	// distinct set of JVM options the run starts it with (-XX:+PrintFlagsFinal).
	JVMSettings []JVMSettings `json:"jvm_settings,omitempty"`
	// AOT lists the JDK AOT caches the targets start with; empty when the
	// run does not use them (aot_cache: false).
	AOT        []AOTCache        `json:"aot_cache,omitempty"`
	Components map[string]string `json:"components"` // Spring Boot, Tomcat, Netty, Reactor, HikariCP... of the built targets
	Go         string            `json:"go"`         // toolchain that built threadlab, e.g. go1.26.8 linux/amd64
	Threadlab  Build             `json:"threadlab"`
	Manifest   Manifest          `json:"manifest"`
	Warnings   []string          `json:"warnings,omitempty"`
}

// Identity names the processor as precisely as the fingerprint knows it:
// the model name, and with the family and model numbers when /proc/cpuinfo
// gave them ("AMD EPYC (family 25, model 17)"). The name alone does not
// tell a processor's generation on a cloud host: two runs of
// reactor-parallel on vCPUs both named "AMD EPYC", models 1 and 17 (L2
// 512 KB and 1 MB a core), served 142-175 and 336-348 req/s on one manifest.
func (c CPU) Identity() string {
	if c.Model == "" || c.Family == "" || c.ModelID == "" {
		return c.Model
	}
	return fmt.Sprintf("%s (family %s, model %s)", c.Model, c.Family, c.ModelID)
}

// CPU identifies the processor and how much of it this process may use.
type CPU struct {
	Model     string  `json:"model"`
	Vendor    string  `json:"vendor"`
	Family    string  `json:"family,omitempty"`
	ModelID   string  `json:"model_id,omitempty"`
	Stepping  string  `json:"stepping,omitempty"`
	Microcode string  `json:"microcode,omitempty"`
	Cores     int     `json:"cores"`   // physical
	Threads   int     `json:"threads"` // logical
	Sockets   int     `json:"sockets"`
	Online    string  `json:"online,omitempty"`  // kernel list syntax
	Allowed   string  `json:"allowed,omitempty"` // this process's affinity
	Caches    []Cache `json:"caches,omitempty"`
	FlagsHash string  `json:"flags_hash"` // sha256 of the sorted flags, first 16 hex digits: same hash, same instruction set
	NumFlags  int     `json:"num_flags"`
	Governor  string  `json:"governor,omitempty"`
	Boost     string  `json:"boost,omitempty"` // on, off, or empty when not exposed
	SMT       string  `json:"smt,omitempty"`   // /sys/devices/system/cpu/smt/control
}

// Memory is the host's memory as /proc/meminfo and sysfs report it.
type Memory struct {
	TotalBytes     uint64 `json:"total_bytes"`
	AvailableBytes uint64 `json:"available_bytes"`
	SwapBytes      uint64 `json:"swap_bytes"`
	HugePageBytes  uint64 `json:"huge_page_bytes,omitempty"`
	THP            string `json:"thp,omitempty"` // transparent_hugepage/enabled
}

// Kernel is uname plus the boot command line (mitigations= and isolcpus=
// change performance).
type Kernel struct {
	Release string `json:"release"`
	Version string `json:"version"`
	Arch    string `json:"arch"`
	Cmdline string `json:"cmdline"`
}

// Distro is what /etc/os-release says.
type Distro struct {
	ID         string `json:"id"`
	VersionID  string `json:"version_id"`
	PrettyName string `json:"pretty_name"`
}

// JDK is the Java runtime the targets run on.
type JDK struct {
	Home    string `json:"home"`
	Vendor  string `json:"vendor"`
	Version string `json:"version"`           // java.version, e.g. 25.0.3
	Runtime string `json:"runtime,omitempty"` // java.runtime.version, e.g. 25.0.3+9-LTS
	VM      string `json:"vm,omitempty"`      // java.vm.name
	Source  string `json:"source,omitempty"`  // "java -XshowSettings:properties" or "release file"
}

// Build is this threadlab binary's own identity.
type Build struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Dirty   bool   `json:"dirty"`
	Source  string `json:"source,omitempty"` // "build info" or "git"
}

// Manifest identifies the experiment definition exactly.
type Manifest struct {
	Path   string `json:"path,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
}

// FingerprintOptions says what Collect cannot find on its own.
type FingerprintOptions struct {
	JavaHome     string            // the JDK the targets run on; "" records no JDK (with a warning)
	JVMFlags     []string          // flags the targets are started with
	Components   map[string]string // versions of the built targets' libraries
	ManifestPath string            // hashed; "" when the fingerprint is taken outside a run
	RepoDir      string            // threadlab's source checkout, for the commit when build info has none (go test, go run)
	// JVMArgSets are the JVM option sets the targets start with (one per
	// variant, including the empty set); each distinct set is probed once
	// for its effective settings. Nil probes nothing.
	JVMArgSets [][]string
	AOT        []AOTCache // the AOT caches the run uses, recorded as given
}

// Collect takes the fingerprint of this host. It fails only when the
// context ends or when the manifest named in o cannot be read (a run must
// never be recorded against the wrong experiment); everything else missing
// becomes a warning.
func Collect(ctx context.Context, o FingerprintOptions) (*Fingerprint, error) {
	return liveHost().collect(ctx, o)
}

func (h host) collect(ctx context.Context, o FingerprintOptions) (*Fingerprint, error) {
	fp := &Fingerprint{Schema: 1, Time: time.Now().UTC(), Sysctls: map[string]string{},
		JVMFlags: append([]string{}, o.JVMFlags...), Components: map[string]string{},
		Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	warn := func(format string, a ...any) { fp.Warnings = append(fp.Warnings, fmt.Sprintf(format, a...)) }
	for k, v := range o.Components {
		fp.Components[k] = v
	}

	if o.ManifestPath != "" {
		sum, err := FileSHA256(o.ManifestPath)
		if err != nil {
			return nil, fmt.Errorf("fingerprint: hash manifest: %w (pass the manifest file the run uses)", err)
		}
		fp.Manifest = Manifest{Path: o.ManifestPath, SHA256: sum}
	}

	if hn, err := h.read("/proc/sys/kernel/hostname"); err == nil {
		fp.Hostname = hn
	} else if hn, err := os.Hostname(); err == nil && h.root == "/" {
		fp.Hostname = hn
	}

	info, err := h.cpuinfo()
	if err != nil {
		warn("cpu: %v", err)
	} else {
		fp.CPU = CPU{Model: info.Model, Vendor: info.Vendor, Family: info.Family, ModelID: info.ModelID,
			Stepping: info.Stepping, Microcode: info.Microcode, Cores: info.Cores, Threads: info.Threads,
			Sockets: info.Sockets, NumFlags: len(info.Flags), FlagsHash: flagsHash(info.Flags)}
	}
	fp.CPU.Online, _ = h.read("/sys/devices/system/cpu/online")
	if h.root == "/" {
		fp.CPU.Allowed = FormatCPUList(Allowed())
	}
	fp.CPU.Caches = h.caches()
	if g := h.governors(); len(g) > 0 {
		var names []string
		for n := range g {
			names = append(names, n)
		}
		sort.Strings(names)
		fp.CPU.Governor = strings.Join(names, ",")
	}
	if on, _, ok := h.boost(); ok {
		fp.CPU.Boost = map[bool]string{true: "on", false: "off"}[on]
	}
	fp.CPU.SMT, _ = h.read("/sys/devices/system/cpu/smt/control")

	if m, err := h.meminfo(); err != nil {
		warn("memory: %v", err)
	} else {
		fp.Memory = Memory{TotalBytes: m["MemTotal"], AvailableBytes: m["MemAvailable"], SwapBytes: m["SwapTotal"], HugePageBytes: m["Hugepagesize"]}
	}
	if v, err := h.read("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil {
		fp.Memory.THP = bracketed(v)
	}

	fp.Kernel = h.kernel()
	if fp.Kernel.Release == "" {
		warn("kernel: no /proc/sys/kernel/osrelease")
	}
	if d, err := h.distro(); err != nil {
		warn("distro: %v", err)
	} else {
		fp.Distro = d
	}
	fp.Virtualization = h.virtualization(info.Flags)
	fp.Cgroup = h.cgroup()
	for _, s := range fingerprintSysctls {
		if v, err := h.sysctl(s); err == nil {
			fp.Sysctls[s] = v
		}
	}
	if len(fp.Sysctls) == 0 {
		warn("sysctls: /proc/sys not readable")
	}
	if h.nofile != nil {
		if s, hd, err := h.nofile(); err == nil {
			fp.NofileSoft, fp.NofileHard = s, hd
		}
	}

	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	if o.JavaHome == "" {
		warn("jdk: no java home given (set JAVA_HOME or --java-home)")
	} else {
		jdk, err := ReadJDK(ctx, o.JavaHome)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("fingerprint: %w", ctx.Err())
			}
			warn("jdk: %v", err)
		}
		fp.JDK = jdk
		fp.JVMSettings = probeAll(ctx, o.JavaHome, o.JVMArgSets)
		for _, js := range fp.JVMSettings {
			if js.Error != "" {
				warn("jvm settings: %s", js.Error)
			}
		}
	}
	fp.AOT = append([]AOTCache(nil), o.AOT...)
	fp.Threadlab = build(ctx, o.RepoDir)
	if fp.Threadlab.Commit == "" {
		warn("threadlab: no vcs information in the binary and no git checkout given")
	}
	return fp, nil
}

// FileSHA256 is the hex SHA-256 of a file's content: a manifest in the
// fingerprint, a jar in its AOT cache key, a file shipped to a host.
func FileSHA256(path string) (string, error) {
	f, err := record.OpenUserFile(path) // a regular file: /dev/zero would hash forever, a named pipe block
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// flagsHash condenses the instruction-set flags: two hosts with the same CPU
// model can still differ (a hypervisor masking AVX-512), and that changes
// what the JIT emits.
func flagsHash(flags []string) string {
	if len(flags) == 0 {
		return ""
	}
	f := append([]string(nil), flags...)
	sort.Strings(f)
	sum := sha256.Sum256([]byte(strings.Join(f, " ")))
	return hex.EncodeToString(sum[:8])
}

func (h host) kernel() Kernel {
	k := Kernel{Arch: runtime.GOARCH}
	k.Release, _ = h.read("/proc/sys/kernel/osrelease")
	k.Version, _ = h.read("/proc/sys/kernel/version")
	k.Cmdline, _ = h.read("/proc/cmdline")
	return k
}

func (h host) distro() (Distro, error) {
	var f *os.File
	var err error
	for _, p := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		if f, err = os.Open(h.path(p)); err == nil {
			break
		}
	}
	if err != nil {
		return Distro{}, fmt.Errorf("no /etc/os-release or /usr/lib/os-release: %w", err)
	}
	defer f.Close()
	m, err := ParseOSRelease(f)
	if err != nil {
		return Distro{}, err
	}
	return Distro{ID: m["ID"], VersionID: m["VERSION_ID"], PrettyName: m["PRETTY_NAME"]}, nil
}

// ReadJDK identifies the JDK at home. It asks the JVM itself first
// (`java -XshowSettings:properties -version`: what actually runs, including
// a vendor's patched version string) and falls back to the JDK's release
// file when the binary cannot start. The error says what failed; the JDK is
// returned with whatever was learned.
func ReadJDK(ctx context.Context, home string) (JDK, error) {
	jdk := JDK{Home: home}
	java := filepath.Join(home, "bin", "java")
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, "-XshowSettings:properties", "-version")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out // the settings go to stderr
	runErr := cmd.Run()
	if runErr == nil {
		p := ParseJavaProperties(&out)
		jdk.Vendor, jdk.Version = p["java.vendor"], p["java.version"]
		jdk.Runtime, jdk.VM = p["java.runtime.version"], p["java.vm.name"]
		if jdk.Version != "" {
			jdk.Source = "java -XshowSettings:properties"
			return jdk, nil
		}
		runErr = errors.New("no java.version in its output")
	}
	f, err := os.Open(filepath.Join(home, "release"))
	if err != nil {
		return jdk, fmt.Errorf("run %s: %v; and no release file: %w (is %s a JDK?)", java, runErr, err, home)
	}
	defer f.Close()
	m, err := ParseOSRelease(f)
	if err != nil || m["JAVA_VERSION"] == "" {
		return jdk, fmt.Errorf("run %s: %v; release file has no JAVA_VERSION", java, runErr)
	}
	jdk.Vendor, jdk.Version, jdk.Runtime = m["IMPLEMENTOR"], m["JAVA_VERSION"], m["JAVA_RUNTIME_VERSION"]
	jdk.Source = "release file"
	return jdk, nil
}

// ParseJavaProperties reads the "Property settings:" block that
// `java -XshowSettings:properties -version` prints: "    key = value"
// lines, with multi-valued properties continued on indented lines without
// " = " (those continuations are ignored).
func ParseJavaProperties(r io.Reader) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "    ") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimSpace(line), " = ")
		if !ok || strings.ContainsAny(k, " \t") {
			continue
		}
		m[k] = v
	}
	return m
}

// build identifies this binary: the VCS stamp that `go build` embeds, or, for
// binaries without one (go test, go run), git in repoDir.
func build(ctx context.Context, repoDir string) Build {
	b := Build{Version: "(devel)"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit, b.Source = s.Value, "build info"
			case "vcs.modified":
				b.Dirty = s.Value == "true"
			}
		}
	}
	if b.Commit != "" || repoDir == "" {
		return b
	}
	git := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", repoDir}, args...)...).Output()
		return strings.TrimSpace(string(out)), err
	}
	if c, err := git("rev-parse", "HEAD"); err == nil {
		b.Commit, b.Source = c, "git"
		// Untracked files count, as in go build's vcs.modified, except
		// under data/ and reports/: what runs write, the running one's own
		// directory among them (created before this fingerprint), which
		// marked every published run dirty though built from a clean commit.
		if st, err := git("status", "--porcelain", "--", ".", ":(exclude)data", ":(exclude)reports"); err == nil {
			b.Dirty = st != ""
		}
	}
	return b
}
