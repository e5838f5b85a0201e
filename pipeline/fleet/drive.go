package fleet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/threadlab/threadlab/pipeline/load"
	"github.com/threadlab/threadlab/pipeline/record"
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

// Drive runs plan on the agents together and returns the merged result.
//
// It splits every group of the plan among the agents (Split; agent i gets
// seed plan.Seed+i), measures each agent's clock offset (a few ping/pong
// round trips each, the one with the smallest RTT kept), picks one start
// instant a little ahead of now (lead: 250 ms plus four of the slowest
// agent's best round trips) and sends each agent its share with that
// instant in the agent's own clock. It then waits for every result,
// converts each result's Start to the controller's clock and merges them
// (Merge, with the agents' names). plan.OnTick is not called: progress stays
// with the agents.
//
// Drive closes every agent's Stdin and Stdout before it returns, whatever
// the outcome: the agents then exit, so start new ones for the next run.
// When ctx ends, or any agent fails, the others are stopped the same way at
// once and Drive returns the error; the offsets measured so far are
// returned in every case, for the run record (an RTT of 0 marks an agent
// that answered no ping).
func Drive(ctx context.Context, agents []Agent, plan load.Plan) (*load.Result, []record.ClockOffset, error) {
	res, _, offs, err := drive(ctx, agents, plan)
	return res, clockOffsets(offs), err
}

// drive is Drive that also returns each agent's own result (in the
// controller's clock), for tests.
func drive(ctx context.Context, agents []Agent, plan load.Plan) (*load.Result, []*load.Result, []measured, error) {
	ctx, cancel := context.WithCancel(ctx)
	// One closer for every way out: on return, on ctx's end and on the
	// first failure (which cancels), every agent loses its stdin, stops its
	// load and exits; closing stdout wakes a reader blocked on it.
	closed := make(chan struct{})
	go func() {
		<-ctx.Done()
		for _, a := range agents {
			if a.Stdin != nil {
				a.Stdin.Close()
			}
			if a.Stdout != nil {
				a.Stdout.Close()
			}
		}
		close(closed)
	}()
	defer func() { cancel(); <-closed }()

	if len(agents) == 0 {
		return nil, nil, nil, fmt.Errorf("no load agents: give at least one")
	}
	names := make([]string, len(agents))
	seen := map[string]bool{}
	conns := make([]*conn, len(agents))
	for i, a := range agents {
		names[i] = a.Name
		if names[i] == "" {
			names[i] = fmt.Sprintf("agent %d", i+1)
		}
		if seen[names[i]] {
			return nil, nil, nil, fmt.Errorf("two load agents are named %q: give each its own name", names[i])
		}
		seen[names[i]] = true
		if a.Stdin == nil || a.Stdout == nil {
			return nil, nil, nil, fmt.Errorf("load agent %s has no stdin or stdout", names[i])
		}
		conns[i] = &conn{name: names[i], a: a, r: bufio.NewReaderSize(a.Stdout, 64<<10)}
	}

	plans, err := splitPlan(plan, len(agents))
	if err != nil {
		return nil, nil, nil, err
	}

	// Clock offsets, all agents at once.
	offs := make([]measured, len(agents))
	hctx, hcancel := context.WithTimeoutCause(ctx, handshakeTimeout, fmt.Errorf("no answer within %v", handshakeTimeout))
	err = each(hctx, cancel, conns, func(i int, c *conn) error {
		o, err := c.offset()
		offs[i] = o
		return err
	})
	hcancel()
	if err != nil {
		return nil, nil, offs, err
	}

	var slowest time.Duration
	for _, o := range offs {
		slowest = max(slowest, o.RTT)
	}
	start := time.Now().Add(250*time.Millisecond + 4*slowest)
	parts := make([]*load.Result, len(agents))
	err = each(ctx, cancel, conns, func(i int, c *conn) error {
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
	if err != nil {
		return nil, nil, offs, err
	}
	merged, err := merge(parts, names)
	return merged, parts, offs, err
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

// offset measures the agent's clock offset: of pings round trips, the
// fastest bounds the offset most tightly.
func (c *conn) offset() (o measured, err error) {
	best := measured{Agent: c.name, RTT: -1}
	defer func() {
		if best.RTT < 0 { // not one round trip: nothing measured
			o.RTT = 0
		}
	}()
	for range pings {
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
