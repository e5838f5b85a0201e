package fleet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/store/record"
)

// Agent is one generator process speaking the agent protocol on its stdin
// and stdout: `ssh host threadlab load --agent`, or a local exec of the same
// binary. Name identifies it in errors, in its clock offset and in merged
// self-check reasons (a host name, say).
type Agent struct {
	Name   string
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
}

// measured is an agent's clock minus the controller's (positive: the
// agent's clock is ahead), estimated NTP-style from the ping/pong round trip
// with the smallest RTT; the true offset lies within ±RTT/2 of it. RTT 0
// means no round trip completed (the agent failed before answering a ping).
// Drive hands it on as the run record's record.ClockOffset.
type measured struct {
	Agent       string
	Offset, RTT time.Duration
}

// clockOffsets turns the measured offsets into the run record's form.
func clockOffsets(offs []measured) []record.ClockOffset {
	if offs == nil {
		return nil
	}
	out := make([]record.ClockOffset, len(offs))
	for i, m := range offs {
		out[i] = record.ClockOffset{Agent: m.Agent, OffsetMs: millis(m.Offset), RTTMs: millis(m.RTT)}
	}
	return out
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Pings per agent: the fastest of these round trips gives the offset. The
// first ones also absorb a slow start (ssh connecting, the binary loading).
const pings = 8

// handshakeTimeout bounds the pings: an agent that does not answer by then
// is not running (wrong binary, a shell that printed something else, a dead
// host).
var handshakeTimeout = 60 * time.Second

// Drive runs plan once on the agents together and returns the merged
// result: Open, one Run and Close. The agents exit when it returns, so
// start new ones for the next run; a run of many trials keeps one Fleet
// (Open) instead, so no agent starts or exits inside a trial's window.
// The offsets measured are returned in every case, for the run record (an
// RTT of 0 marks an agent that answered no ping).
func Drive(ctx context.Context, agents []Agent, plan load.Plan) (*load.Result, []record.ClockOffset, error) {
	res, _, offs, err := drive(ctx, agents, plan)
	return res, clockOffsets(offs), err
}

// drive is Drive that also returns each agent's own result (in the
// controller's clock), for tests.
func drive(ctx context.Context, agents []Agent, plan load.Plan) (*load.Result, []*load.Result, []measured, error) {
	f, offs, err := open(ctx, agents)
	if err != nil {
		return nil, nil, offs, err
	}
	defer f.Close()
	res, parts, roffs, err := f.run(ctx, plan, Hooks{})
	if roffs == nil {
		roffs = offs
	}
	return res, parts, roffs, err
}

// Fleet is load agents that live for a whole run (issue 25): started once
// (over ssh, one per load host), handed one plan after another by Run, and
// stopped by Close. An agent that started or exited inside a trial's
// sampling window would leave the target idle while it starts and its own
// CPU to "outside threadlab" once /proc no longer lists it; a Fleet's
// agents do neither.
//
// A Fleet runs one plan at a time. When a Run fails (an agent's error, its
// exit, ctx's end) every agent is stopped, as Drive stops them, and Err
// says why: open a new Fleet for the next trial.
type Fleet struct {
	conns []*conn
	names []string

	mu     sync.Mutex
	busy   bool
	closed bool
	err    error // why the agents are stopped
}

// Hooks are called by Run at the load's edges, on the controller's clock:
// Release when the agents release their load (the agreed start instant,
// or a split burst's release instant after it: firstRelease), Done once
// the last agent has answered. Done is called only when
// Release was. They bound the trial's sampling windows (pipeline
// hostsample.go): not the job's transfer before, nor the pings.
type Hooks struct {
	Release func()
	Done    func()
}

// Pings per agent before each Run's job: the agents are running already,
// so a few round trips measure the offset afresh (a clock may drift or
// step over a long run).
const runPings = 4

// Open connects to running agents: it checks their names and streams and
// measures each agent's clock offset (pings round trips, within
// handshakeTimeout). On an error every agent's stdin and stdout are closed
// (the agents exit) and the offsets measured so far are returned.
func Open(ctx context.Context, agents []Agent) (*Fleet, []record.ClockOffset, error) {
	f, offs, err := open(ctx, agents)
	return f, clockOffsets(offs), err
}

func open(ctx context.Context, agents []Agent) (*Fleet, []measured, error) {
	f := &Fleet{}
	fail := func(err error) (*Fleet, []measured, error) {
		for _, a := range agents {
			closeAgent(a)
		}
		return nil, nil, err
	}
	if len(agents) == 0 {
		return fail(fmt.Errorf("no load agents: give at least one"))
	}
	seen := map[string]bool{}
	for i, a := range agents {
		name := a.Name
		if name == "" {
			name = fmt.Sprintf("agent %d", i+1)
		}
		if seen[name] {
			return fail(fmt.Errorf("two load agents are named %q: give each its own name", name))
		}
		seen[name] = true
		if a.Stdin == nil || a.Stdout == nil {
			return fail(fmt.Errorf("load agent %s has no stdin or stdout", name))
		}
		f.names = append(f.names, name)
		f.conns = append(f.conns, &conn{name: name, a: a, r: bufio.NewReaderSize(a.Stdout, 64<<10)})
	}
	wctx, cancel, stop := f.watch(ctx)
	offs, err := f.measure(wctx, cancel, pings)
	stop(err)
	if err != nil {
		return nil, offs, err
	}
	return f, offs, nil
}

func closeAgent(a Agent) {
	if a.Stdin != nil {
		a.Stdin.Close()
	}
	if a.Stdout != nil {
		a.Stdout.Close()
	}
}

// Names are the agents' names, in the order given to Open.
func (f *Fleet) Names() []string { return slices.Clone(f.names) }

// Err is why the agents are stopped (a failed Run, Close), or nil while
// they run.
func (f *Fleet) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Close stops every agent: their stdin and stdout close, so each stops
// its load (if any) and exits. Closing twice does nothing.
func (f *Fleet) Close() { f.shut(errors.New("the load agents were closed")) }

// shut closes every agent's streams once, keeping the first reason.
func (f *Fleet) shut(why error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = why
	}
	done := f.closed
	f.closed = true
	f.mu.Unlock()
	if done {
		return
	}
	for _, c := range f.conns {
		closeAgent(c.a)
	}
}

