package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/threadlab/threadlab/env/supervise"
	"github.com/threadlab/threadlab/measure/fleet"
	"github.com/threadlab/threadlab/measure/load"
)

func loadServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Thread", "exec-"+r.URL.Path[len(r.URL.Path)-1:])
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestLoadJSON(t *testing.T) {
	srv := loadServer(t)
	for _, tc := range []struct {
		args []string
		why  string
		open bool
	}{
		{[]string{"--users", "4", "--duration", "200ms", "--header-count", "X-Thread"}, "closed model", false},
		{[]string{"--rate", "200", "--duration", "200ms", "--keepalive=false"}, "open model reports missed and late_pct", true},
		{[]string{"--burst", "20"}, "burst model", false},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"--url", srv.URL + "/t/{random 1..3}", "--json"}, tc.args...)
		if err := runLoad(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("%s: %v", tc.why, err)
		}
		var out map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || strings.Count(stdout.String(), "\n") != 1 {
			t.Fatalf("%s: want one JSON object on one line, got %q (%v)", tc.why, stdout.String(), err)
		}
		for _, k := range []string{"requests", "errors", "rps", "latency_ms", "generator_cpu_pct"} {
			if _, ok := out[k]; !ok {
				t.Errorf("%s: %q missing from %s", tc.why, k, stdout.String())
			}
		}
		for _, k := range []string{"p50", "p90", "p99", "p999", "max"} {
			if _, ok := out["latency_ms"].(map[string]any)[k]; !ok {
				t.Errorf("%s: latency_ms.%s missing", tc.why, k)
			}
		}
		_, hasMissed := out["missed"]
		_, hasLate := out["late_pct"]
		if hasMissed != tc.open || hasLate != tc.open {
			t.Errorf("%s: missed/late_pct present = %v/%v, want %v", tc.why, hasMissed, hasLate, tc.open)
		}
		if out["requests"].(float64) < 20 || out["errors"].(float64) != 0 {
			t.Errorf("%s: requests %v errors %v", tc.why, out["requests"], out["errors"])
		}
	}
}

