// Package replicate is the run's replication policy: which forks of which
// cells run, in what order, and when a cell stops. A cell is one variant
// at one sweep point; a job is one fork of a cell (a fresh target, its
// warm-up and its measured iterations).
//
// Data flow: the manifest and the run's seed -> Schedule, the forks in run
// order (interleaved rounds shuffled with the seed, or sequential) -> the
// trials stage asks Policy.Wanted before each fork (every fork up to
// forks.min runs; one past it only while a Decide says a claim still reads
// its cell), takes re-runs from Policy.Spend's budget, and counts in the
// cell's Tally -> Policy.Stops, where each cell stopped and why, for
// run.json. The orchestrator owns the State; this package sees only the
// manifest, the rows on disk and a log function.
package replicate

import (
	"math/rand/v2"
	"strconv"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/judge/verdicts"
	"github.com/threadlab/threadlab/store/record"
)

// Cell is one variant at one sweep point.
type Cell struct {
	Variant experiments.Variant
	Point   map[string]string // sweep key -> value
}

// PointString is the point as stored in trials.csv.
func (c Cell) PointString() string { return record.FormatPoint(c.Point) }

// Job is one fork of one cell: a fresh target process, its warm-up and
// its measured iterations.
type Job struct {
	Cell Cell
	Fork int // 1-based within the cell; also the round it belongs to
}

// Key names the job in run.json's order and in resume's set of jobs done.
func (j Job) Key() string { return JobKey(j.Cell.Variant.Name, j.Cell.PointString(), j.Fork) }

// JobKey is Job.Key of a trials.csv row's variant, point and fork.
func JobKey(variant, point string, fork int) string {
	return variant + "|" + point + "|" + strconv.Itoa(fork)
}

// ID names the cell without its request group.
func (c Cell) ID() CellID { return CellID{Variant: c.Variant.Name, Point: c.PointString()} }

// CellID names a cell of the schedule (variant x sweep point) without its
// request group; Decide maps it to whether the cell needs more forks.
type CellID struct{ Variant, Point string }

func (c CellID) String() string { return verdicts.CellName(c.Variant, c.Point) }

// Points is the cartesian product of the sweep, in manifest order; one
// empty point without a sweep.
func Points(m *experiments.Manifest) []map[string]string { return m.Sweep.Points() }

// Cells is variants x points: each point, each variant.
func Cells(m *experiments.Manifest) []Cell {
	var out []Cell
	for _, p := range Points(m) {
		for _, v := range m.Variants {
			out = append(out, Cell{Variant: v, Point: p})
		}
	}
	return out
}

// Schedule orders the forks, up to the largest number a cell may get
// (forks: {min, max} runs the forks past min only while a claim needs
// them; see Policy.Wanted). Interleaved runs fork k of every cell before
// fork k+1, shuffling the cells of each round with the seed, so slow drift
// of the host (thermal, neighbours) spreads over all variants instead of
// favouring whichever ran first. Sequential runs all forks of a cell in a row.
func Schedule(m *experiments.Manifest, seed int64) []Job {
	cells := Cells(m)
	var jobs []Job
	if m.Order == "sequential" {
		for _, c := range cells {
			for k := 1; k <= m.Forks.Max; k++ {
				jobs = append(jobs, Job{Cell: c, Fork: k})
			}
		}
		return jobs
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x7468726561646c62))
	for k := 1; k <= m.Forks.Max; k++ {
		round := make([]Cell, len(cells))
		copy(round, cells)
		rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		for _, c := range round {
			jobs = append(jobs, Job{Cell: c, Fork: k})
		}
	}
	return jobs
}
