package trial

import (
	"slices"
	"strings"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/bounds"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/store/record"
)

// CheckBounds records each row's burst release spread and makes a row
// invalid, with the reason, when its measurement could not have happened
// as designed: a split burst whose shares left too far apart, or a time
// below the floor of the design (measure/bounds).
func CheckBounds(m *experiments.Manifest, v experiments.Variant, plan load.Plan, res *load.Result, rows []record.Trial) {
	for i := range rows {
		r := &rows[i]
		gi := slices.IndexFunc(res.Groups, func(g load.GroupResult) bool { return g.Name == r.Group })
		pi := slices.IndexFunc(plan.Groups, func(g load.Group) bool { return g.Name == r.Group })
		if gi < 0 || pi < 0 {
			continue
		}
		g, pg := res.Groups[gi], plan.Groups[pi]
		r.ReleaseSpreadMs = round1(ms(g.ReleaseSpread))
		why := bounds.Check(pg, g, m.Design(v, pg), m.Noise.MaxReleaseSpread)
		if len(why) == 0 {
			continue
		}
		if r.Reason != "" {
			why = append([]string{r.Reason}, why...)
		}
		r.Valid, r.Reason = false, strings.Join(why, "; ")
	}
}
