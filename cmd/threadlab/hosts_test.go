package main

// Multi-host runs over real ssh, on fake hosts: network namespaces with an
// sshd each (scripts/netns-hosts.sh). Skipped only where this machine
// cannot make them (not root, namespaces refused, no sshd).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/threadlab/threadlab/internal/testenv"

	"github.com/threadlab/threadlab/env/remote/netnstest"
	"github.com/threadlab/threadlab/env/supervise"
	"github.com/threadlab/threadlab/env/targets"
	"github.com/threadlab/threadlab/store/record"
)

// srvJava is a small JDK HTTP server on virtual threads that calls the
// downstream service per request: a java target without a Maven build.
const srvJava = `import com.sun.net.httpserver.*;
import java.net.*;
import java.net.http.*;
import java.util.concurrent.*;

public class Srv {
  public static void main(String[] a) throws Exception {
    var client = HttpClient.newHttpClient();
    var down = URI.create(a[2] + "/enrich/1");
    var s = HttpServer.create(new InetSocketAddress(a[0], Integer.parseInt(a[1])), 1024);
    s.createContext("/health", x -> reply(x, "ok"));
    s.createContext("/", x -> {
      try {
        reply(x, client.send(HttpRequest.newBuilder(down).build(), HttpResponse.BodyHandlers.ofString()).body());
      } catch (Exception e) {
        x.sendResponseHeaders(502, -1);
        x.close();
      }
    });
    s.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    s.start();
  }

  static void reply(HttpExchange x, String body) throws java.io.IOException {
    byte[] b = body.getBytes();
    x.getResponseHeaders().add("X-Thread", Thread.currentThread().toString());
    x.sendResponseHeaders(200, b.length);
    x.getResponseBody().write(b);
    x.close();
  }
}
`

// hostsManifest writes a manifest whose target is Srv.java on the target
// host, calling the downstream service on the svc host.
func hostsManifest(t *testing.T, dir, duration string) string {
	t.Helper()
	jh, _, err := targets.FindJDK()
	testenv.Need(t, err, "a JDK >= 21", "install Temurin 25 or openjdk-21-jdk, or set JAVA_HOME")
	srv := filepath.Join(dir, "Srv.java")
	if err := os.WriteFile(srv, []byte(srvJava), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "hosts.yaml")
	os.WriteFile(p, []byte(fmt.Sprintf(`name: hosts
title: multi-host run
question: does a run over ssh place every role on its host?
services:
  downstream: {delay: 5ms}
variants:
  jdk-http:
    command: [%s, %s, "{address}", "{port}", "{downstream}"]
    ready: /health
load: {model: closed, users: 8, duration: %s, warmup: 1s, requests: [{path: /}]}
trials: 1
noise: {max_outside_pct: 100000, max_steal_pct: 100000}
cooldown: {max_busy_pct: 100, pause: 1ms}
startup: {timeout: 60s}
`, filepath.Join(jh, "bin", "java"), srv, duration)), 0o644)
	return p
}

// runOutput is a buffer the process writes and the test reads.
type runOutput = supervise.Buffer

func TestHostsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: starts sshd in network namespaces, builds threadlab and runs a JVM")
	}
	hs := netnstest.Up(t, "tlc", "10.79.0", "target", "load1", "load2", "svc")
	bin := netnstest.Threadlab(t)

	t.Run("smoke", func(t *testing.T) {
		dir := t.TempDir()
		manifest := hostsManifest(t, dir, "3s")
		var out runOutput
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "run", "--hosts", hs.Inventory, "--quiet", "--run-id", "r",
			"--data", filepath.Join(dir, "data"), "--reports", filepath.Join(dir, "reports"), manifest)
		cmd.Stdout, cmd.Stderr = &out, &out
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("threadlab run --hosts: %v\n%s", err, out.String())
		}
		t.Logf("run over 4 fake hosts in %s", time.Since(t0).Round(time.Second))
		runDir := filepath.Join(dir, "data", "hosts", "r")
		var meta record.Meta
		if err := record.ReadJSON(runDir, record.RunFile, &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Hosts == nil || len(meta.Hosts.Hosts) != 4 {
			t.Fatalf("run.json hosts = %+v, want 4 hosts", meta.Hosts)
		}
		roles := map[string]int{}
		for _, h := range meta.Hosts.Hosts {
			roles[h.Role]++
			if h.Platform != "linux/amd64" && h.Platform != "linux/arm64" || len(h.Fingerprint) == 0 || len(h.Check) == 0 || h.Address == "" {
				t.Errorf("host %s recorded without platform, fingerprint, check or address: %+v", h.SSH, h)
			}
		}
		if roles["target"] != 1 || roles["load"] != 2 || roles["downstream"] != 1 {
			t.Errorf("roles %v, want target 1, load 2, downstream 1", roles)
		}
		if len(meta.Hosts.RTT) != 2 || meta.Hosts.RTT[0].N == 0 || meta.Hosts.RTT[0].P50Ms <= 0 {
			t.Errorf("rtt to target = %+v, want one per load host", meta.Hosts.RTT)
		}
		t.Logf("rtt load->target: %+v (%s)", meta.Hosts.RTT, hs.Netem)
		t.Logf("clock offsets: %+v", meta.Hosts.Offsets)
		trials, err := record.ReadCSV[record.Trial](runDir, record.TrialsFile)
		if err != nil || len(trials) == 0 {
			t.Fatalf("trials: %v %v", trials, err)
		}
		for _, tr := range trials {
			if !tr.Valid || tr.Requests == 0 || tr.Errors > 0 {
				t.Errorf("trial %+v, want valid with requests and no errors", tr)
			}
			// Issue 25: read on the target host, the same columns as on one
			// machine, no flag; every host's noise measured there.
			if tr.TargetCPUPct <= 0 || tr.TargetRSSMB <= 0 || tr.TargetThreads <= 0 || tr.Flags != "" {
				t.Errorf("trial: target CPU %.1f%%, RSS %.0f MiB, %d threads, flags %q: want the target host's figures, no flag",
					tr.TargetCPUPct, tr.TargetRSSMB, tr.TargetThreads, tr.Flags)
			}
			if tr.TargetCPUSec <= 0 || tr.TargetCPUMsPerReq <= 0 { // read on the target host at the release and the last answer
				t.Errorf("trial: target CPU %v CPU-s, %v CPU-ms per request: want the target host's cumulative counters", tr.TargetCPUSec, tr.TargetCPUMsPerReq)
			}
			if n := strings.Count(tr.HostsNoise, "(steal "); n != 4 {
				t.Errorf("hosts_noise %q: want the figures of 4 hosts", tr.HostsNoise)
			}
			t.Logf("target CPU %.1f%% (%.4f CPU-s, %.4f CPU-ms a request), RSS %.0f MiB, %d threads; hosts: %s", tr.TargetCPUPct, tr.TargetCPUSec, tr.TargetCPUMsPerReq, tr.TargetRSSMB, tr.TargetThreads, tr.HostsNoise)
		}
		if n := len(meta.Hosts.Network); n != 6 {
			t.Errorf("network probe: %d links, want 6 (every pair of 4 hosts): %+v", n, meta.Hosts.Network)
		}
		for _, l := range meta.Hosts.Network {
			if l.Problems != "" || l.MbitS <= 0 || l.RTT.N == 0 {
				t.Errorf("network %s -> %s: %+v, want an RTT and a throughput", l.From, l.To, l)
			}
		}
		t.Logf("trial: %.0f rps, p50 %.2f ms, p99 %.2f ms, %d requests", trials[0].RPS, trials[0].P50Ms, trials[0].P99Ms, trials[0].Requests)
		log, _ := os.ReadFile(filepath.Join(runDir, trials[0].Log))
		if !strings.Contains(string(log), "on host target tlc-target") {
			t.Errorf("target log does not say where it ran:\n%s", log)
		}
		ds, _ := os.ReadFile(filepath.Join(runDir, "logs", "downstream.log"))
		if !strings.Contains(string(ds), "--address "+hs.Address["svc"]) {
			t.Errorf("downstream did not run on the svc host's address:\n%s", ds)
		}
		if s := hs.Strays(); len(s) > 0 {
			t.Errorf("processes left on the hosts after the run:\n%s", strings.Join(s, "\n"))
		}
	})

	t.Run("kill -9 mid-trial leaves nothing on any host", func(t *testing.T) {
		signalMidTrial(t, hs, bin, syscall.SIGKILL, 5*time.Second)
	})
	// Ctrl-C: the load agents, kept for the whole run, stop with the run.
	t.Run("SIGINT mid-trial leaves nothing on any host", func(t *testing.T) {
		signalMidTrial(t, hs, bin, syscall.SIGINT, 30*time.Second)
	})
}

