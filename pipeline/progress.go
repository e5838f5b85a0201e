package pipeline

import (
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/pipeline/cost"
	"github.com/threadlab/threadlab/pipeline/forks"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/render/console"
	"github.com/threadlab/threadlab/store/record"
)

// Progress shows a run as it goes. Implementations must be cheap: Tick is
// called about once a second from the load generator.
type Progress interface {
	Start(total, done int)          // jobs in the run, jobs already on disk
	Trial(j replicate.Job, seq int) // a trial's measurement starts
	Tick(t load.Tick)               // live numbers of the running trial
	Done(j replicate.Job, r record.Trial)
	Close()
}

// Show is the Progress that a console display (console.Bar on a terminal,
// console.Lines otherwise) draws: the orchestrator words each job and
// each iteration's outcome, the display only lays them out.
func Show(d console.Display) Progress { return shown{d} }

type shown struct{ d console.Display }

func (s shown) Start(total, done int)          { s.d.Start(total, done) }
func (s shown) Trial(j replicate.Job, seq int) { s.d.Trial(forks.Label(j), seq) }
func (s shown) Tick(t load.Tick)               { s.d.Tick(t) }
func (s shown) Done(j replicate.Job, r record.Trial) {
	s.d.Done(forks.Label(j), r.Iteration, forks.Describe(r))
}
func (s shown) Close() { s.d.Close() }

// NewETA is the console's ETA of a run planned as e (cost.Predict); nil
// e means no estimate.
func NewETA(e *cost.Estimate) *console.ETA {
	if e == nil {
		return console.NewETA(0, 0, 0, "")
	}
	its := max(e.Iterations, 1)
	return console.NewETA(its, e.Costs.Fork(its), e.Costs.WindowS+e.Costs.PauseS, e.From)
}