// watch returns a context for one exchange with the agents: when it ends
// before stop (ctx's end, or cancel on a failure), every agent is closed,
// which wakes whatever reads or writes them. stop(err) ends the watch; a
// non-nil err becomes the fleet's Err.
func (f *Fleet) watch(ctx context.Context) (context.Context, context.CancelFunc, func(error)) {
	ctx, cancel := context.WithCancel(ctx)
	var over atomic.Bool
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		<-ctx.Done()
		if !over.Load() {
			f.shut(fmt.Errorf("the load agents were stopped: %w", context.Cause(ctx)))
		}
	}()
	return ctx, cancel, func(err error) {
		if err != nil {
			f.mu.Lock()
			f.err = err // the failure itself, not the "stopped" of its cancel
			f.mu.Unlock()
			f.shut(err)
		}
		over.Store(true)
		cancel()
		<-exited
	}
}

// measure measures every agent's clock offset at once, n round trips each,
// within handshakeTimeout.
func (f *Fleet) measure(ctx context.Context, cancel context.CancelFunc, n int) ([]measured, error) {
	offs := make([]measured, len(f.conns))
	hctx, hcancel := context.WithTimeoutCause(ctx, handshakeTimeout, fmt.Errorf("no answer within %v", handshakeTimeout))
	defer hcancel()
	err := each(hctx, cancel, f.conns, func(i int, c *conn) error {
		o, err := c.offset(n)
		offs[i] = o
		return err
	})
	return offs, err
}

