package pipeline

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/pipeline/load"
	"github.com/threadlab/threadlab/pipeline/record"
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

func (c CellID) String() string {
	if c.Point == "" {
		return c.Variant
	}
	return c.Variant + " " + c.Point
}

// Points is the cartesian product of the sweep, in manifest order; one
// empty point without a sweep.
func Points(m *experiments.Manifest) []map[string]string {
	points := []map[string]string{{}}
	for _, d := range m.Sweep {
		var next []map[string]string
		for _, p := range points {
			for _, v := range d.Values {
				q := map[string]string{d.Name: v}
				for k, x := range p {
					q[k] = x
				}
				next = append(next, q)
			}
		}
		points = next
	}
	return points
}

// Cells is variants x points, variant-major.
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
// dimensions over load parameters set them on the measured group.
func LoadPlan(m *experiments.Manifest, c Cell, target string, seed int64) (load.Plan, error) {
	p := load.Plan{Target: target, Seed: seed}
	for _, g := range m.Load.Groups {
		lg := load.Group{
			Name:           g.Name,
			Model:          g.Model,
			Users:          g.Users,
			Rate:           g.Rate,
			MaxInFlight:    g.MaxInFlight,
			Burst:          g.Burst,
			Smooth:         g.Smooth,
			Start:          g.Start,
			Duration:       g.Duration,
			NoKeepAlive:    g.KeepAlive != nil && !*g.KeepAlive,
			ConnectTimeout: g.ConnectTimeout,
			Timeout:        g.Timeout,
			CountHeader:    g.CountHeader,
		}
		if len(g.Think) == 2 {
			lg.ThinkMin, lg.ThinkMax = g.Think[0], g.Think[1]
		}
		for _, s := range g.Stages {
			lg.Stages = append(lg.Stages, load.Stage{Duration: s.Duration, Users: s.Users, Rate: s.Rate})
		}
		for _, r := range g.Requests {
			headers := map[string]string{}
			for k, v := range r.Headers {
				headers[k] = expand(v, c.Variant.Vars)
			}
			lg.Requests = append(lg.Requests, load.Request{Method: r.Method, Path: expand(r.Path, c.Variant.Vars),
				Headers: headers, Body: expand(r.Body, c.Variant.Vars), Weight: r.Weight})
		}
		if g.Name == m.Load.Measure {
			for _, d := range m.Sweep {
				if d.Load == "" {
					continue
				}
				v, err := strconv.ParseFloat(c.Point[d.Name], 64)
				if err != nil {
					return p, fmt.Errorf("sweep %s: %q is not a number", d.Name, c.Point[d.Name])
				}
				switch d.Load {
				case "users":
					lg.Users = int(v)
				case "rate":
					lg.Rate = v
				case "burst":
					lg.Burst = int(v)
				}
			}
		}
		p.Groups = append(p.Groups, lg)
	}
	return p, nil
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

// expand fills a variant's {name} vars into s.
func expand(s string, vars map[string]string) string {
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}
