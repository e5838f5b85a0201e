package fleet

import (
	"bufio"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/threadlab/threadlab/internal/testenv"
	"github.com/threadlab/threadlab/measure/load"
)

// sleepy is a target answering every request after d, counting them.
type sleepy struct {
	*httptest.Server
	hits atomic.Int64
}

func newSleepy(t *testing.T, d time.Duration) *sleepy {
	s := &sleepy{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		time.Sleep(d)
		w.Write([]byte("ok"))
	}))
	t.Cleanup(s.Close)
	return s
}

// pipeAgent runs an agent in this process (serve, with its clock skewed by
// skew) behind two pipes, as ssh would connect one. The channel gets
// serve's error when it returns.
func pipeAgent(t *testing.T, name string, skew time.Duration) (Agent, <-chan error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serve(context.Background(), inR, outW, quirks{skew: skew})
		outW.Close()
		inR.Close()
		done <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return Agent{Name: name, Stdin: inW, Stdout: outR}, done
}

// stopped waits for an agent to return, failing the test if it takes long.
func stopped(t *testing.T, why string, done <-chan error, within time.Duration) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: agent returned %v, want nil (its stdin closed)", why, err)
		}
	case <-time.After(within):
		t.Errorf("%s: agent still running %v after its stdin closed", why, within)
	}
}

// driven runs g on n in-process agents against srv and checks what must
// hold of any merged run: the merged count is the sum of the parts' and
// what the server served, nothing failed, and the parts started together.
func driven(t *testing.T, srv *sleepy, g load.Group, n int) load.GroupResult {
	t.Helper()
	var agents []Agent
	var dones []<-chan error
	for i := range n {
		a, done := pipeAgent(t, string(rune('a'+i)), 0)
		agents = append(agents, a)
		dones = append(dones, done)
	}
	before := srv.hits.Load()
	res, parts, offs, err := drive(context.Background(), agents, load.Plan{Target: srv.URL, Seed: 1, Groups: []load.Group{g}})
	if err != nil {
		t.Errorf("%d generators: %v", n, err) // not Fatal: tests run this off the test goroutine
		return load.GroupResult{}
	}
	served := srv.hits.Load() - before
	m := res.Groups[0]
	var sum int64
	for i, p := range parts {
		sum += p.Groups[0].Requests
		if p.Groups[0].Requests == 0 {
			t.Errorf("%d generators: generator %d sent nothing", n, i+1)
		}
		// One agreed instant: in one process the clocks are one, so the
		// starts differ by wake-up jitter only; 50 ms is far above it and
		// far below the one-second buckets the series are aligned on.
		if d := p.Start.Sub(parts[0].Start); d.Abs() > 50*time.Millisecond {
			t.Errorf("%d generators: generator %d started %v after generator 1", n, i+1, d)
		}
		if offs[i].Offset.Abs() > offs[i].RTT/2+time.Millisecond {
			t.Errorf("%d generators: agent %s offset %v, want 0 within half its RTT %v (one clock)", n, offs[i].Agent, offs[i].Offset, offs[i].RTT)
		}
	}
	if m.Requests != sum || m.Requests != served || m.Latency.TotalCount() != sum {
		t.Errorf("%d generators: merged %d requests (histogram %d), parts sum to %d, server served %d: all must agree",
			n, m.Requests, m.Latency.TotalCount(), sum, served)
	}
	if m.Errors != 0 {
		t.Errorf("%d generators: %d errors %v", n, m.Errors, m.ErrorsByClass)
	}
	for i, done := range dones {
		stopped(t, "after Drive returned, agent "+agents[i].Name, done, 5*time.Second)
	}
	return m
}