func TestLoadHuman(t *testing.T) {
	srv := loadServer(t)
	var stdout, stderr bytes.Buffer
	err := runLoad(context.Background(), []string{"--url", srv.URL + "/x1", "--users", "2", "--duration", "100ms", "--header-count", "X-Thread"}, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"closed model, 2 users, keep-alive @ http://127.0.0.1:", "/x1\n", "latency ms  p50 ", "Requests/sec: ", "X-Thread: 1 distinct value\n", "2 sockets opened"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestLoadSummaryGolden pins the summary's format on a hand-made result.
func TestLoadSummaryGolden(t *testing.T) {
	h := hdrhistogram.New(1, 60_000_000, 3)
	for i := int64(1); i <= 1000; i++ {
		h.RecordValue(i * 1000) // 1..1000 ms
	}
	// HdrHistogram reports the top of the bucket a value falls in. With 3
	// digits, buckets are 256 us wide in [262144, 524288) us and 512 us wide
	// in [524288, 1048576) us:
	//   p50   = 500000 us -> [499968, 500224)  -> 500.223 ms
	//   p90   = 900000 us -> [899584, 900096)  -> 900.095 ms
	//   p99   = 990000 us -> [989696, 990208)  -> 990.207 ms
	//   p99.9 = 999000 us -> [998912, 999424)  -> 999.423 ms
	//   max  = 1000000 us -> [999936, 1000448) -> 1000.447 ms
	res := &load.Result{
		Groups: []load.GroupResult{{Name: "load", Model: load.Open, Requests: 1000, Errors: 3, Wall: 10 * time.Second, RPS: 100,
			ErrorsByClass: map[string]int64{"timeout": 1, "refused": 2, "reset": 0}, Latency: h,
			Headers: map[string]int64{"a": 1}, AskedRate: 100, AchievedRate: 99.5, Missed: 5, LatePct: 6.25}},
		Self: load.SelfCheck{CPUPct: 187.4, Cores: 2, Sockets: 12, Saturated: true, Reason: "group load sent 6.2% of requests more than 1ms late"},
	}
	spec := loadSpec{target: "http://127.0.0.1:8080", path: "/io", group: load.Group{Model: load.Open, Rate: 100, CountHeader: "X-Thread"}}
	var b bytes.Buffer
	printLoad(&b, spec, res, true)
	want := `open model, 100 requests/s, keep-alive @ http://127.0.0.1:8080/io
  latency ms  p50 500.223  p90 900.095  p99 990.207  p99.9 999.423  max 1000.447
  1000 requests in 10.00s, 3 errors (refused 2, timeout 1)
  asked 100.0/s, sent 99.5/s, missed 5 (in-flight cap), late 6.25% (>1ms behind schedule)
  X-Thread: 1 distinct value
Requests/sec: 100.00
Generator: 187% CPU of 2 cores, 12 sockets opened
WARNING: the generator was probably the bottleneck: group load sent 6.2% of requests more than 1ms late
(interrupted: partial results)
`
	if b.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestLoadUsageErrors(t *testing.T) {
	srv := loadServer(t)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String()
	ln.Close()
	for _, tc := range []struct {
		why  string
		args []string
		want string
	}{
		{"no scheme", []string{"--url", "127.0.0.1:8080", "--users", "1"}, "has no scheme"},
		{"nothing listening", []string{"--url", closed, "--users", "1"}, "cannot connect to"},
		{"rate 0", []string{"--url", srv.URL, "--rate", "0"}, "--rate 0: need a number of requests per second above 0"},
		{"negative duration", []string{"--url", srv.URL, "--users", "1", "--duration", "-1s"}, "--duration -1s"},
		{"no model", []string{"--url", srv.URL}, "exactly one of --users, --rate or --burst (got 0"},
		{"two models", []string{"--url", srv.URL, "--users", "1", "--burst", "2"}, "got 2: --users --burst"},
		{"no url", []string{"--users", "1"}, "--url is required"},
		{"unknown flag", []string{"--url", srv.URL, "--users", "1", "--connections", "5"}, "flag provided but not defined"},
		{"stray argument", []string{"--url", srv.URL, "--users", "1", "extra"}, `unexpected argument "extra"`},
		{"https", []string{"--url", "https://127.0.0.1:1", "--users", "1"}, "only plain http://"},
		{"bad template", []string{"--url", srv.URL + "/{random 9..1}", "--users", "1"}, "0 <= A <= B"},
		{"rate NaN used to run 0 requests and exit 0", []string{"--url", srv.URL, "--rate", "NaN"}, "--rate NaN: need a number of requests per second above 0"},
		{"rate +Inf", []string{"--url", srv.URL, "--rate", "Inf"}, "--rate +Inf"},
		{"negative rate", []string{"--url", srv.URL, "--rate", "-5"}, "--rate -5"},
		{"rate beyond what the pacer can time", []string{"--url", srv.URL, "--rate", "2e6"}, "at most 1e+06"},
		{"header without a colon", []string{"--url", srv.URL, "--users", "1", "--header", "X-Trace"}, "write it as 'Name: value'"},
		{"header value with a line break injects a header", []string{"--url", srv.URL, "--users", "1", "--header", "X-A: 1\r\nX-Evil: 2"}, "control character"},
		{"header name with a space", []string{"--url", srv.URL, "--users", "1", "--header", "X A: 1"}, "not an HTTP token"},
		{"header the generator sets", []string{"--url", srv.URL, "--users", "1", "--header", "Host: example.com"}, "set by the generator"},
		{"same header twice", []string{"--url", srv.URL, "--users", "1", "--header", "X-A: 1", "--header", "x-a: 2"}, "given twice"},
		{"CR LF in the URL path", []string{"--url", srv.URL + "/a\r\nX-Evil: 1", "--users", "1"}, "holds control character"},
	} {
		var stdout, stderr bytes.Buffer
		err := runLoad(context.Background(), tc.args, &stdout, &stderr)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: err = %v, want a usage error (exit 2)", tc.why, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q, want one line containing %q", tc.why, err, tc.want)
		}
		if code := run(context.Background(), append([]string{"load"}, tc.args...), &stdout, &stderr); code != 2 {
			t.Errorf("%s: exit code %d, want 2", tc.why, code)
		}
	}
}

func TestLoadRefusedMidRun(t *testing.T) {
	// The server goes away during the run: requests fail as refused (or
	// reset), are counted, and the command still prints its summary.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	time.AfterFunc(100*time.Millisecond, func() { srv.CloseClientConnections(); srv.Close() })
	var stdout, stderr bytes.Buffer
	if err := runLoad(context.Background(), []string{"--url", srv.URL, "--users", "2", "--duration", "300ms", "--json"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Requests, Errors int64
		ErrorsByClass    map[string]int64 `json:"errors_by_class"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Errors == 0 || out.ErrorsByClass["refused"] == 0 || out.Requests <= out.Errors {
		t.Errorf("requests=%d errors=%v, want successes and then refused connections", out.Requests, out.ErrorsByClass)
	}
}

// TestLoadHeaders: --header values reach the server as sent, like curl -H.
func TestLoadHeaders(t *testing.T) {
	got := make(chan http.Header, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Clone():
		default:
		}
	}))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	args := []string{"--url", srv.URL + "/", "--burst", "2", "--json",
		"--header", "Authorization: Bearer abc", "--header", "X-Trace-Id:42", "--header", "Accept:  text/plain  "}
	if err := runLoad(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	h := <-got
	for k, want := range map[string]string{"Authorization": "Bearer abc", "X-Trace-Id": "42", "Accept": "text/plain"} {
		if h.Get(k) != want {
			t.Errorf("server saw %s: %q, want %q (all: %v)", k, h.Get(k), want, h)
		}
	}
}

// TestLoadUnknownStatus: a status such as 999 is its own class, not http_5xx.
func TestLoadUnknownStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(999) }))
	defer srv.Close()
	var stdout, stderr bytes.Buffer
	// Every request failed, so the run exits 1 after printing its JSON.
	if err := runLoad(context.Background(), []string{"--url", srv.URL, "--burst", "3", "--json"}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "every one of the 3 requests failed (http_unknown 3)") {
		t.Fatalf("err = %v, want every request named as failed", err)
	}
	var out struct {
		ErrorsByClass map[string]int64 `json:"errors_by_class"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.ErrorsByClass["http_unknown"] != 3 || out.ErrorsByClass["http_5xx"] != 0 {
		t.Errorf("errors by class %v: want 3 http_unknown and no http_5xx", out.ErrorsByClass)
	}
}

// TestLoadOneRequestThroughput: one request's "throughput" is 1/latency;
// the command must say it has no meaningful rate rather than print one.
func TestLoadOneRequestThroughput(t *testing.T) {
	srv := loadServer(t)
	var stdout, stderr bytes.Buffer
	if err := runLoad(context.Background(), []string{"--url", srv.URL + "/x1", "--burst", "1", "--json"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if rps, ok := out["rps"]; !ok || rps != nil {
		t.Errorf("rps = %v (present %v), want null for a single request", rps, ok)
	}
	if note, _ := out["rps_note"].(string); !strings.Contains(note, "only 1 requests completed") {
		t.Errorf("rps_note = %q, want the reason", note)
	}
	stdout.Reset()
	if err := runLoad(context.Background(), []string{"--url", srv.URL + "/x1", "--burst", "1"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "Requests/sec: n/a (only 1 requests completed") {
		t.Errorf("summary:\n%s\nwant Requests/sec: n/a with the reason", stdout.String())
	}
}

// TestLoadStall: a server that accepts and never answers ends the run at
// the --stall limit, not at --duration, and the summary says so.
func TestLoadStall(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	err = runLoad(context.Background(), []string{"--url", "http://" + ln.Addr().String() + "/", "--users", "2",
		"--duration", "60s", "--timeout", "200ms", "--stall", "500ms"}, &stdout, &stderr)
	var ue usageError
	if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), "the target sent no response for") {
		t.Errorf("err = %v, want a failure (exit 1) that says the target stopped answering", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("run took %v, want it ended by the 500ms stall limit", took)
	}
	if !strings.Contains(stdout.String(), "STALLED: group load stalled: the target sent no response for") {
		t.Errorf("summary:\n%s\nwant a STALLED line", stdout.String())
	}
}

// agentTarget answers every request after 20 ms and counts them.
type agentTarget struct {
	*httptest.Server
	hits atomic.Int64
}

func newAgentTarget(t *testing.T) *agentTarget {
	s := &agentTarget{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		time.Sleep(20 * time.Millisecond)
		w.Write([]byte("ok"))
	}))
	t.Cleanup(s.Close)
	return s
}

// execAgent starts the real `threadlab load --agent` (this test binary with
// THREADLAB_TEST_MAIN=1 runs main), connected as ssh would connect it.
func execAgent(t *testing.T, name string) (fleet.Agent, *exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "load", "--agent")
	cmd.Env = append(os.Environ(), testMainEnv+"=1")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return fleet.Agent{Name: name, Stdin: in, Stdout: out}, cmd, stderr
}

// syncBuffer holds an agent's stderr, written by exec while the test reads it.
type syncBuffer = supervise.Buffer

// exited waits for an agent process to end on its own.
func exited(t *testing.T, why string, cmd *exec.Cmd, stderr *syncBuffer, within time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: the agent exited with %v; stderr: %s", why, err, stderr)
		}
	case <-time.After(within):
		t.Errorf("%s: the agent process still runs %v later; stderr: %s", why, within, stderr)
	}
}