// Run runs plan on the agents together and returns the merged result.
//
// It splits every group of the plan among the agents (Split; agent i gets
// seed plan.Seed+i), measures each agent's clock offset afresh (runPings
// round trips each, the one with the smallest RTT kept), picks one start
// instant a little ahead of now (lead: 250 ms plus four of the slowest
// agent's best round trips) and sends each agent its share with that
// instant in the agent's own clock. It calls h.Release when the first
// share leaves (firstRelease after that instant), waits for every result,
// calls h.Done, converts each result's Start to
// the controller's clock and merges them (Merge, with the agents' names).
// plan.OnTick is not called: progress stays with the agents.
//
// When ctx ends, or any agent fails, every agent is stopped at once (Err
// says why) and Run returns the error; the offsets measured are returned
// in every case, for the run record.
func (f *Fleet) Run(ctx context.Context, plan load.Plan, h Hooks) (*load.Result, []record.ClockOffset, error) {
	res, _, offs, err := f.run(ctx, plan, h)
	return res, clockOffsets(offs), err
}

func (f *Fleet) run(ctx context.Context, plan load.Plan, h Hooks) (res *load.Result, parts []*load.Result, offs []measured, err error) {
	f.mu.Lock()
	switch {
	case f.err != nil:
		err = fmt.Errorf("the load agents cannot run another load: %w", f.err)
	case f.busy:
		err = errors.New("the load agents are running another load: one Run at a time")
	}
	if err == nil {
		f.busy = true
	}
	f.mu.Unlock()
	if err != nil {
		return nil, nil, nil, err
	}
	defer func() {
		f.mu.Lock()
		f.busy = false
		f.mu.Unlock()
	}()
	plans, err := splitPlan(plan, len(f.conns))
	if err != nil {
		return nil, nil, nil, err // nothing was sent: the agents stay
	}
	ctx, cancel, stop := f.watch(ctx)
	defer func() { stop(err) }()

	if offs, err = f.measure(ctx, cancel, runPings); err != nil {
		return nil, nil, offs, err
	}
	var slowest time.Duration
	for _, o := range offs {
		slowest = max(slowest, o.RTT)
	}
	start := time.Now().Add(250*time.Millisecond + 4*slowest)
	released := make(chan struct{})
	timer := time.AfterFunc(time.Until(start.Add(firstRelease(plans))), func() {
		defer close(released)
		if h.Release != nil {
			h.Release()
		}
	})
	parts = make([]*load.Result, len(f.conns))
	err = each(ctx, cancel, f.conns, func(i int, c *conn) error {
		p := plans[i]
		job := &wireJob{Target: p.Target, Seed: p.Seed, Groups: p.Groups, Start: start.Add(offs[i].Offset).UnixNano()}
		if err := c.send(message{Type: msgJob, Job: job}); err != nil {
			return err
		}
		m, err := c.recv()
		if err != nil {
			return err
		}
		if m.Type != msgResult {
			return fmt.Errorf("load agent %s: answered %q to its job, want %q", c.name, m.Type, msgResult)
		}
		r, err := fromWire(m.Result)
		if err != nil {
			return fmt.Errorf("load agent %s: %w", c.name, err)
		}
		r.Start = r.Start.Add(-offs[i].Offset) // into the controller's clock
		parts[i] = r
		return nil
	})
	if !timer.Stop() { // released: the window closes at the last answer
		<-released
		if h.Done != nil {
			h.Done()
		}
	}
	if err != nil {
		return nil, nil, offs, err
	}
	res, err = merge(parts, f.names)
	return res, parts, offs, err
}

// firstRelease is when the first request of the split plans can leave,
// as an offset from the agreed start: a split burst waits for its release
// instant (ReleaseLead, while every share connects), any other group
// starts at its Start. The trial's sampling windows open then, as a
// single-machine trial's opens with the load: the target idles until the
// release, and counting that wait would dilute its CPU.
func firstRelease(plans []load.Plan) time.Duration {
	first := time.Duration(-1)
	for _, p := range plans {
		for _, g := range p.Groups {
			at := g.Start
			if g.Model == load.Burst && g.ReleaseAt > at {
				at = g.ReleaseAt
			}
			if first < 0 || at < first {
				first = at
			}
		}
	}
	return max(first, 0)
}

