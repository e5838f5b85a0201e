package fleet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/threadlab/threadlab/measure/load"
)

// How far from now a job's start instant may be. The controller picks a
// start a few round trips ahead (Drive's lead), so a start long past means
// the link stalled or a clock stepped since the offsets were measured, and
// one far ahead means a wrong offset: both would break the one agreed
// instant, so the agent refuses rather than measure a different load.
const (
	maxLate = 250 * time.Millisecond
	maxWait = 30 * time.Second
)

// Serve is the agent: `threadlab load --agent`. It reads protocol lines from
// in and answers on out: a pong (with its wall clock) for each ping, and for
// each job, at the job's start instant, a load.Run of the job's plan and
// then its result (or an error message). One job runs at a time. Serve
// returns nil when the controller is gone, after stopping a running load:
// in ended (the controller closed it, or the ssh session ended) or out can
// no longer be written. It returns ctx's error when ctx ends first.
func Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	return serve(ctx, in, out, quirks{})
}

// quirks are faults a test gives an in-process agent: a clock skewed by
// skew (offset measurement), and bursts released late by lateRelease (the
// release-spread check).
type quirks struct {
	skew, lateRelease time.Duration
}

// serve is Serve with quirks.
func serve(ctx context.Context, in io.Reader, out io.Writer, q quirks) error {
	skew := q.skew
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var mu sync.Mutex
	var werr error
	var over atomic.Bool // the controller is gone: say nothing more
	send := func(m message) {
		if over.Load() {
			return
		}
		b, err := encodeLine(m)
		if err != nil {
			b, _ = encodeLine(message{Type: msgError, Seq: m.Seq, Error: "agent cannot encode its answer: " + err.Error()})
		}
		mu.Lock()
		defer mu.Unlock()
		if werr != nil {
			return
		}
		if _, err := out.Write(b); err != nil {
			werr = err
			cancel() // nobody hears us: stop the load
		}
	}

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := readLine(r, maxJobLine)
			if err != nil {
				readErr <- err
				return
			}
			select {
			case lines <- line:
			case <-ctx.Done():
				return
			}
		}
	}()

	var jobs sync.WaitGroup
	var busy atomic.Bool
	var err error
loop:
	for {
		select {
		case <-ctx.Done():
			mu.Lock()
			hungUp := werr != nil
			mu.Unlock()
			if !hungUp { // a failed write means the controller is gone, like EOF
				err = ctx.Err()
			}
			break loop
		case e := <-readErr:
			if !errors.Is(e, io.EOF) {
				send(message{Type: msgError, Error: "agent input: " + e.Error()})
				err = e
			}
			break loop
		case line := <-lines:
			m, plan, derr := decodeJob(line)
			if derr != nil {
				send(message{Type: msgError, Seq: m.Seq, Error: derr.Error()})
				continue
			}
			switch m.Type {
			case msgPing:
				send(message{Type: msgPong, Seq: m.Seq, Version: protocolVersion, Clock: time.Now().Add(skew).UnixNano()})
			case msgJob:
				if !busy.CompareAndSwap(false, true) {
					send(message{Type: msgError, Error: "a job is already running: send the next one after its result"})
					continue
				}
				start := m.Job.Start
				jobs.Add(1)
				go func() {
					defer jobs.Done()
					for i := range plan.Groups {
						if g := &plan.Groups[i]; g.Model == load.Burst && q.lateRelease > 0 {
							g.ReleaseAt = max(g.ReleaseAt, g.Start) + q.lateRelease
						}
					}
					ans := runJob(ctx, plan, start, skew)
					busy.Store(false)
					send(ans)
				}()
			}
		}
	}
	over.Store(true) // a job's last words would block on a pipe nobody reads
	cancel()
	jobs.Wait()
	return err
}

// runJob waits for the start instant (Unix ns in this agent's clock), runs
// the plan and returns the answer to send.
func runJob(ctx context.Context, plan load.Plan, start int64, skew time.Duration) message {
	wait := time.Duration(start - time.Now().Add(skew).UnixNano())
	switch {
	case wait < -maxLate:
		return message{Type: msgError, Error: fmt.Sprintf("the job arrived %v after its start instant (more than %v late): the link to this host is slow or its clock stepped; run again", (-wait).Round(time.Millisecond), maxLate)}
	case wait > maxWait:
		return message{Type: msgError, Error: fmt.Sprintf("the job's start instant is %v away (more than %v): the clock offset measured for this host is wrong; run again", wait.Round(time.Millisecond), maxWait)}
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return message{Type: msgError, Error: "stopped before the start instant"}
		}
	}
	res, err := load.Run(ctx, plan)
	if err != nil {
		return message{Type: msgError, Error: "load: " + err.Error()}
	}
	res.Start = res.Start.Add(skew)
	w, err := toWire(res)
	if err != nil {
		return message{Type: msgError, Error: "encode result: " + err.Error()}
	}
	return message{Type: msgResult, Result: w}
}

// readLine returns the next non-blank line of r, refusing lines longer than
// limit bytes rather than buffering without end.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			return nil, fmt.Errorf("a line longer than %d bytes", limit)
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			if len(bytes.TrimSpace(line)) == 0 {
				line = line[:0]
				continue
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}