// inProcessAgent is an agent in this process behind pipes.
func inProcessAgent(t *testing.T, name string) fleet.Agent {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		fleet.Serve(context.Background(), inR, outW)
		outW.Close()
		inR.Close()
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return fleet.Agent{Name: name, Stdin: inW, Stdout: outR}
}

// One real agent process against two generators (a process and one in this
// process) at the same total load: merged p50 and p99 agree within noise,
// and the merged count is what the server served. As in measure/fleet's
// TestOneVersusTwoGenerators, the two run side by side, each against its
// own server, so both see the same host.
func TestLoadAgentsOneVersusTwo(t *testing.T) {
	if testing.Short() {
		t.Skip("2 s of load")
	}
	group := load.Group{Name: "io", Model: load.Closed, Users: 16, Duration: 2 * time.Second, Requests: []load.Request{{Path: "/io"}}}
	run := func(why string, srv *agentTarget, agents []fleet.Agent, procs []*exec.Cmd, errs []*syncBuffer) load.GroupResult {
		res, offs, err := fleet.Drive(context.Background(), agents, load.Plan{Target: srv.URL, Seed: 1, Groups: []load.Group{group}})
		if err != nil {
			t.Errorf("%s: %v; agents' stderr: %v", why, err, errs)
			return load.GroupResult{}
		}
		g := res.Groups[0]
		if served := srv.hits.Load(); g.Requests != served || g.Errors != 0 {
			t.Errorf("%s: merged %d requests (%d errors), the server served %d", why, g.Requests, g.Errors, served)
		}
		if len(offs) != len(agents) {
			t.Errorf("%s: %d offsets for %d agents", why, len(offs), len(agents))
		}
		for _, o := range offs {
			// Same host, same clock: the estimate is within half the
			// round trip of 0 (plus a little for the read itself).
			if math.Abs(o.OffsetMs) > o.RTTMs/2+1 {
				t.Errorf("%s: agent %s clock offset %.3f ms with RTT %.3f ms on one host", why, o.Agent, o.OffsetMs, o.RTTMs)
			}
		}
		for i, p := range procs {
			exited(t, why+": after Drive", p, errs[i], 5*time.Second)
		}
		return g
	}
	srv1, srv2 := newAgentTarget(t), newAgentTarget(t)
	a1, p1, e1 := execAgent(t, "process-1")
	a2, p2, e2 := execAgent(t, "process-2")
	var one, two load.GroupResult
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		one = run("one generator", srv1, []fleet.Agent{a1}, []*exec.Cmd{p1}, []*syncBuffer{e1})
	}()
	go func() {
		defer wg.Done()
		two = run("two generators", srv2, []fleet.Agent{a2, inProcessAgent(t, "local")}, []*exec.Cmd{p2}, []*syncBuffer{e2})
	}()
	wg.Wait()
	if t.Failed() {
		return
	}
	// Agreement as in measure/fleet's agreeWithinNoise: the 99%
	// distribution-free intervals of each percentile (order statistics
	// n·p ± 2.58·√(n·p·(1−p))) overlap, give or take a slack for what
	// shifts a whole run together. That slack is wider here than there
	// (10% of the percentile, at least 0.5 ms, instead of 0.5 ms): these
	// generators are separate processes, which do not share their
	// scheduling pauses and GC as in-process agents do, and on this shared
	// 2-core host their p99s stood up to 1.5 ms (6%) apart.
	for _, q := range []float64{50, 99} {
		lo1, hi1 := quantileCI(one.Latency, q)
		lo2, hi2 := quantileCI(two.Latency, q)
		slack := max(0.5, 0.1*max(one.QuantileMs(q), two.QuantileMs(q)))
		t.Logf("p%g: 1 generator (process) %.3f ms [99%% CI %.3f, %.3f] of %d requests; 2 generators (process + in-process) %.3f ms [%.3f, %.3f] of %d",
			q, one.QuantileMs(q), lo1, hi1, one.Requests, two.QuantileMs(q), lo2, hi2, two.Requests)
		if lo1 > hi2+slack || lo2 > hi1+slack {
			t.Errorf("p%g: one generator [%.3f, %.3f] ms, two [%.3f, %.3f] ms: more than %.3f ms apart", q, lo1, hi1, lo2, hi2, slack)
		}
	}
	if r := float64(two.Requests) / float64(one.Requests); r < 0.9 || r > 1.1 {
		t.Errorf("%d requests with two generators, %d with one: not the same load", two.Requests, one.Requests)
	}
}

