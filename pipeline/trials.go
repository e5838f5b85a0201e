package pipeline

import (
	"context"
	"fmt"
	"os"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// Trials runs every fork of the schedule that is not on disk yet, through
// the fork loop (package forks, forkhooks.go): a fresh target per fork,
// its warm-up, then its measured iterations, each stored the moment it
// ends. Invalid iterations (host noise, a dead target, a
// saturated generator) are re-run within the manifest's retry budget per
// cell; with forks: {min, max}, forks past min run only while a claim that
// reads the cell is undecided (see Decide).
type Trials struct {
	// Decide looks at the claims between sequential rounds; nil means
	// DecideByClaims.
	Decide Decide
}

// Decide is replicate.Decide given the run's state: it looks at the data
// on disk after a fork has ended and returns the cells no undecided claim
// needs any more (look is the fork about to run, maxLooks the most a cell
// may get).
type Decide func(s *State, look, maxLooks int) (map[replicate.CellID]bool, error)

// DecideByClaims is the default Decide: replicate.ByClaims on the run's
// directory, with the claims stage's rules.
func DecideByClaims(s *State, look, maxLooks int) (map[replicate.CellID]bool, error) {
	return replicate.ByClaims(s.Dir, s.M, stats.Options{Seed: s.M.Seed, Version: Version()})(look, maxLooks)
}

func (Trials) Name() string { return "trials" }

func (t Trials) Run(ctx context.Context, s *State) error {
	if cpus := s.M.Pinning.Generator; cpus != "" && s.hosts == nil {
		list, err := env.ParseCPUList(cpus)
		if err == nil {
			err = env.Pin(os.Getpid(), list)
		}
		if err != nil {
			return fmt.Errorf("pin the load generator to CPUs %s: %w", cpus, err)
		}
	}
	// What is in force, not what was asked: read back after pinning, and
	// the services again after each fork's first iteration (backends).
	s.readBack(roleGenerator, s.M.Pinning.Generator, os.Getpid())
	s.readBackServices()
	r := s.rep
	s.snapshotClock()
	s.Meta.Forks, s.Meta.Iterations = s.M.Forks.String(), s.M.Iterations
	onDisk, err := record.ReadCSV[record.Trial](s.Dir, record.TrialsFile)
	if err != nil {
		return err
	}
	planned, done := 0, 0
	for _, j := range s.Jobs {
		r.Cell(s.M, j.Cell.ID(), onDisk)
		if j.Fork <= s.M.Forks.Min {
			planned += s.M.Iterations
			if s.Done[j.Key()] {
				done += s.M.Iterations
			}
		}
	}
	if p := s.Opt.Progress; p != nil {
		p.Start(planned, done)
		defer p.Close()
	}
	defer func() { s.Meta.Cells = r.Stops(s.M) }()
	loop := s.forkLoop()
	for i, j := range s.Jobs {
		if s.Done[j.Key()] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		decide := t.Decide
		if decide == nil {
			decide = DecideByClaims
		}
		ok, err := r.Wanted(s.M, j, func(look, maxLooks int) (map[replicate.CellID]bool, error) { return decide(s, look, maxLooks) })
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := loop.Cell(ctx, i+1, j); err != nil {
			return err
		}
		s.Done[j.Key()] = true
		r.ForkDone()
	}
	return nil
}