// each runs f for every connection at once and returns the first error
// (after cancelling the rest), or, when ctx ended first, an error naming the
// agents that had not finished. It returns only when every f has.
func each(ctx context.Context, cancel context.CancelFunc, conns []*conn, f func(int, *conn) error) error {
	type outcome struct {
		i   int
		err error
	}
	outs := make(chan outcome, len(conns))
	for i, c := range conns {
		go func() { outs <- outcome{i, f(i, c)} }()
	}
	finished := make([]bool, len(conns))
	var first error
	for left := len(conns); left > 0; left-- {
		var o outcome
		select {
		case o = <-outs:
		case <-ctx.Done():
			if first == nil {
				var waiting []string
				for i, c := range conns {
					if !finished[i] {
						waiting = append(waiting, c.name)
					}
				}
				first = fmt.Errorf("load agents stopped while waiting for %s: %w", strings.Join(waiting, ", "), context.Cause(ctx))
			}
			cancel() // closes every agent, which ends every f
			o = <-outs
		}
		finished[o.i] = true
		if o.err != nil && first == nil {
			first = o.err
			cancel() // stop the others; their errors are consequences
		}
	}
	return first
}

// conn is the controller's end of one agent.
type conn struct {
	name string
	a    Agent
	r    *bufio.Reader
	seq  int
}

func (c *conn) send(m message) error {
	b, err := encodeLine(m)
	if err != nil {
		return fmt.Errorf("load agent %s: encode %s: %w", c.name, m.Type, err)
	}
	if _, err := c.a.Stdin.Write(b); err != nil {
		return fmt.Errorf("load agent %s: cannot send %s (%v): has it exited? its stderr says why", c.name, m.Type, err)
	}
	return nil
}

// recv reads the agent's next message; an error message becomes an error.
func (c *conn) recv() (message, error) {
	line, err := readLine(c.r, maxResultLine)
	switch {
	case errors.Is(err, io.EOF):
		return message{}, fmt.Errorf("load agent %s: closed its output: it exited or never started (is `threadlab load --agent` there, as new as this one?); its stderr says why", c.name)
	case err != nil:
		return message{}, fmt.Errorf("load agent %s: read: %w", c.name, err)
	}
	m, err := decodeMessage(line)
	if err != nil {
		return message{}, fmt.Errorf("load agent %s: %w", c.name, err)
	}
	if m.Type == msgError {
		return m, fmt.Errorf("load agent %s: %s", c.name, m.Error)
	}
	return m, nil
}

// offset measures the agent's clock offset: of n round trips, the
// fastest bounds the offset most tightly.
func (c *conn) offset(n int) (o measured, err error) {
	best := measured{Agent: c.name, RTT: -1}
	defer func() {
		if best.RTT < 0 { // not one round trip: nothing measured
			o.RTT = 0
		}
	}()
	for range n {
		c.seq++
		t0 := time.Now()
		if err := c.send(message{Type: msgPing, Seq: c.seq}); err != nil {
			return best, err
		}
		m, err := c.recv()
		rtt := time.Since(t0)
		if err != nil {
			return best, err
		}
		switch {
		case m.Type != msgPong || m.Seq != c.seq:
			return best, fmt.Errorf("load agent %s: answered %q #%d to ping #%d, want %q", c.name, m.Type, m.Seq, c.seq, msgPong)
		case m.Version != protocolVersion:
			return best, fmt.Errorf("load agent %s speaks protocol version %d, this threadlab %d: run the same threadlab build on every host", c.name, m.Version, protocolVersion)
		}
		if best.RTT < 0 || rtt < best.RTT {
			// The agent read its clock about half way through the trip.
			mid := t0.UnixNano() + int64(rtt/2)
			best.RTT, best.Offset = rtt, time.Duration(m.Clock-mid)
		}
	}
	return best, nil
}
