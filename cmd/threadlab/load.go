package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/threadlab/threadlab/measure/fleet"
	"github.com/threadlab/threadlab/measure/load"
)

// agentStdin is where `load --agent` reads the controller's messages.
var agentStdin io.Reader = os.Stdin

func init() {
	register("load", "drive HTTP load at a URL and print latency and throughput (a wrk/hey replacement)", runLoad)
}

// loadSpec is what the flags asked for, checked.
type loadSpec struct {
	target, path string
	group        load.Group
	json         bool
}

// runLoad is threadlab's load generator on its own: one group, one URL.
// Interrupting it (Ctrl-C) prints what was measured so far.
//
// Hidden: `threadlab load --agent` is one generator of several driven by a
// controller (measure/fleet), usually through `ssh host threadlab load
// --agent`: the plan comes on stdin, the result goes to stdout, and it stops
// and exits when stdin closes.
func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	for _, a := range args {
		if a == "--agent" || a == "-agent" || strings.HasPrefix(a, "--agent=") || strings.HasPrefix(a, "-agent=") {
			if len(args) != 1 || a != "--agent" && a != "-agent" {
				return usagef("--agent takes no other flags or values: the controller sends the plan on stdin")
			}
			return fleet.Serve(ctx, agentStdin, stdout)
		}
	}
	spec, help, err := parseLoadFlags(args, stderr)
	if help || err != nil {
		return err
	}
	if err := reachable(ctx, spec.target, spec.group.ConnectTimeout); err != nil {
		return err
	}
	res, err := load.Run(ctx, load.Plan{Target: spec.target, Groups: []load.Group{spec.group}})
	if err != nil && res == nil {
		return usagef("%v", err)
	}
	interrupted := errors.Is(err, context.Canceled)
	if spec.json {
		out := loadJSON(res)
		out.Interrupted = interrupted
		if err := json.NewEncoder(stdout).Encode(out); err != nil {
			return err
		}
	} else {
		printLoad(stdout, spec, res, interrupted)
	}
	if why := failedRun(res.Groups[0]); why != "" && !interrupted {
		// The summary is printed, but a script (or CI gate) that runs
		// `threadlab load` must not read a run that measured nothing as a
		// success: exit 1, as k6 does when its checks fail.
		return errors.New(why)
	}
	return nil
}

// failedRun says why a run measured nothing about the server's answers: it
// stalled, no request completed, or every request failed. "" otherwise.
func failedRun(g load.GroupResult) string {
	switch {
	case g.Stalled != "":
		return g.Stalled
	case g.Requests == 0:
		return "no request completed"
	case g.Errors == g.Requests:
		return fmt.Sprintf("every one of the %d requests failed%s", g.Requests, classes(g.ErrorsByClass))
	}
	return ""
}

// rate is the throughput the summary prints: none when every request
// failed, since a rate of failures is not the server's throughput.
func rate(g load.GroupResult) (float64, string) {
	if g.Requests > 0 && g.Errors == g.Requests {
		return 0, "every request failed"
	}
	return g.Throughput()
}