// quantileCI is the distribution-free 99% confidence interval of the q-th
// percentile of h's values, in ms.
func quantileCI(h *hdrhistogram.Histogram, q float64) (lo, hi float64) {
	n, p := float64(h.TotalCount()), q/100
	d := 2.58 * math.Sqrt(n*p*(1-p))
	return float64(h.ValueAtQuantile(max(0, 100*(n*p-d)/n))) / 1000,
		float64(h.ValueAtQuantile(min(100, 100*(n*p+d)/n))) / 1000
}

// The agent protocol from outside, and the lifeline: closing the agent
// process's stdin stops its load and ends the process.
func TestLoadAgentStdinClose(t *testing.T) {
	srv := newAgentTarget(t)
	a, cmd, stderr := execAgent(t, "p")
	r := bufio.NewReader(a.Stdout)
	io.WriteString(a.Stdin, `{"type":"ping","seq":1}`+"\n")
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("no pong: %v; stderr: %s", err, stderr)
	}
	var pong struct {
		Type    string
		Seq     int
		Version int
		Clock   int64
	}
	if err := json.Unmarshal([]byte(line), &pong); err != nil || pong.Type != "pong" || pong.Seq != 1 || pong.Version < 1 ||
		time.Since(time.Unix(0, pong.Clock)).Abs() > 5*time.Second {
		t.Fatalf("answer to a ping: %q (%v), want a pong #1 with a version and this host's clock", line, err)
	}
	job := fmt.Sprintf(`{"type":"job","job":{"target":%q,"seed":1,"start":%d,"groups":[{"Name":"g","Model":"closed","Users":4,"Duration":60000000000,"Requests":[{"Path":"/"}]}]}}`+"\n",
		srv.URL, time.Now().UnixNano())
	io.WriteString(a.Stdin, job)
	deadline := time.Now().Add(10 * time.Second)
	for srv.hits.Load() < 20 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if srv.hits.Load() < 20 {
		t.Fatalf("the agent's load did not reach the server; stderr: %s", stderr)
	}
	a.Stdin.Close()
	exited(t, "stdin closed during a one-minute job", cmd, stderr, 3*time.Second)
	h := srv.hits.Load()
	time.Sleep(200 * time.Millisecond)
	if more := srv.hits.Load() - h; more > 0 {
		t.Errorf("%d requests reached the server after the agent exited", more)
	}
}

