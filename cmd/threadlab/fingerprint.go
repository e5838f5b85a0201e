package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/env/targets"
	"github.com/threadlab/threadlab/store/record"
)

func init() {
	register("fingerprint", "print this host's fingerprint (cpu, kernel, cgroup, JDK, build), or compare it with a run's", runFingerprint)
}

// runFingerprint prints the fingerprint a run would record. With --compare
// it reads a run's fingerprint.json and lists what differs, those that can
// move the numbers first: the question to settle before comparing results
// measured elsewhere.
func runFingerprint(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fingerprint", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the fingerprint as JSON (the fingerprint.json of a run)")
	javaHome := fs.String("java-home", "", "the JDK to record (default: $JAVA_HOME if >= 21, else the newest JDK >= 21 under /usr/lib/jvm)")
	manifest := fs.String("manifest", "", "a manifest to hash into the fingerprint")
	compare := fs.String("compare", "", "a fingerprint.json to compare this host with")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: threadlab fingerprint [--json] [--java-home DIR] [--manifest FILE] [--compare fingerprint.json]")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args, stderr); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("fingerprint takes no arguments (got %q)", fs.Args())
	}
	var other *env.Fingerprint
	if *compare != "" {
		b, err := record.ReadUserFile(*compare, record.MaxMetaBytes)
		if err != nil {
			return fmt.Errorf("--compare: %w", err)
		}
		other = &env.Fingerprint{}
		if err := json.Unmarshal(b, other); err != nil {
			return fmt.Errorf("--compare %s: not a fingerprint.json: %w", *compare, err)
		}
		if other.Schema == 0 || other.CPU.Model == "" {
			// null, {} or another document: compared, every field would
			// read as a difference of this host.
			return fmt.Errorf("--compare %s: not a fingerprint.json (no schema or cpu.model): pass a run's fingerprint.json, or write one with threadlab fingerprint --json", *compare)
		}
	}
	home := *javaHome
	if home == "" {
		// FindJDK reads $JAVA_HOME itself and scans /usr/lib/jvm; no JDK is
		// not an error here: the fingerprint says so in its warnings.
		home, _, _ = targets.FindJDK()
	}
	fp, err := env.Collect(ctx, env.FingerprintOptions{JavaHome: home, ManifestPath: *manifest, RepoDir: "."})
	if err != nil {
		return err
	}
	switch {
	case other != nil && *asJSON:
		return writeJSON(stdout, env.Compare(other, fp))
	case other != nil:
		printDifferences(stdout, *compare, env.Compare(other, fp))
		return nil
	case *asJSON:
		return writeJSON(stdout, fp)
	}
	printFingerprint(stdout, fp)
	return nil
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func printFingerprint(w io.Writer, fp *env.Fingerprint) {
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%-28s %s\n", k, v)
		}
	}
	c := fp.CPU
	row("cpu", fmt.Sprintf("%s (%s), %d sockets, %d cores, %d threads", c.Model, c.Vendor, c.Sockets, c.Cores, c.Threads))
	var caches []string
	for _, x := range c.Caches {
		caches = append(caches, fmt.Sprintf("L%d %s %s", x.Level, strings.ToLower(x.Type), x.Size))
	}
	row("caches", strings.Join(caches, ", "))
	row("cpu flags", fmt.Sprintf("%d, hash %s; microcode %s", c.NumFlags, c.FlagsHash, c.Microcode))
	row("cpus", fmt.Sprintf("online %s, allowed %s; governor %s, boost %s, smt %s", c.Online, c.Allowed, orNone(c.Governor), orNone(c.Boost), orNone(c.SMT)))
	row("memory", fmt.Sprintf("%.1f GiB, swap %.1f GiB, thp %s", gib(fp.Memory.TotalBytes), gib(fp.Memory.SwapBytes), orNone(fp.Memory.THP)))
	row("kernel", fp.Kernel.Release+" "+fp.Kernel.Arch)
	row("distro", fp.Distro.PrettyName)
	row("virtualization", fp.Virtualization.String())
	cg := "no cpu quota"
	if fp.Cgroup.CPULimit > 0 {
		cg = fmt.Sprintf("cpu quota %.2f cpus", fp.Cgroup.CPULimit)
	}
	if fp.Cgroup.MemoryMax >= 0 {
		cg += fmt.Sprintf(", memory limit %.1f GiB", gib(uint64(fp.Cgroup.MemoryMax)))
	} else {
		cg += ", no memory limit"
	}
	row("cgroup", fmt.Sprintf("v%d %s: %s", fp.Cgroup.Version, fp.Cgroup.Path, cg))
	row("jdk", strings.TrimSpace(fmt.Sprintf("%s %s (%s) %s", fp.JDK.Vendor, fp.JDK.Version, fp.JDK.Runtime, fp.JDK.Home)))
	row("go", fp.Go)
	dirty := ""
	if fp.Threadlab.Dirty {
		dirty = " (dirty)"
	}
	row("threadlab", fmt.Sprintf("%s %s%s", fp.Threadlab.Version, fp.Threadlab.Commit, dirty))
	row("manifest", strings.TrimSpace(fp.Manifest.Path+" "+fp.Manifest.SHA256))
	row("hostname", fp.Hostname)
	for _, k := range []string{"net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_tw_reuse"} {
		row(k, fp.Sysctls[k])
	}
	for _, warn := range fp.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

func printDifferences(w io.Writer, path string, ds []env.Difference) {
	matters := 0
	for _, d := range ds {
		if d.Matters {
			matters++
		}
	}
	if matters == 0 {
		fmt.Fprintf(w, "comparable: nothing that matters differs between %s and this host (%d minor differences)\n", path, len(ds))
	} else {
		fmt.Fprintf(w, "not comparable: %d differences that can move the numbers between %s (a) and this host (b)\n", matters, path)
	}
	for _, d := range ds {
		mark := "minor  "
		if d.Matters {
			mark = "MATTERS"
		}
		fmt.Fprintf(w, "%s %-28s a: %s\n%s %-28s b: %s\n", mark, d.Field, orNone(d.A), strings.Repeat(" ", len(mark)), "", orNone(d.B))
	}
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func gib(b uint64) float64 { return float64(b) / (1 << 30) }
