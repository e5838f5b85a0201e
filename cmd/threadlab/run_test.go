package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/threadlab/threadlab/store/record"
)

// TestRunBadManifest: every malformed manifest exits 1 with file:line:col
// and the field, never a panic or a stack trace.
func TestRunBadManifest(t *testing.T) {
	tests := []struct {
		name, reason, yaml, want string
	}{
		{"unknown key", "typos are errors", "name: x\ntitle: t\nquestion: q\nvarients: {}\n", `bad.yaml:4:1: varients: unknown key "varients", did you mean "variants"?`},
		{"wrong type", "a list where a count belongs", "name: x\ntitle: t\nquestion: q\ntrials: [1]\n", "bad.yaml:4:9: trials: a list is not a number of forks (write a number like 5"},
		{"missing variants", "nothing to run", "name: x\ntitle: t\nquestion: q\nload: {burst: 5, requests: [{path: /}]}\n", "bad.yaml:1:1: variants: no variants"},
		{"negative trials", "a count below one", "name: x\ntitle: t\nquestion: q\ntrials: -2\nvariants: {a: {target: spring-mvc}}\nload: {burst: 5, requests: [{path: /}]}\n", "bad.yaml:4:9: trials: must be at least 1 (got -2)"},
		{"no port", "the command cannot be told where to listen", "name: x\ntitle: t\nquestion: q\nvariants: {a: {command: [srv, --port, 80]}}\nload: {burst: 5, requests: [{path: /}]}\n", "bad.yaml:4:25: variants.a.command: no argument contains {port}"},
		{"not yaml", "garbage", "\t:::\n", "bad.yaml: YAML syntax: found character that cannot start any token"},
		{"unclosed list", "broken YAML names its line", "name: [\n", "bad.yaml:1:1: YAML syntax: did not find expected node content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.yaml")
			os.WriteFile(path, []byte(tt.yaml), 0o644)
			var out, errb bytes.Buffer
			code := run(context.Background(), []string{"run", "--data", t.TempDir(), path}, &out, &errb)
			msg := strings.ReplaceAll(errb.String(), path, "bad.yaml")
			if code != 1 || !strings.Contains(msg, tt.want) {
				t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 1 and %q", tt.reason, code, msg, tt.want)
			}
			if strings.Contains(msg, "goroutine") || strings.Contains(msg, "panic") {
				t.Errorf("stack trace in output:\n%s", msg)
			}
		})
	}
}

func TestRunUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"run"}, &out, &errb); code != 2 {
		t.Errorf("run without a manifest: exit %d, want 2", code)
	}
	if code := run(context.Background(), []string{"run", "--nope", "x.yaml"}, &out, &errb); code != 2 {
		t.Errorf("unknown flag: exit %d, want 2", code)
	}
	if code := run(context.Background(), []string{"run", filepath.Join(t.TempDir(), "none.yaml")}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "does not exist") {
		t.Errorf("missing manifest: exit %d, %s", code, errb.String())
	}
}