func parseLoadFlags(args []string, stderr io.Writer) (loadSpec, bool, error) {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	rawURL := fs.String("url", "", "target URL, e.g. http://127.0.0.1:8080/io; the path may hold {random A..B}")
	users := fs.Int("users", 0, "closed model: concurrent users, each sending as soon as its last answer came")
	rate := fs.Float64("rate", 0, "open model: requests per second, latency timed from each intended send time")
	burst := fs.Int("burst", 0, "burst model: requests released at once; the run ends when all are answered")
	duration := fs.Duration("duration", 10*time.Second, "how long to send (closed and open)")
	keepAlive := fs.Bool("keepalive", true, "reuse connections; false opens a new TCP connection per request")
	headerCount := fs.String("header-count", "", "response header whose distinct values are counted, e.g. X-Thread")
	timeout := fs.Duration("timeout", 60*time.Second, "response timeout per request")
	connectTimeout := fs.Duration("connect-timeout", 5*time.Second, "TCP connect timeout")
	maxInFlight := fs.Int("max-in-flight", 0, "open model: cap on requests in flight; sends beyond it are missed (0 = 10000)")
	stall := fs.Duration("stall", 0, "end the run early when the target sends no response for this long (0 = max(5s, --timeout), negative = never)")
	var headers headerFlag
	fs.Var(&headers, "header", "request header 'Name: value', as in curl -H, wrk -H and hey -H; repeatable")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the summary")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: threadlab load --url URL (--users N | --rate R | --burst N) [--duration D] [--header 'Name: value']... [--keepalive=false] [--header-count X-Thread] [--timeout D] [--json]")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args, stderr); help || err != nil {
		return loadSpec{}, help, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var models []string
	for _, m := range []string{"users", "rate", "burst"} {
		if set[m] {
			models = append(models, "--"+m)
		}
	}
	switch {
	case fs.NArg() > 0:
		return loadSpec{}, false, usagef("unexpected argument %q: pass the target with --url", fs.Arg(0))
	case *rawURL == "":
		return loadSpec{}, false, usagef("--url is required, e.g. --url http://127.0.0.1:8080/")
	case len(models) != 1:
		return loadSpec{}, false, usagef("give exactly one of --users, --rate or --burst (got %d: %s)", len(models), strings.Join(models, " "))
	case set["users"] && *users <= 0:
		return loadSpec{}, false, usagef("--users %d: need at least 1 user", *users)
	case set["rate"] && !(*rate > 0 && *rate <= load.MaxRate): // written so that NaN fails too
		return loadSpec{}, false, usagef("--rate %g: need a number of requests per second above 0 and at most %g", *rate, float64(load.MaxRate))
	case set["burst"] && *burst <= 0:
		return loadSpec{}, false, usagef("--burst %d: need at least 1 request", *burst)
	case *duration <= 0:
		return loadSpec{}, false, usagef("--duration %v: need a positive duration such as 10s", *duration)
	case *timeout <= 0 || *connectTimeout <= 0:
		return loadSpec{}, false, usagef("--timeout and --connect-timeout must be positive durations such as 5s")
	case *maxInFlight < 0:
		return loadSpec{}, false, usagef("--max-in-flight %d: use 0 (default 10000) or more", *maxInFlight)
	}
	target, path, err := splitURL(*rawURL)
	if err != nil {
		return loadSpec{}, false, err
	}
	g := load.Group{
		Name:           "load",
		Duration:       *duration,
		Requests:       []load.Request{{Path: path, Headers: headers.m}},
		Stall:          *stall,
		NoKeepAlive:    !*keepAlive,
		CountHeader:    *headerCount,
		Timeout:        *timeout,
		ConnectTimeout: *connectTimeout,
		MaxInFlight:    *maxInFlight,
	}
	switch {
	case set["users"]:
		g.Model, g.Users = load.Closed, *users
	case set["rate"]:
		g.Model, g.Rate = load.Open, *rate
	default:
		g.Model, g.Burst = load.Burst, *burst
	}
	spec := loadSpec{target: target, path: path, group: g, json: *asJSON}
	if err := (load.Plan{Target: target, Groups: []load.Group{g}}).Validate(); err != nil {
		return loadSpec{}, false, usagef("%v", err)
	}
	return spec, false, nil
}

// headerFlag collects repeated --header 'Name: value' flags, checked as
// they come so a bad one is named on its own.
type headerFlag struct{ m map[string]string }

func (h *headerFlag) String() string { return "" }

func (h *headerFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	if !ok {
		return fmt.Errorf("%q has no colon: write it as 'Name: value', e.g. --header 'Accept: application/json'", s)
	}
	value = strings.Trim(value, " \t")
	if err := load.CheckHeader(name, value); err != nil {
		return err
	}
	for k := range h.m {
		if strings.EqualFold(k, name) {
			return fmt.Errorf("header %s given twice: put both values in one --header, separated by a comma", name)
		}
	}
	if h.m == nil {
		h.m = map[string]string{}
	}
	h.m[name] = value
	return nil
}

// splitURL separates scheme://host:port from the path, which is kept as
// typed: a template such as {random 1..10} is not a valid URL path.
func splitURL(raw string) (target, path string, err error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || scheme == "" {
		return "", "", usagef("--url %q has no scheme: write it as http://HOST:PORT/PATH", raw)
	}
	host, path := rest, "/"
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		host, path = rest[:i], rest[i:]
		if path[0] == '?' {
			path = "/" + path
		}
	}
	target = scheme + "://" + host
	if u, err := url.Parse(target); err != nil || u.Hostname() == "" {
		return "", "", usagef("--url %q has no valid host: write it as http://HOST:PORT/PATH", raw)
	}
	return target, path, nil
}

// reachable dials the target once, so a wrong port is a one-line usage
// error rather than a run in which every request is refused.
func reachable(ctx context.Context, target string, timeout time.Duration) error {
	u, _ := url.Parse(target)
	port := u.Port()
	if port == "" {
		port = "80"
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	d := net.Dialer{Timeout: min(timeout, 3*time.Second)}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return usagef("cannot connect to %s: %v (is the server running, is the port right?)", addr, unwrapOp(err))
	}
	return c.Close()
}

// unwrapOp drops net.OpError's "dial tcp ..." prefix, which repeats the address.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// loadOutput is the --json object. Open-model fields are pointers so that
// they are absent, not zero, for other models.
type loadOutput struct {
	Model           string           `json:"model"`
	Requests        int64            `json:"requests"`
	Errors          int64            `json:"errors"`
	ErrorsByClass   map[string]int64 `json:"errors_by_class"`
	RPS             *float64         `json:"rps"`                // requests / wall_s; null when that means nothing
	RPSNote         string           `json:"rps_note,omitempty"` // why rps is null
	WallS           float64          `json:"wall_s"`             // the window: first send to last answer
	LatencyMs       latencyMs        `json:"latency_ms"`
	GeneratorCPUPct float64          `json:"generator_cpu_pct"`
	Cores           int              `json:"cores"`
	Sockets         int64            `json:"sockets"`
	Saturated       bool             `json:"saturated"`
	Reason          string           `json:"reason,omitempty"`
	Headers         map[string]int64 `json:"headers,omitempty"`
	AskedRPS        *float64         `json:"asked_rps,omitempty"`
	AchievedRPS     *float64         `json:"achieved_rps,omitempty"`
	Missed          *int64           `json:"missed,omitempty"`
	LatePct         *float64         `json:"late_pct,omitempty"`
	Stalled         string           `json:"stalled,omitempty"`     // the target stopped answering; the run ended early
	Interrupted     bool             `json:"interrupted,omitempty"` // Ctrl-C: partial results
}

