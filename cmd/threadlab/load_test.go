package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/threadlab/threadlab/pipeline/load"
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
	for _, want := range []string{"closed model, 2 users, keep-alive @ http://127.0.0.1:", "/x1\n", "latency ms  p50 ", "Requests/sec: ", "X-Thread: 1 distinct values", "2 sockets opened"} {
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
  X-Thread: 1 distinct values
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
		{"CR LF in the URL path", []string{"--url", srv.URL + "/a\r\nX-Evil: 1", "--users", "1"}, "control or non-ASCII"},
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
	if err := runLoad(context.Background(), []string{"--url", srv.URL, "--burst", "3", "--json"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
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
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("run took %v, want it ended by the 500ms stall limit", took)
	}
	if !strings.Contains(stdout.String(), "STALLED: group load stalled: the target sent no response for") {
		t.Errorf("summary:\n%s\nwant a STALLED line", stdout.String())
	}
}
