package console

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/threadlab/threadlab/measure/load"
)

// Display shows a run as it goes, in words the orchestrator chose: cell
// names a fork ("virtual c=10 fork 2"), outcome an iteration's result.
// Implementations must be cheap: Tick is called about once a second from
// the load generator.
type Display interface {
	Start(total, done int)      // iterations in the run, those already on disk
	Trial(cell string, seq int) // the fork of job seq starts measuring
	Tick(t load.Tick)           // live numbers of the running trial
	Done(cell string, iteration int, outcome string)
	Close()
}

// Bar is the terminal display: the current cell and trial, live requests
// per second, and the ETA of the whole run (schollz/progressbar). With ETA
// set, the time left is ETA's (the estimate, then the forks measured);
// without it, progressbar's own extrapolation.
type Bar struct {
	W   io.Writer
	ETA *ETA
	mu  sync.Mutex
	bar *progressbar.ProgressBar
	cur string
}

func (b *Bar) Start(total, done int) {
	if b.ETA != nil {
		b.ETA.begin(time.Now(), total, done)
	}
	b.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(b.W),
		progressbar.OptionSetWidth(24),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(b.ETA == nil),
		progressbar.OptionFullWidth(),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(b.W) }),
	)
	if done > 0 {
		b.bar.Set(done)
	}
}

func (b *Bar) Trial(cell string, seq int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cur = cell
	if b.ETA != nil {
		b.ETA.forkStarted(time.Now(), seq)
	}
	b.bar.Describe(b.cur + b.left())
}

func (b *Bar) Tick(t load.Tick) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bar.Describe(fmt.Sprintf("%s  %6.0f rps  %d req  %d err%s", b.cur, t.RPS, t.Requests, t.Errors, b.left()))
}

// left is "  ETA 3m10s" from ETA, or "" without it (progressbar shows its own).
func (b *Bar) left() string {
	if b.ETA == nil {
		return ""
	}
	d, ok := b.ETA.Left(time.Now())
	if !ok {
		return ""
	}
	return "  ETA " + d.Round(time.Second).String()
}

// Done advances the bar by one iteration; re-runs and sequential rounds
// past the plan grow it instead of overflowing it.
func (b *Bar) Done(cell string, iteration int, outcome string) {
	if b.ETA != nil {
		b.mu.Lock()
		b.ETA.iterationDone(time.Now())
		b.mu.Unlock()
	}
	if b.bar.State().CurrentNum >= b.bar.GetMax64() {
		b.bar.ChangeMax64(b.bar.GetMax64() + 1)
	}
	b.bar.Add(1)
}
func (b *Bar) Close() { b.bar.Finish() }

// Lines is the display when stdout is not a terminal: one line per trial
// with the run's ETA. With ETA set, the first line is the estimate's ETA
// and each later one ETA's (the estimate refined by the forks measured);
// without it, the time so far extrapolated over the iterations left.
type Lines struct {
	W           io.Writer
	ETA         *ETA
	now         func() time.Time // time.Now; tests set a clock
	total, done int
	start       time.Time
	doneThisRun int
}

func (l *Lines) clock() time.Time {
	if l.now != nil {
		return l.now()
	}
	return time.Now()
}

func (l *Lines) Start(total, done int) {
	l.total, l.done, l.start = total, done, l.clock()
	if l.ETA == nil {
		return
	}
	l.ETA.begin(l.start, total, done)
	if d, ok := l.ETA.Left(l.start); ok && total > done {
		fmt.Fprintf(l.W, "[%d/%d] ETA %s, estimated from %s\n", done, total, d.Round(time.Second), l.ETA.From)
	}
}

func (l *Lines) Trial(cell string, seq int) {
	if l.ETA != nil {
		l.ETA.forkStarted(l.clock(), seq)
	}
}

func (l *Lines) Tick(t load.Tick) {}

func (l *Lines) Done(cell string, iteration int, outcome string) {
	now := l.clock()
	l.done++
	l.doneThisRun++
	l.total = max(l.total, l.done) // re-runs and sequential rounds go past the plan
	eta := time.Duration(float64(now.Sub(l.start)) / float64(l.doneThisRun) * float64(l.total-l.done))
	if l.ETA != nil {
		l.ETA.iterationDone(now)
		if d, ok := l.ETA.Left(now); ok {
			eta = d
		}
	}
	fmt.Fprintf(l.W, "[%d/%d] %s iteration %d: %s (ETA %s)\n", l.done, l.total, cell, iteration, outcome, eta.Round(time.Second))
}
func (l *Lines) Close() {}