type latencyMs struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

func loadJSON(res *load.Result) loadOutput {
	g := res.Groups[0]
	o := loadOutput{
		Model:           g.Model,
		Requests:        g.Requests,
		Errors:          g.Errors,
		ErrorsByClass:   g.ErrorsByClass,
		WallS:           round3(g.Wall.Seconds()),
		LatencyMs:       latencies(g),
		GeneratorCPUPct: round3(res.Self.CPUPct),
		Cores:           res.Self.Cores,
		Sockets:         res.Self.Sockets,
		Saturated:       res.Self.Saturated,
		Reason:          res.Self.Reason,
		Headers:         g.Headers,
		Stalled:         g.Stalled,
	}
	if rps, why := rate(g); why == "" {
		rps = round3(rps)
		o.RPS = &rps
	} else {
		o.RPSNote = why
	}
	if g.Model == load.Open {
		asked, achieved, late := round3(g.AskedRate), round3(g.AchievedRate), round3(g.LatePct)
		o.AskedRPS, o.AchievedRPS, o.Missed, o.LatePct = &asked, &achieved, &g.Missed, &late
	}
	return o
}

func latencies(g load.GroupResult) latencyMs {
	l := latencyMs{P50: g.QuantileMs(50), P90: g.QuantileMs(90), P99: g.QuantileMs(99), P999: g.QuantileMs(99.9), Max: g.MaxMs()}
	if g.Latency != nil && g.Latency.TotalCount() > 0 {
		l.Mean = round3(g.Latency.Mean() / 1000)
	}
	return l
}

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

// printLoad writes a short summary in the spirit of wrk's.
func printLoad(w io.Writer, spec loadSpec, res *load.Result, interrupted bool) {
	g := res.Groups[0]
	what := map[string]string{
		load.Closed: fmt.Sprintf("%d users", spec.group.Users),
		load.Open:   fmt.Sprintf("%g requests/s", spec.group.Rate),
		load.Burst:  fmt.Sprintf("burst of %d", spec.group.Burst),
	}[g.Model]
	conns := "keep-alive"
	if spec.group.NoKeepAlive {
		conns = "new connection per request"
	}
	fmt.Fprintf(w, "%s model, %s, %s @ %s%s\n", g.Model, what, conns, spec.target, spec.path)
	l := latencies(g)
	fmt.Fprintf(w, "  latency ms  p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f\n", l.P50, l.P90, l.P99, l.P999, l.Max)
	fmt.Fprintf(w, "  %d requests in %.2fs, %d errors%s\n", g.Requests, g.Wall.Seconds(), g.Errors, classes(g.ErrorsByClass))
	if g.Model == load.Open {
		fmt.Fprintf(w, "  asked %.1f/s, sent %.1f/s, missed %d (in-flight cap), late %.2f%% (>1ms behind schedule)\n",
			g.AskedRate, g.AchievedRate, g.Missed, g.LatePct)
	}
	switch {
	case len(g.Headers) == 1:
		fmt.Fprintf(w, "  %s: 1 distinct value\n", spec.group.CountHeader)
	case len(g.Headers) > 1:
		fmt.Fprintf(w, "  %s: %d distinct values\n", spec.group.CountHeader, len(g.Headers))
	case spec.group.CountHeader != "":
		fmt.Fprintf(w, "  %s: in no response (is the name right?)\n", spec.group.CountHeader)
	}
	if rps, why := rate(g); why == "" {
		fmt.Fprintf(w, "Requests/sec: %.2f\n", rps)
	} else {
		fmt.Fprintf(w, "Requests/sec: n/a (%s)\n", why)
	}
	fmt.Fprintf(w, "Generator: %.0f%% CPU of %d cores, %d sockets opened\n", res.Self.CPUPct, res.Self.Cores, res.Self.Sockets)
	if res.Self.Saturated {
		fmt.Fprintf(w, "WARNING: the generator was probably the bottleneck: %s\n", res.Self.Reason)
	}
	if g.Stalled != "" {
		fmt.Fprintf(w, "STALLED: %s\n", g.Stalled)
	}
	if interrupted {
		fmt.Fprintln(w, "(interrupted: partial results)")
	}
}

// classes lists the non-zero error classes, e.g. " (refused 3, timeout 1)".
func classes(m map[string]int64) string {
	var parts []string
	for k, v := range m {
		if v > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, v))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	sort.Strings(parts)
	return " (" + strings.Join(parts, ", ") + ")"
}
