package pipeline

import (
	"math/rand/v2"
	"strconv"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/load"
	"github.com/threadlab/threadlab/pipeline/record"
	"github.com/threadlab/threadlab/pipeline/verdicts"
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

func (j Job) key() string { return jobKey(j.Cell.Variant.Name, j.Cell.PointString(), j.Fork) }

func jobKey(variant, point string, fork int) string {
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
// them; see Trials). Interleaved runs fork k of every cell before fork k+1,
// shuffling the cells of each round with the seed, so slow drift of the
// host (thermal, neighbours) spreads over all variants instead of favouring
// whichever ran first. Sequential runs all forks of a cell in a row.
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

// LoadPlan turns the manifest's load into a load.Plan for one cell; sweep
// dimensions over load parameters set them on the measured group. The
// conversion is experiments.Manifest.LoadGroups, the one the loader
// validates, so a manifest that loads is a plan the generator accepts.
func LoadPlan(m *experiments.Manifest, c Cell, target string, seed int64) (load.Plan, error) {
	groups, err := m.LoadGroups(c.Variant, c.Point)
	return load.Plan{Target: target, Seed: seed, Groups: groups}, err
}

// Properties are the Spring properties of a cell: the variant's, the
// swept ones, then those of the services threadlab started.
func Properties(m *experiments.Manifest, c Cell, services map[string]string) map[string]string {
	props := map[string]string{}
	for k, v := range c.Variant.Properties {
		props[k] = v
	}
	for _, d := range m.Sweep {
		if d.Property != "" {
			props[d.Property] = c.Point[d.Name]
		}
	}
	for k, v := range services {
		props[k] = v
	}
	return props
}