// ETA predicts the time left in a run's measurement stage (issue 10).
// Before any fork has finished it uses cost.Predict's costs per fork and
// per iteration (the last run's measured costs, else the manifest's
// durations), so the first lines already say something sensible:
// extrapolating the first iteration, which carries its fork's start and
// warm-up, over every later one overstates the time left by about the
// start cost times the iterations per fork. As forks finish, their
// measured wall time (from one fork's start to the next's, so the stop,
// the cool-down gate and any re-run iterations are in it) refines the
// cost of a fork: the mean of the estimate, weighted as one fork, and
// every fork measured. The time left is the forks not yet started at that
// cost, plus what the running fork's cost leaves (at least its iterations
// to go, at the cost measured between two iterations of a fork). Forks,
// not iterations, are counted, so invalid iterations re-run within a fork
// do not use up the forks left. Without an estimate the time so far is
// extrapolated over the iterations left until a fork has been measured.
type ETA struct {
	Iterations int     // per fork
	ForkS      float64 // estimated seconds of a fork with all its iterations; 0 = no estimate
	IterationS float64 // estimated seconds of one more iteration (window and pause)
	From       string  // where the estimate's costs come from

	start            time.Time
	total, before    int          // planned iterations; those done before this run (resume)
	done             int          // iterations finished since begin
	started          map[int]bool // jobs whose fork has started (a lost fork's replacement is the same job)
	forks            []float64    // measured seconds of finished forks
	iters            []float64    // measured seconds between two iterations of a fork
	inFork           int          // iterations finished in the fork running now; -1: none runs
	seen             int          // most iterations a finished fork had (without an estimate)
	forkAt, lastDone time.Time
}

// NewETA is the ETA of a run estimated to cost forkS seconds a fork of
// iterations, and iterationS one more iteration, by the estimate from;
// iterations 0 means no estimate.
func NewETA(iterations int, forkS, iterationS float64, from string) *ETA {
	return &ETA{Iterations: iterations, ForkS: forkS, IterationS: iterationS, From: from, inFork: -1}
}

// begin starts the clock for total planned iterations, done of them on
// disk already.
func (x *ETA) begin(now time.Time, total, done int) {
	x.start, x.total, x.before, x.done, x.inFork = now, total, done, 0, -1
	x.started = map[int]bool{}
}

// forkStarted closes the fork running until now, if any, and opens the
// fork of job seq.
func (x *ETA) forkStarted(now time.Time, seq int) {
	if x.inFork > 0 { // a fork lost before its first iteration is a retry, not a fork's cost
		x.forks = append(x.forks, now.Sub(x.forkAt).Seconds())
		x.seen = max(x.seen, x.inFork)
	}
	if x.started == nil {
		x.started = map[int]bool{}
	}
	x.started[seq] = true
	x.forkAt, x.inFork = now, 0
}

func (x *ETA) iterationDone(now time.Time) {
	x.done++
	if x.inFork < 0 { // no Trial call seen: treat the run's start as the fork's
		x.forkAt, x.inFork = x.start, 0
	}
	if x.inFork > 0 {
		x.iters = append(x.iters, now.Sub(x.lastDone).Seconds())
	}
	x.inFork++
	x.lastDone = now
}

// Left is the time left at now; false when nothing is known yet (no
// estimate, nothing finished).
func (x *ETA) Left(now time.Time) (time.Duration, bool) {
	per := x.Iterations
	if per == 0 {
		per = x.seen
	}
	fork := x.forkCost()
	if fork <= 0 || per == 0 {
		if x.done == 0 {
			return 0, false
		}
		left := max(x.total-x.before-x.done, 0)
		return time.Duration(float64(now.Sub(x.start)) / float64(x.done) * float64(left)), true
	}
	iter := x.IterationS
	if len(x.iters) > 0 {
		iter = mean(x.iters)
	} else if iter <= 0 {
		iter = fork / float64(per)
	}
	planned := (x.total + per - 1) / per
	left := float64(max(planned-x.before/per-len(x.started), 0)) * fork
	if x.inFork >= 0 { // the fork running now: what its cost leaves, at least its iterations to go
		left += max(fork-now.Sub(x.forkAt).Seconds(), float64(max(per-x.inFork, 0))*iter)
	}
	return time.Duration(left * float64(time.Second)), true
}

// forkCost is the estimate (as one fork) averaged with the forks measured.
func (x *ETA) forkCost() float64 {
	sum, n := 0.0, 0
	if x.ForkS > 0 {
		sum, n = x.ForkS, 1
	}
	for _, f := range x.forks {
		sum += f
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
