package steady

import (
	"fmt"
	"strconv"
	"strings"
)

// Round is one warm-up round of one fork, as warmup.csv records it: how long
// the round took and the metric it measured (e.g. wall_ms of a burst, or
// rps of a timed window).
type Round struct {
	WallMs float64
	Value  float64
}

// Recommendation says how much warm-up a fork needed.
type Recommendation struct {
	Result Result
	// SteadyAfterMs is the warm-up time spent before the first steady
	// round: 0 when the first round was already steady, -1 when the rounds
	// never settled (the warm-up was too short to tell).
	SteadyAfterMs float64
	Rounds        int
	Note          string // one line for the report
}

// Recommend classifies a fork's warm-up rounds in order and returns the
// warm-up time after which the metric was steady.
func Recommend(rounds []Round, o Options) Recommendation {
	x := make([]float64, len(rounds))
	for i, r := range rounds {
		x[i] = r.Value
	}
	res := Classify(x, o)
	rec := Recommendation{Result: res, Rounds: len(rounds), SteadyAfterMs: -1}
	switch {
	case len(rounds) == 0:
		rec.Note = "no warm-up rounds recorded"
	case res.SteadyFrom < 0:
		rec.Note = fmt.Sprintf("not steady after %d warm-up rounds (%s): lengthen load.warmup", len(rounds), fmtMs(total(rounds, len(rounds))))
	default:
		rec.SteadyAfterMs = total(rounds, res.SteadyFrom)
		rec.Note = fmt.Sprintf("%s: steady from round %d of %d, after %s of warm-up", res.Class, res.SteadyFrom+1, len(rounds), fmtMs(rec.SteadyAfterMs))
	}
	return rec
}

// RecommendCell is the warm-up a cell needs: the longest of its forks',
// since every fork must be steady before it is measured. ok is false when
// some fork never settled (its recommendation says so).
func RecommendCell(forks [][]Round, o Options) (steadyAfterMs float64, ok bool, per []Recommendation) {
	ok = len(forks) > 0
	for _, f := range forks {
		r := Recommend(f, o)
		per = append(per, r)
		if r.SteadyAfterMs < 0 {
			ok = false
			continue
		}
		steadyAfterMs = max(steadyAfterMs, r.SteadyAfterMs)
	}
	return steadyAfterMs, ok, per
}

// ParseRound reads the round number from a warmup.csv reason, "warm-up round
// 3" (possibly followed by "; other warnings").
func ParseRound(reason string) (int, bool) {
	const prefix = "warm-up round "
	i := strings.Index(reason, prefix)
	if i < 0 {
		return 0, false
	}
	s := reason[i+len(prefix):]
	if j := strings.IndexAny(s, "; "); j >= 0 {
		s = s[:j]
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

func total(rounds []Round, upto int) float64 {
	var t float64
	for _, r := range rounds[:upto] {
		t += r.WallMs
	}
	return t
}

func fmtMs(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(ms/1000, 'f', 1, 64) + " s"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
}