// signalMidTrial starts a 60-second multi-host run, waits until the load
// agents and every remote program run, sends threadlab sig and checks that
// no host has a program of the run left within the given time after
// threadlab exited.
func signalMidTrial(t *testing.T, hs *netnstest.Hosts, bin string, sig syscall.Signal, within time.Duration) {
	dir := t.TempDir()
	manifest := hostsManifest(t, dir, "60s")
	var out runOutput
	cmd := exec.Command(bin, "run", "--hosts", hs.Inventory, "--quiet", "--run-id", "r",
		"--data", filepath.Join(dir, "data"), "--reports", filepath.Join(dir, "reports"), manifest)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
	}()
	// Under load: the generators run on the load hosts (a multi-host
	// run has no other way to generate its load).
	deadline := time.Now().Add(3 * time.Minute)
	for !contains(hs.Procs("load1"), "load --agent") {
		select {
		case <-exited:
			t.Fatalf("threadlab ended before the trial:\n%s", out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no trial after 3 min:\n%s", out.String())
		}
	}
	// Past the warm-up, into the measurement. The agents live for the
	// whole run (started at the warm-up's first round), but look again
	// until one is listed, at most 30 s, in case a failed load restarted
	// them just then.
	var before []string
	for wait := time.Now().Add(30 * time.Second); ; {
		time.Sleep(2 * time.Second)
		before = before[:0]
		for name := range hs.Namespace {
			for _, p := range hs.Procs(name) {
				before = append(before, name+": "+p)
			}
		}
		if contains(before, "load --agent") || time.Now().After(wait) {
			break
		}
	}
	t.Logf("processes on the hosts before %v:\n%s", sig, strings.Join(before, "\n"))
	for _, want := range []string{"Srv.java", "downstream --address", "load --agent"} {
		if !contains(before, want) {
			t.Fatalf("%q not running on any host before %v", want, sig)
		}
	}
	cmd.Process.Signal(sig)
	select {
	case <-exited:
	case <-time.After(within):
		t.Fatalf("threadlab still running %v after %v:\n%s", within, sig, out.String())
	}
	t0 := time.Now()
	var left []string
	for time.Since(t0) < 5*time.Second {
		if left = hs.Strays(); len(left) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("5 s after threadlab exited on %v, still running on the hosts:\n%s", sig, strings.Join(left, "\n"))
	} else {
		t.Logf("every host clean %s after threadlab exited on %v", time.Since(t0).Round(10*time.Millisecond), sig)
	}
}

// TestHostsPreflight: a run whose inventory names a host without a JDK, or
// one that does not answer, fails before any trial, naming the host and the fix.
func TestHostsPreflight(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: starts sshd in network namespaces")
	}
	hs := netnstest.Up(t, "tlq", "10.81.0", "nojdk:nojdk", "load1")
	bin := netnstest.Threadlab(t)
	dir := t.TempDir()
	cases := []struct {
		name, target string
		want         []string
	}{
		{"no jdk", "tlq-nojdk", []string{"host target tlq-nojdk: no JDK >= 21", "fix: install one there"}},
		{"unreachable", "ssh://root@" + hs.Address["load1"] + ":2", []string{"host target ssh://root@" + hs.Address["load1"] + ":2: unreachable", "Connection refused", "fix:"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv := filepath.Join(dir, c.name+".yaml")
			os.WriteFile(inv, []byte(fmt.Sprintf("ssh_config: %s\ntarget: %q\nload: [tlq-load1]\n", hs.SSHConfig, c.target)), 0o644)
			manifest := filepath.Join(dir, "m.yaml")
			os.WriteFile(manifest, []byte(`name: m
title: t
question: q
variants: {a: {target: spring-mvc}}
load: {model: closed, users: 1, duration: 1s, requests: [{path: /}]}
trials: 1
`), 0o644)
			var out bytes.Buffer
			cmd := exec.Command(bin, "run", "--hosts", inv, "--quiet", "--data", filepath.Join(dir, "data"), "--reports", filepath.Join(dir, "reports"), manifest)
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if err == nil {
				t.Fatalf("the run started:\n%s", out.String())
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if strings.Contains(out.String(), "== ") {
				t.Errorf("a stage ran before the hosts were ready:\n%s", out.String())
			}
			if runs, _ := filepath.Glob(filepath.Join(dir, "data", "m", "*")); len(runs) > 0 {
				t.Errorf("a refused run left run directories %v", runs)
			}
		})
	}
}

// TestRunHostsBadInventory: a broken hosts.yaml stops run before anything,
// with file:line:col, the field and the fix.
func TestRunHostsBadInventory(t *testing.T) {
	dir := t.TempDir()
	inv := filepath.Join(dir, "hosts.yaml")
	os.WriteFile(inv, []byte("target: {ssh: bench@10.0.0.2, password: x}\nload: [\"-oProxyCommand=sh\"]\n"), 0o644)
	manifest := filepath.Join(dir, "x.yaml")
	os.WriteFile(manifest, []byte("name: x\ntitle: t\nquestion: q\nvariants: {a: {command: [sleep, \"1\", \"{port}\"]}}\nload: {model: burst, burst: 1, requests: [{path: /}]}\n"), 0o644)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--hosts", inv, "--quiet", "--data", filepath.Join(dir, "data"), manifest}, &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, want := range []string{"the host inventory has 2 problem(s)", inv + ":1:31: target.password: threadlab never stores secrets", inv + ":2:8: load[0]", "would read as an option"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Errorf("data directory made for a refused run (%v)", err)
	}
}
