package report

import (
	"slices"
	"strings"

	"github.com/threadlab/threadlab/experiments/seeds"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// reproRow is one row of a run's reproduction table (the run page and
// report.md): a claim, the seed's figure beside ours, the verdict and
// whether the size reproduced, on which host. Fields are plain text; each
// output escapes them.
type reproRow struct {
	ID, Says string
	SeedIDs  string // the inventory's statements the claim answers: "000.1, 003.2"
	Seed     string // the write-up's figure and its source, "–" without one
	Ours     string // our ratio with its interval and p; the reason when there is no ratio or the claim did not apply
	Status   string
	// StatusText is the status in words; Strength the decision
	// framework's reading (solid, directional), shown when it differs.
	StatusText, Strength string
	Size, Host           string
}

// otherSeed is a statement of the seed inventory about this experiment
// that no verdict of this run answers: a precondition, or a claim of
// another profile or a newer manifest.
type otherSeed struct{ ID, Says, Figure, Where, In string }

// reproduction fills the run's reproduction table from its verdicts and
// the seed inventory.
func (v *runView) reproduction(vs []record.Verdict, inventory []seeds.Claim) {
	for _, x := range vs {
		r := reproRow{ID: x.ID, Says: x.Says, SeedIDs: strings.Join(seedIDs(inventory, v.Experiment, x.ID), ", "),
			Seed: "–", Ours: "–", Status: orDash(x.Status), StatusText: statusText(x.Status), Strength: strength(x, v.run.Meta.Warnings), Size: "–", Host: orDash(v.Host)}
		if rd := v.readingOf(x); rd.Outcome != "" && rd.Outcome != x.Status {
			r.StatusText += " (" + rd.OutcomeText + ")"
		}
		sf, hasSeed := v.seeds[x.ID]
		if hasSeed {
			r.Seed = seedNum(sf.Value) + sf.scaledNote()
			if sf.From != "" {
				r.Seed += " (" + strings.TrimRight(sf.From, ".") + ")"
			}
		}
		switch {
		case x.Status == stats.NotApplicable:
			r.Ours = x.Reason // which precondition failed, instead of figures that answer another question
		case v.readingOf(x).Size != "":
			// A ratio as a ratio, a value with its unit (reading.go).
			r.Ours = v.readingOf(x).Size
			if x.P != 0 {
				r.Ours += ", p = " + pval(x.P)
			}
		case x.Reason != "":
			r.Ours = x.Reason
		}
		if hasSeed && x.Status != stats.NotApplicable {
			r.Size = orDash(sf.size(x))
		}
		v.Repro = append(v.Repro, r)
	}
	for _, c := range inventory {
		var mine []string
		decided := false
		for _, ref := range c.Claims {
			e, id, _ := strings.Cut(ref, "/")
			if e != v.Experiment {
				continue
			}
			mine = append(mine, id)
			decided = decided || slices.ContainsFunc(vs, func(x record.Verdict) bool { return x.ID == id })
		}
		if len(mine) == 0 || (c.Kind == seeds.KindClaim && decided) {
			continue // not about this experiment, or in the table
		}
		in := "no verdict in this run (a claim of another profile or a newer manifest)"
		if c.Kind == seeds.KindPrecondition {
			in = "a precondition of " + strings.Join(mine, ", ") + ": see their verdicts"
		}
		v.OtherSeeds = append(v.OtherSeeds, otherSeed{ID: c.ID, Says: c.Says, Figure: c.Figure, Where: strings.ReplaceAll(c.Where, "`", ""), In: in})
	}
}

// readingOf is the reading of a recorded verdict of this run.
func (v *runView) readingOf(x record.Verdict) reading {
	for i, y := range v.recorded {
		if y.ID == x.ID && i < len(v.readings) {
			return v.readings[i]
		}
	}
	return readClaim(x, v.checks[x.ID], v.seeds[x.ID])
}

// seedIDs are the inventory's statements a claim of this experiment
// answers.
func seedIDs(inventory []seeds.Claim, exp, id string) []string {
	var ids []string
	for _, c := range inventory {
		if slices.Contains(c.Claims, exp+"/"+id) {
			ids = append(ids, c.ID)
		}
	}
	return ids
}