// One generator against two at the same total load: the merged percentiles
// agree with one generator's within noise, and the merged count is the sum.
//
// The two configurations run side by side, each against its own server
// (same handler, same process): on a shared 2-core host, a p99 measured a
// few seconds later is another host (here it moved from 24 to 172 ms
// between back-to-back runs of one configuration while other work
// compiled), while side by side both see the same hiccups, so what differs
// is only how the load was generated and merged.
func TestOneVersusTwoGenerators(t *testing.T) {
	if testing.Short() {
		t.Skip("4 s of load")
	}
	for _, g := range []load.Group{
		{Name: "closed", Model: load.Closed, Users: 16, Duration: 2 * time.Second, Requests: reqs()},
		{Name: "open", Model: load.Open, Rate: 400, Duration: 2 * time.Second, Requests: reqs()},
	} {
		srv1, srv2 := newSleepy(t, 20*time.Millisecond), newSleepy(t, 20*time.Millisecond)
		var one, two load.GroupResult
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); one = driven(t, srv1, g, 1) }()
		go func() { defer wg.Done(); two = driven(t, srv2, g, 2) }()
		wg.Wait()
		if t.Failed() {
			return
		}
		agreeWithinNoise(t, g.Name, one, two)
		if one.QuantileMs(50) < 20 || two.QuantileMs(50) < 20 {
			t.Errorf("%s: p50 below the server's 20 ms sleep: %.3f / %.3f ms", g.Name, one.QuantileMs(50), two.QuantileMs(50))
		}
		// The same load: the same number of requests, give or take what
		// a closed user has in flight at the end or an open send's phase.
		if r := float64(two.Requests) / float64(one.Requests); r < 0.9 || r > 1.1 {
			t.Errorf("%s: %d requests with two generators, %d with one: not the same load", g.Name, two.Requests, one.Requests)
		}
	}
}

// agreeWithinNoise checks that p50 and p99 of one and two generators agree
// within sampling noise: their distribution-free 99% confidence intervals
// overlap. The interval of the q-th percentile of n values runs between the
// order statistics n·p ± 2.58·√(n·p·(1−p)) (the normal approximation of the
// binomial count of values below the percentile): for 1,500 requests, p99
// lies between the 98.3rd and 99.7th percentiles and p50 between the 46.7th
// and 53.3rd. The tolerance thus follows from the number of requests
// instead of being a number of milliseconds that holds on one host only.
//
// Sampling is not the only noise: the server's 20 ms sleep wakes late by
// an amount that shifts a whole run together (Go's timers on a busy host:
// 0.1 to 0.3 ms here), which no interval over one run's values sees; p50,
// whose interval is a few tens of µs wide, moved by 0.06 ms between
// side-by-side runs. So the intervals may miss each other by up to 0.5 ms.
func agreeWithinNoise(t *testing.T, what string, one, two load.GroupResult) {
	t.Helper()
	const slack = 0.5 // ms
	for _, q := range []float64{50, 99} {
		lo1, hi1 := quantileCI(one.Latency, q)
		lo2, hi2 := quantileCI(two.Latency, q)
		t.Logf("%s p%g: 1 generator %.3f ms [99%% CI %.3f, %.3f] of %d requests; 2 generators %.3f ms [%.3f, %.3f] of %d",
			what, q, one.QuantileMs(q), lo1, hi1, one.Requests, two.QuantileMs(q), lo2, hi2, two.Requests)
		if lo1 > hi2+slack || lo2 > hi1+slack {
			t.Errorf("%s: p%g of one generator %.3f ms [%.3f, %.3f] and of two %.3f ms [%.3f, %.3f]: the 99%% intervals are more than 0.5 ms apart",
				what, q, one.QuantileMs(q), lo1, hi1, two.QuantileMs(q), lo2, hi2)
		}
	}
}

// quantileCI is the distribution-free 99% confidence interval of the q-th
// percentile of the values in h, in milliseconds (see agreeWithinNoise).
func quantileCI(h *hdrhistogram.Histogram, q float64) (lo, hi float64) {
	n, p := float64(h.TotalCount()), q/100
	d := 2.58 * math.Sqrt(n*p*(1-p))
	return float64(h.ValueAtQuantile(max(0, 100*(n*p-d)/n))) / 1000,
		float64(h.ValueAtQuantile(min(100, 100*(n*p+d)/n))) / 1000
}

