package pipeline

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/threadlab/threadlab/pipeline/load"
	"github.com/threadlab/threadlab/pipeline/record"
)

// Progress shows a run as it goes. Implementations must be cheap: Tick is
// called about once a second from the load generator.
type Progress interface {
	Start(total, done int) // jobs in the run, jobs already on disk
	Trial(j Job, seq int)  // a trial's measurement starts
	Tick(t load.Tick)      // live numbers of the running trial
	Done(j Job, r record.Trial)
	Close()
}

// Bar is the terminal display: the current cell and trial, live requests
// per second, and the ETA of the whole run (schollz/progressbar).
type Bar struct {
	W   io.Writer
	mu  sync.Mutex
	bar *progressbar.ProgressBar
	cur string
}

func (b *Bar) Start(total, done int) {
	b.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(b.W),
		progressbar.OptionSetWidth(24),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionFullWidth(),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(b.W) }),
	)
	if done > 0 {
		b.bar.Set(done)
	}
}

func (b *Bar) Trial(j Job, seq int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cur = cellLabel(j)
	b.bar.Describe(b.cur)
}

func (b *Bar) Tick(t load.Tick) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bar.Describe(fmt.Sprintf("%s  %6.0f rps  %d req  %d err", b.cur, t.RPS, t.Requests, t.Errors))
}

// Done advances the bar by one iteration; re-runs and sequential rounds
// past the plan grow it instead of overflowing it.
func (b *Bar) Done(j Job, r record.Trial) {
	if b.bar.State().CurrentNum >= b.bar.GetMax64() {
		b.bar.ChangeMax64(b.bar.GetMax64() + 1)
	}
	b.bar.Add(1)
}
func (b *Bar) Close() { b.bar.Finish() }

// Lines is the display when stdout is not a terminal: one line per trial
// with the run's ETA.
type Lines struct {
	W           io.Writer
	total, done int
	start       time.Time
	doneThisRun int
}

func (l *Lines) Start(total, done int) { l.total, l.done, l.start = total, done, time.Now() }
func (l *Lines) Trial(j Job, seq int)  {}
func (l *Lines) Tick(t load.Tick)      {}
func (l *Lines) Done(j Job, r record.Trial) {
	l.done++
	l.doneThisRun++
	l.total = max(l.total, l.done) // re-runs and sequential rounds go past the plan
	eta := time.Duration(float64(time.Since(l.start)) / float64(l.doneThisRun) * float64(l.total-l.done))
	fmt.Fprintf(l.W, "[%d/%d] %s iteration %d: %s (ETA %s)\n", l.done, l.total, cellLabel(j), r.Iteration, describe(r), eta.Round(time.Second))
}
func (l *Lines) Close() {}

func cellLabel(j Job) string {
	s := j.Cell.Variant.Name
	if p := j.Cell.PointString(); p != "" {
		s += " " + p
	}
	return fmt.Sprintf("%s fork %d", s, j.Fork)
}