func TestLoadAgentFlags(t *testing.T) {
	for _, args := range [][]string{{"--agent", "--users", "3"}, {"--url", "http://x", "--agent"}, {"--agent=true"}} {
		var stdout, stderr bytes.Buffer
		err := runLoad(context.Background(), args, &stdout, &stderr)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--agent takes no other flags") {
			t.Errorf("load %v: error %v, want a usage error saying --agent stands alone", args, err)
		}
	}
	var stdout, stderr bytes.Buffer
	if err := runLoad(context.Background(), []string{"-h"}, &stdout, &stderr); err != nil || strings.Contains(stderr.String(), "agent") {
		t.Errorf("load -h: %v; the hidden --agent mode shows in the help:\n%s", err, stderr.String())
	}
}

// TestLoadFailedRunExits1: a run whose every request failed, or that never
// saw the header it was asked to count, says so; one that measured nothing
// exits 1 (a script reading exit 0 would take it for a measurement).
func TestLoadFailedRunExits1(t *testing.T) {
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(failing.Close)
	for _, tc := range []struct {
		why     string
		url     string
		json    bool
		wantErr string // "" = success
		wantOut []string
	}{
		{"every request answered 503: no throughput, exit 1", failing.URL + "/", false,
			"every one of the", []string{"Requests/sec: n/a (every request failed)", "errors (http_5xx "}},
		{"the same in --json: rps null with the reason", failing.URL + "/", true,
			"every one of the", []string{`"rps":null`, `"rps_note":"every request failed"`}},
		{"a header that never comes is named, and the run is still a success", loadServer(t).URL + "/x1", false,
			"", []string{"X-Missing: in no response (is the name right?)", "Requests/sec: "}},
	} {
		var stdout, stderr bytes.Buffer
		args := []string{"--url", tc.url, "--users", "2", "--duration", "1100ms", "--header-count", "X-Missing"}
		if tc.json {
			args = append(args, "--json")
		}
		err := runLoad(context.Background(), args, &stdout, &stderr)
		var ue usageError
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: err = %v, want success", tc.why, err)
		case tc.wantErr != "" && (err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: err = %v, want a failure (exit 1) containing %q", tc.why, err, tc.wantErr)
		}
		for _, want := range tc.wantOut {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("%s: output lacks %q:\n%s", tc.why, want, stdout.String())
			}
		}
	}
}