// TestRunSmokeSpring runs the io-bound smoke profile against the real
// Spring Boot targets: three variants, real JVMs, real threads.
func TestRunSmokeSpring(t *testing.T) {
	if testing.Short() {
		t.Skip("starts JVMs")
	}
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"run", "--profile", "smoke", "--data", filepath.Join(dir, "data"), "--reports", filepath.Join(dir, "reports"),
		"--targets", "../../env/targets", "--run-id", "smoke", "../../experiments/io-bound.yaml"}
	if code := run(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	runDir := filepath.Join(dir, "data", "io-bound", "smoke")
	trials, err := record.ReadCSV[record.Trial](runDir, record.TrialsFile)
	if err != nil {
		t.Fatal(err)
	}
	byVariant := map[string][]record.Trial{}
	for _, tr := range trials {
		byVariant[tr.Variant] = append(byVariant[tr.Variant], tr)
		if tr.Requests != 300 || tr.Errors != 0 {
			t.Errorf("%s trial %d: %d requests, %d errors; want 300 answered", tr.Variant, tr.Trial, tr.Requests, tr.Errors)
		}
		if !processGone(tr.Pid) {
			t.Errorf("%s trial %d: target pid %d still running after the run", tr.Variant, tr.Trial, tr.Pid)
		}
	}
	for v, ts := range byVariant {
		for _, tr := range ts {
			// The X-Thread header proves which threading model served the burst.
			switch v {
			case "platform":
				if tr.DistinctThreads > 200 || tr.DistinctThreads < 20 {
					t.Errorf("platform used %d threads; want Tomcat's pool (<= 200)", tr.DistinctThreads)
				}
			case "virtual":
				if tr.DistinctThreads < 250 {
					t.Errorf("virtual used %d threads; want about one per request (300)", tr.DistinctThreads)
				}
			case "webflux":
				if tr.DistinctThreads > 16 {
					t.Errorf("webflux used %d threads; want the event loops (a handful)", tr.DistinctThreads)
				}
			}
		}
	}
	if len(byVariant) != 3 || len(trials) != 3 {
		t.Errorf("got %d trials over %d variants; want 1 per variant for platform, virtual, webflux", len(trials), len(byVariant))
	}
	// A real Spring Boot target serves Micrometer's JIT counter, which the
	// sampler reads into series.csv's jit_ms (a burst's second has one row),
	// and every window is preceded by the host speed probe.
	series, err := record.ReadCSV[record.Sample](runDir, record.SeriesFile)
	if err != nil {
		t.Fatal(err)
	}
	jit := map[string]bool{}
	for _, x := range series {
		jit[x.Variant] = jit[x.Variant] || x.JITMs.OK()
	}
	for v := range byVariant {
		if !jit[v] {
			t.Errorf("%s: no second of series.csv has jit_ms: jvm_compilation_time_ms_total was not read from the target", v)
		}
	}
	for _, tr := range trials {
		if tr.HostSpinNs <= 0 {
			t.Errorf("%s trial %d: host_spin_ns %v, want the host speed probe", tr.Variant, tr.Trial, tr.HostSpinNs)
		}
	}
	if !strings.Contains(out.String(), "report: ") || !strings.Contains(out.String(), "data:   ") {
		t.Errorf("the run does not say where its results are:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "reports", "io-bound", "smoke", "index.html")); err != nil {
		t.Errorf("no report: %v", err)
	}
}

// TestRunInterruptSpring cancels a real run while a JVM serves a trial:
// the JVM is stopped, finished trials are kept, the run says how to resume.
func TestRunInterruptSpring(t *testing.T) {
	if testing.Short() {
		t.Skip("starts JVMs")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runDir := filepath.Join(dir, "data", "io-bound", "int")
	go func() {
		// Cancel once the first trial is on disk and the second target is up.
		deadline := time.Now().Add(3 * time.Minute)
		for time.Now().Before(deadline) {
			trials, _ := record.ReadCSV[record.Trial](runDir, record.TrialsFile)
			logs, _ := filepath.Glob(filepath.Join(runDir, "logs", "002-*.log"))
			if len(trials) >= 1 && len(logs) == 1 {
				time.Sleep(2 * time.Second)
				cancel()
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		cancel()
	}()
	var out, errb bytes.Buffer
	args := []string{"run", "--profile", "smoke", "--data", filepath.Join(dir, "data"), "--reports", filepath.Join(dir, "reports"),
		"--targets", "../../env/targets", "--run-id", "int", "../../experiments/io-bound.yaml"}
	code := run(ctx, args, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "--resume") {
		t.Fatalf("interrupted run: exit %d, stderr:\n%s", code, errb.String())
	}
	var meta record.Meta
	if err := record.ReadJSON(runDir, record.RunFile, &meta); err != nil || meta.State != "interrupted" {
		t.Errorf("run.json state %q (%v), want interrupted", meta.State, err)
	}
	trials, _ := record.ReadCSV[record.Trial](runDir, record.TrialsFile)
	if len(trials) < 1 {
		t.Errorf("finished trials lost: %d rows", len(trials))
	}
	// No orphan JVM: every target started by this run is gone.
	logs, _ := filepath.Glob(filepath.Join(runDir, "logs", "0*.log"))
	if len(logs) < 2 {
		t.Fatalf("want the logs of at least 2 targets, got %v", logs)
	}
	for _, l := range logs {
		pid := javaPidFromLog(l)
		if pid == 0 {
			t.Errorf("%s does not record the target's pid", l)
		} else if !processGone(pid) {
			t.Errorf("orphan JVM pid %d (%s)", pid, l)
		}
	}
}

// javaPidFromLog reads the pid threadlab writes at the top of each target log.
func javaPidFromLog(path string) int {
	b, _ := os.ReadFile(path)
	i := bytes.Index(b, []byte("# threadlab: pid "))
	if i < 0 {
		return 0
	}
	rest := b[i+len("# threadlab: pid "):]
	j := bytes.IndexAny(rest, " \n")
	if j < 0 {
		return 0
	}
	pid, _ := strconv.Atoi(string(rest[:j]))
	return pid
}

func processGone(pid int) bool {
	if pid <= 0 {
		return true
	}
	for i := 0; i < 50; i++ {
		if err := syscall.Kill(pid, 0); err != nil {
			return true
		}
		// A zombie is gone for our purposes.
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && bytes.Contains(b, []byte(") Z ")) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// TestRunDryRun: --dry-run prints the plan and its estimate and runs
// nothing: no run directory, no process.
func TestRunDryRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.yaml")
	os.WriteFile(path, []byte(`name: plan
title: plan
question: what would it cost?
variants:
  a: {command: [srv, --port, "{port}"], ready: /health}
  b: {command: [srv, --port, "{port}"], ready: /health}
load: {model: closed, users: 2, duration: 4s, requests: [{path: /}]}
forks: 3
iterations: 2
`), 0o644)
	data := t.TempDir()
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"run", "--dry-run", "--data", data, path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"plan (profile default): 2 cell(s) x 3 fork(s) x 2 iteration(s) = 6 forks, 12 measured windows", "cells: a; b", "estimate: ", "(no earlier run"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out.String())
		}
	}
	if ents, _ := os.ReadDir(data); len(ents) != 0 {
		t.Errorf("a dry run wrote %d entries under --data: it must run nothing", len(ents))
	}
	if code := run(context.Background(), []string{"run", "--dry-run", "--resume", filepath.Join(data, "x")}, &out, &errb); code != 2 {
		t.Errorf("--dry-run with --resume: exit %d, want 2 (a usage error)", code)
	}
}

// TestReportsBeside: a run given --data alone writes its pages beside that
// data, never into the repository's published reports/.
func TestReportsBeside(t *testing.T) {
	tests := []struct {
		args []string
		want string
		why  string
	}{
		{nil, "reports", "no flags: the repository's data/ and reports/"},
		{[]string{"--data", "/tmp/x/data"}, "/tmp/x/reports", "a scratch run's pages go beside its data"},
		{[]string{"--data", "/tmp/x/data/"}, "/tmp/x/reports", "a trailing slash names the same folder"},
		{[]string{"--data", "/tmp/x/data", "--reports", "/srv/site"}, "/srv/site", "an explicit --reports wins"},
		{[]string{"--reports", "/srv/site"}, "/srv/site", "--reports alone is taken as given"},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		data := fs.String("data", "data", "")
		reports := fs.String("reports", "reports", "")
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if got := reportsBeside(fs, *data, *reports); got != tt.want {
			t.Errorf("%v: reports %q, want %q (%s)", tt.args, got, tt.want, tt.why)
		}
	}
}
