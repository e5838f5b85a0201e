package report

import (
	"strings"

	"github.com/threadlab/threadlab/judge/verdicts"
	"github.com/threadlab/threadlab/store/record"
)

// Headline is the run an experiment's page shows (headline.go) and how the
// catalog's manifest has changed since it (drift.go): what `threadlab
// status` lists, so that a publishing session knows which experiments need
// a new run, which only a re-evaluation, and which are current.
type Headline struct {
	Experiment string
	// Run, Dir, Started and Version name the headline run and the threadlab
	// that made it; all empty when the experiment has no run with verdicts.
	// Manifest is the catalog file its run.json names.
	Run, Dir, Started, Version, Manifest string
	// NewRun is set when the plan changed since the run, or it could not be
	// compared, or the run's forks were warmed up until steady by an older
	// rule (olderWarmup): only a new run answers today's manifest. Reevaluate is set
	// when only the claims changed. Drift says what changed ("" when the
	// run answers today's manifest).
	NewRun, Reevaluate bool
	Drift              string
	// Dead is the headline run's share of wall time outside measurement
	// (run.json time), -1 when the run did not record it.
	Dead float64
}

// HeadlineOf reads the headline run of experiment under dataDir and
// compares its manifest with the catalog's (the manifest path its run.json
// names, inside the checkout that holds dataDir).
func HeadlineOf(dataDir, experiment string) (Headline, error) {
	h := Headline{Experiment: experiment, Dead: -1}
	dirs, err := record.Runs(dataDir, experiment)
	if err != nil || len(dirs) == 0 {
		return h, err
	}
	hs := make([]headlineRun, len(dirs))
	for i, d := range dirs {
		hs[i] = headlineOf(d)
	}
	i := pickHeadline(hs)
	if i < 0 {
		return h, nil
	}
	r, err := runForDrift(dirs[i])
	if err != nil {
		return h, err
	}
	h.Run, h.Dir, h.Started, h.Version, h.Manifest = hs[i].id, dirs[i], r.Meta.Started, r.Meta.Version, r.Meta.Manifest
	if t := r.Meta.Time; t != nil && t.Wall > 0 {
		h.Dead = 1 - t.Measured/t.Wall
	}
	d := catalogDrift(r)
	switch {
	case d == nil:
	case d.Err != "":
		h.NewRun, h.Drift = true, d.Err
	case len(d.Fields) > 0:
		h.NewRun, h.Drift = true, d.Badge()+": "+strings.Join(d.Fields, ", ")
	default:
		h.Reevaluate, h.Drift = true, d.Badge()
	}
	if !h.NewRun && olderWarmup(dirs[i]) {
		// Today's manifest, but not today's warm-up: only a new run
		// answers it; a re-evaluation cannot warm the forks again.
		h.NewRun, h.Reevaluate = true, false
		h.Drift = strings.TrimPrefix(h.Drift+"; warmed up by an older rule", "; ")
	}
	return h, nil
}

// olderWarmup reports whether the run in dir warmed its forks up until
// steady by another rule than today's (its steady.json's warm-up clause
// against verdicts.SteadyRule's). A run with a fixed warm-up, or without
// a steady.json to tell, is not flagged.
func olderWarmup(dir string) bool {
	m, err := record.ReadManifestInfo(dir)
	if err != nil || !m.Load.Warmup.Steady() {
		return false
	}
	st, ok, err := record.ReadSteady(dir)
	return err == nil && ok && !verdicts.CurrentWarmup(st.Rule)
}
