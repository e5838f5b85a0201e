package pipeline

import (
	"maps"
	"time"

	"github.com/threadlab/threadlab/store/record"
)

// Wall-clock buckets of run.json's time.stages_s (record owns the names).
const (
	tSetup     = record.StageSetup
	tBuild     = record.StageBuild
	tStarts    = record.StageStarts
	tWarmups   = record.StageWarmups
	tCoolDowns = record.StageCoolDowns
	tMeasure   = record.StageMeasure
	tStops     = record.StageStops
	tFinishing = record.StageFinishing
	tOther     = record.StageOther
)

// spent adds d to a bucket of the wall clock (the trials stage splits its
// own time this way; stageDone books the rest of it as other).
func (s *State) spent(bucket string, d time.Duration) {
	w := s.clock()
	w.Stages[bucket] += d.Seconds()
	if bucket == tMeasure {
		w.Measured += d.Seconds()
	}
}

func (s *State) clock() *record.WallClock {
	if s.Meta.Time == nil {
		s.Meta.Time = &record.WallClock{}
	}
	if s.Meta.Time.Stages == nil {
		s.Meta.Time.Stages = map[string]float64{}
	}
	return s.Meta.Time
}

// stageDone books a stage's wall time. The trials stage books its parts
// as it goes; the part of it not booked is "other".
func (s *State) stageDone(st Stage, d time.Duration) {
	if s.rep == nil {
		return
	}
	w := s.clock()
	w.Wall += d.Seconds()
	switch st.(type) {
	case Build:
		w.Stages[tBuild] += d.Seconds()
	case Trials:
		booked := 0.0
		for _, b := range []string{tStarts, tWarmups, tCoolDowns, tMeasure, tStops} {
			booked += w.Stages[b] - s.booked[b]
		}
		w.Stages[tOther] += max(0, d.Seconds()-booked)
	case Aggregate, Claims, Report:
		w.Stages[tFinishing] += d.Seconds()
	default:
		w.Stages[tSetup] += d.Seconds()
	}
	s.snapshotClock()
	for k, v := range w.Stages {
		w.Stages[k] = round3(v)
	}
	w.Wall, w.Measured = round3(w.Wall), round3(w.Measured)
}

// snapshotClock keeps the buckets as they are now, so a resumed run's
// earlier seconds (or a stage's before it) are not booked twice.
func (s *State) snapshotClock() { s.booked = maps.Clone(s.clock().Stages) }

func round3(x float64) float64 { return float64(int64(x*1000+0.5)) / 1000 }