// Clock offsets are measured and used: an agent whose clock is 3 s ahead
// and one 2 s behind start together with the controller's instant, and
// their results line up in the controller's clock.
//
// At any load: each offset is within half its round trip of the skew (the
// agent read its clock during the trip, so that bound is exact; the RTT
// grows with the load and the bound with it), Drive does not wait out a
// skew, the parts start well within one series second of each other, and
// the merged start is the earlier part's. That they start within 50 ms is
// the scheduler's doing (each agent wakes at its instant), so that bound
// is gated on the lag probe.
func TestDriveSkewedClocks(t *testing.T) {
	srv := newSleepy(t, time.Millisecond)
	ahead, d1 := pipeAgent(t, "ahead", 3*time.Second)
	behind, d2 := pipeAgent(t, "behind", -2*time.Second)
	g := load.Group{Name: "g", Model: load.Closed, Users: 2, Duration: 1500 * time.Millisecond, Requests: reqs()}
	probe := testenv.StartLagProbe(t)
	t0 := time.Now()
	res, parts, offs, err := drive(context.Background(), []Agent{ahead, behind}, load.Plan{Target: srv.URL, Groups: []load.Group{g}})
	if err != nil {
		t.Fatal(err)
	}
	// An agent that waited for its skewed clock would add 2 or 3 s.
	if took := time.Since(t0); took > g.Duration+2*time.Second {
		t.Errorf("Drive took %v for a %v load: an agent waited for its skewed clock", took, g.Duration)
	}
	for i, want := range []time.Duration{3 * time.Second, -2 * time.Second} {
		o := offs[i]
		if o.RTT <= 0 || (o.Offset-want).Abs() > o.RTT/2+100*time.Microsecond {
			t.Errorf("agent %s: offset %v (RTT %v), want %v within half the RTT", o.Agent, o.Offset, o.RTT, want)
		}
	}
	d := parts[1].Start.Sub(parts[0].Start)
	if d.Abs() >= 500*time.Millisecond {
		t.Errorf("in the controller's clock the agents started %v apart, want together (a skew left in would be 1 s or more)", d)
	}
	if !res.Start.Equal(minTime(parts[0].Start, parts[1].Start)) || res.Start.Before(t0) {
		t.Errorf("merged start %v, want the earlier part's start, after Drive began (%v)", res.Start, t0)
	}
	if n := len(res.Groups[0].Series); n > 3 {
		t.Errorf("merged series spans %d seconds for a 1.5 s load: the parts' seconds were not aligned", n)
	}
	stopped(t, "ahead", d1, 5*time.Second)
	stopped(t, "behind", d2, 5*time.Second)
	probe.SkipIfBusy(t, 500*time.Microsecond, "that the agents started within 50 ms")
	if d.Abs() > 50*time.Millisecond {
		t.Errorf("in the controller's clock the agents started %v apart, want within 50 ms", d)
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Closing an agent's stdin stops its load at once and ends it.
func TestStdinCloseStopsAgent(t *testing.T) {
	srv := newSleepy(t, 5*time.Millisecond)
	a, done := pipeAgent(t, "a", 0)
	go io.Copy(io.Discard, a.Stdout)
	line, err := encodeLine(message{Type: msgJob, Job: &wireJob{Target: srv.URL, Start: time.Now().UnixNano(),
		Groups: []load.Group{{Name: "g", Model: load.Closed, Users: 4, Duration: time.Minute, Requests: reqs()}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Stdin.Write(line); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the agent's load to reach the server", func() bool { return srv.hits.Load() > 20 })
	a.Stdin.Close()
	t0 := time.Now()
	stopped(t, "a minute-long job", done, 3*time.Second)
	t.Logf("agent stopped %v after its stdin closed", time.Since(t0))
	h := srv.hits.Load()
	time.Sleep(200 * time.Millisecond)
	// A request each of the 4 users wrote before the agent returned may
	// reach the handler later on a loaded host (a full go test ./... on 2
	// cores saw one); an agent still sending would add about 160 in 200 ms.
	if more := srv.hits.Load() - h; more > 4 {
		t.Errorf("%d requests reached the server after the agent returned, more than the 4 users' last ones already sent", more)
	}
}

// Cancelling Drive's context stops every agent and returns promptly.
func TestDriveCancel(t *testing.T) {
	srv := newSleepy(t, 5*time.Millisecond)
	a, d1 := pipeAgent(t, "a", 0)
	b, d2 := pipeAgent(t, "b", 0)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitFor(t, "load to reach the server", func() bool { return srv.hits.Load() > 20 })
		cancel()
	}()
	t0 := time.Now()
	_, offs, err := Drive(ctx, []Agent{a, b}, load.Plan{Target: srv.URL, Groups: []load.Group{
		{Name: "g", Model: load.Closed, Users: 4, Duration: time.Minute, Requests: reqs()}}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Drive cancelled: error %v, want context.Canceled", err)
	}
	if len(offs) != 2 || offs[0].Agent != "a" || offs[1].RTTMs <= 0 {
		t.Errorf("offsets %+v: want both agents' measured before the cancel", offs)
	}
	if took := time.Since(t0); took > 10*time.Second {
		t.Errorf("Drive returned %v after the start of a cancelled one-minute load", took)
	}
	stopped(t, "a", d1, 3*time.Second)
	stopped(t, "b", d2, 3*time.Second)
}

func waitFor(t *testing.T, what string, ok func() bool) {
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Errorf("gave up waiting for %s", what)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// scripted is a fake agent behind OS pipes (buffered, as a real process's
// are): for each line the controller sends, it writes what answer returns
// (nothing for ""), after writing answer("") first; it exits, closing both
// pipes, when answer returns "EOF".
func scripted(t *testing.T, name string, answer func(line string) string) Agent {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer outW.Close()
		defer inR.Close() // like a process that exits: writes to its stdin fail
		say := func(a string) bool {
			if a == "EOF" {
				return false
			}
			io.WriteString(outW, a)
			return true
		}
		if !say(answer("")) {
			return
		}
		sc := bufio.NewScanner(inR)
		for sc.Scan() {
			if !say(answer(sc.Text())) {
				return
			}
		}
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return Agent{Name: name, Stdin: inW, Stdout: outR}
}

// pong answers pings properly (clock in sync) and lets job answer jobs.
func pong(job string) func(string) string {
	return func(line string) string {
		if line == "" {
			return ""
		}
		m, err := decodeMessage([]byte(line))
		if err != nil {
			return `{"type":"error","error":"bad line"}` + "\n"
		}
		if m.Type == msgPing {
			b, _ := encodeLine(message{Type: msgPong, Seq: m.Seq, Version: protocolVersion, Clock: time.Now().UnixNano()})
			return string(b)
		}
		return job
	}
}

func TestDriveErrors(t *testing.T) {
	handshake := handshakeTimeout
	handshakeTimeout = time.Second
	t.Cleanup(func() { handshakeTimeout = handshake })
	srv := newSleepy(t, time.Millisecond)
	plan := load.Plan{Target: srv.URL, Groups: []load.Group{{Name: "g", Model: load.Closed, Users: 2, Duration: 30 * time.Second, Requests: reqs()}}}
	for _, tc := range []struct {
		why   string
		agent func() Agent // the second agent; the first is a real one
		plan  load.Plan
		err   string
	}{
		{"a shell that cannot find threadlab", func() Agent {
			return scripted(t, "nobin", func(string) string { return "bash: threadlab: command not found\n" })
		}, plan, `load agent nobin: not a protocol message`},
		{"an agent that exits at once", func() Agent {
			return scripted(t, "gone", func(string) string { return "EOF" })
			// Either the ping fails to go or its answer never comes,
			// whichever the race between the pipes decides.
		}, plan, "load agent gone: "},
		{"an agent that never answers", func() Agent {
			return scripted(t, "mute", func(string) string { return "" })
		}, plan, "waiting for mute: no answer within 1s"},
		{"an agent of another protocol version", func() Agent {
			return scripted(t, "old", func(line string) string {
				if line == "" {
					return ""
				}
				return `{"type":"pong","seq":1,"clock":1}` + "\n"
			})
		}, plan, "load agent old speaks protocol version 0"},
		{"an agent whose job fails", func() Agent {
			return scripted(t, "fails", pong(`{"type":"error","error":"load: plan holds 2 connections at once but RLIMIT_NOFILE is 1"}`+"\n"))
		}, plan, "load agent fails: load: plan holds 2 connections"},
		{"an agent answering a job with a pong", func() Agent {
			return scripted(t, "confused", pong(`{"type":"pong","seq":9,"version":1}`+"\n"))
		}, plan, `load agent confused: answered "pong" to its job`},
		{"two agents with one name", func() Agent {
			a, _ := pipeAgent(t, "real", 0)
			return a
		}, plan, `two load agents are named "real"`},
		{"a plan that cannot be split", func() Agent {
			a, _ := pipeAgent(t, "other", 0)
			return a
		}, load.Plan{Target: srv.URL, Groups: []load.Group{{Name: "g", Model: load.Burst, Burst: 1, Requests: reqs()}}},
			"group g: burst 1 cannot be split among 2 generators"},
	} {
		healthy, done := pipeAgent(t, "real", 0)
		t0 := time.Now()
		_, _, err := Drive(context.Background(), []Agent{healthy, tc.agent()}, tc.plan)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want one containing %q", tc.why, err, tc.err)
		}
		// The real agent is stopped with the failed one, not left to run
		// its 30-second share.
		stopped(t, tc.why+": the healthy agent", done, 3*time.Second)
		if took := time.Since(t0); took > 5*time.Second {
			t.Errorf("%s: Drive took %v to fail", tc.why, took)
		}
	}
	if _, _, err := Drive(context.Background(), nil, plan); err == nil || !strings.Contains(err.Error(), "no load agents") {
		t.Errorf("no agents: error %v", err)
	}
}

// The agent answers every line: a bad one with an error message, after
// which it still serves; a second job while one runs, or one whose start
// instant is long past or far ahead, with an error saying why.
func TestServeProtocol(t *testing.T) {
	srv := newSleepy(t, time.Millisecond)
	a, done := pipeAgent(t, "a", 0)
	r := bufio.NewReader(a.Stdout)
	job := func(start time.Time, d time.Duration) string {
		b, err := encodeLine(message{Type: msgJob, Job: &wireJob{Target: srv.URL, Start: start.UnixNano(),
			Groups: []load.Group{{Name: "g", Model: load.Closed, Users: 1, Duration: d, Requests: reqs()}}}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		why, send, want string // want: a substring of the answer
	}{
		{"a shell's noise", "Last login: Tue Dec  1\n", `"type":"error","error":"not a protocol message`},
		{"blank lines are skipped, then a ping", "\n  \n" + `{"type":"ping","seq":7}` + "\n", `{"type":"pong","seq":7,"version":2,"clock":`},
		{"a job long past its start", job(time.Now().Add(-time.Second), time.Second), "after its start instant (more than 250ms late)"},
		{"a job far ahead", job(time.Now().Add(time.Minute), time.Second), "s away (more than 30s): the clock offset measured for this host is wrong"},
		{"a short job", job(time.Now(), 300*time.Millisecond), `{"type":"result","result":{"start":`},
	} {
		if _, err := io.WriteString(a.Stdin, tc.send); err != nil {
			t.Fatalf("%s: %v", tc.why, err)
		}
		line, err := r.ReadString('\n')
		if err != nil || !strings.Contains(line, tc.want) {
			t.Errorf("%s: answer %.200q (%v), want one containing %q", tc.why, line, err, tc.want)
		}
	}
	// Two jobs at once: the second is refused while the first runs.
	io.WriteString(a.Stdin, job(time.Now(), 500*time.Millisecond)+job(time.Now(), 500*time.Millisecond))
	first, _ := r.ReadString('\n')
	second, _ := r.ReadString('\n')
	if !strings.Contains(first, "a job is already running") || !strings.Contains(second, `"type":"result"`) {
		t.Errorf("two jobs at once: answers %.100q then %.100q, want a refusal, then the first job's result", first, second)
	}
	a.Stdin.Close()
	stopped(t, "after the protocol test", done, 3*time.Second)
}
