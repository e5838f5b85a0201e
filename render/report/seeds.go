package report

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/experiments/seeds"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/stats"
)

// seedRow is one statement of a seed write-up on the site's seed-claims
// table: every statement of experiments/seeds/claims.csv, whether a
// manifest encodes it or not, beside the verdicts of the claims it names.
type seedRow struct {
	Heading                string // "000: platform vs virtual ...", on the first row of a write-up
	ID, Says, Figure, Kind string
	Where                  []textPart
	Verdicts               []seedVerdict
	None                   string // what stands in the verdict column without a ref
}

// textPart is a piece of Markdown-ish prose: plain text, or `code`.
type textPart struct {
	Text string
	Code bool
}

// seedVerdict is a manifest claim named by a seed row, as the latest run
// of its experiment decided it; Note replaces the verdict when there is
// none.
type seedVerdict struct {
	Ref, Status, StatusText, Figure, Href, Note string
}

// seedRows lays out the inventory against the latest runs (by experiment,
// the run the decision framework reads).
func seedRows(latest map[string]indexRun, reportsDir string) ([]seedRow, error) {
	claims, err := seeds.All()
	if err != nil {
		return nil, err
	}
	var out []seedRow
	heading := ""
	for _, c := range claims {
		row := seedRow{ID: c.ID, Says: c.Says, Figure: c.Figure, Kind: c.Kind, Where: codeParts(c.Where)}
		if c.Seed() != heading {
			heading = c.Seed()
			row.Heading = heading
			for _, w := range seeds.Writeups {
				if w.ID == heading {
					row.Heading += ": " + w.Title + " (" + w.Topic + ")"
				}
			}
		}
		for _, ref := range c.Claims {
			row.Verdicts = append(row.Verdicts, seedVerdictOf(ref, latest, reportsDir))
		}
		if len(c.Claims) == 0 {
			row.None = map[string]string{
				seeds.KindClaim:      "no manifest claim yet",
				seeds.KindDesign:     "a rule of the pipeline, not a verdict",
				seeds.KindNotEncoded: "not encoded",
			}[c.Kind]
		}
		out = append(out, row)
	}
	return out, nil
}

func seedVerdictOf(ref string, latest map[string]indexRun, reportsDir string) seedVerdict {
	sv := seedVerdict{Ref: ref}
	exp, id, _ := strings.Cut(ref, "/")
	ir, ok := latest[exp]
	if !ok {
		sv.Note = "no run with verdicts yet"
		return sv
	}
	_, run := dirName(ir, exp)
	for _, v := range ir.verdicts {
		if v.ID != id {
			continue
		}
		sv.Status, sv.StatusText = orDash(v.Status), statusText(v.Status)
		if v.DesignFact != "" {
			sv.StatusText += " (design fact, not evidence)"
		}
		rd := readClaim(v, ir.checks[v.ID], ir.seeds[v.ID])
		if rd.Outcome != v.Status && rd.Outcome != "" {
			sv.StatusText += " (" + rd.OutcomeText + ")"
		}
		switch {
		case v.Status == stats.NotApplicable:
			sv.Figure = strings.TrimRight(v.Reason, ".")
		case rd.Size != "":
			sv.Figure = rd.Size // a ratio as ×, a value with its unit
		default:
			sv.Figure = measured(v)
		}
		if _, err := os.Stat(filepath.Join(reportsDir, exp, run, "index.html")); err == nil {
			sv.Href = url.PathEscape(exp) + "/" + url.PathEscape(run) + "/index.html#claim-" + url.PathEscape(id)
		}
		return sv
	}
	sv.Note = "not decided in run " + run + " (profile " + orDash(ir.meta.Profile) + ")"
	return sv
}

// latestRun is the run whose verdicts stand for an experiment: the latest
// complete run with verdicts, else the latest run with verdicts; -1 when
// none has any.
func latestRun(runs []indexRun) int {
	hs := make([]headlineRun, len(runs))
	for i, r := range runs {
		hs[i] = headlineRun{id: r.meta.ID, complete: r.meta.State == "complete", verdicts: r.err == nil && len(r.verdicts) > 0,
			multiHost: r.meta.Hosts != nil}
		if r.manifest != nil {
			hs[i].named = r.manifest.Headline
		}
		if hs[i].id == "" {
			hs[i].id = filepath.Base(r.dir)
		}
	}
	return pickHeadline(hs)
}

// codeParts splits prose at backticks: `x` becomes code.
func codeParts(s string) []textPart {
	var out []textPart
	for i, p := range strings.Split(s, "`") {
		if p != "" {
			out = append(out, textPart{Text: p, Code: i%2 == 1})
		}
	}
	return out
}

// supportedCount is the index's tally of the latest runs' verdicts: the
// supported claims that count as evidence, and the design facts (claims
// that cannot fail by construction), which it leaves out. Twins, the same
// two variants compared on another time metric of the same load (a
// burst's wall time, p99 and p50 move together: p99 of 600 requests is
// their 6th slowest), are not independent confirmations (review
// statistics.md 4): the tally says how many there are and counts each
// set once, supported only when all of it is.
func supportedCount(latest map[string]indexRun) string {
	var supported, claims, facts int
	type question struct{ n, supported int }
	questions := map[string]*question{}
	for exp, ir := range latest {
		for _, v := range ir.verdicts {
			if v.DesignFact != "" {
				facts++
				continue
			}
			claims++
			if v.Status == "supported" {
				supported++
			}
			key := exp + "\x00" + twinKey(v.ID, ir.checks[v.ID], measuredLoad(ir.manifest).Model)
			q := questions[key]
			if q == nil {
				q = &question{}
				questions[key] = q
			}
			q.n++
			if v.Status == "supported" {
				q.supported++
			}
		}
	}
	if claims+facts == 0 {
		return ""
	}
	s := fmt.Sprintf("%d of %d claims supported in the latest runs; %d design facts (checks of the setup that cannot fail) shown but not counted.", supported, claims, facts)
	var twins, sets, held int
	for _, q := range questions {
		if q.n > 1 {
			twins += q.n
		}
		sets++
		if q.supported == q.n {
			held++
		}
	}
	if twins > 0 {
		s += fmt.Sprintf(" %d of the claims are twins, the same two variants compared on another time metric of the same load (wall time, p99, p50), which move together and do not confirm each other: counting each set once, %d of %d questions are supported.", twins, held, sets)
	}
	return s
}

// twinKey is what makes claims twins: in a run measured with bursts, a
// comparison of the same two variants at the same points and group, of the
// same kind and sign (A above B, below, or a band), on the burst's wall
// time or a latency percentile, which all read its slowest requests. Any
// other claim is its own question.
func twinKey(id string, c *stats.Check, model string) string {
	if c == nil || len(c.Compare) != 2 || model != "burst" {
		return "claim " + id
	}
	if d, _ := metric.Lookup(c.Metric); d.Kind != metric.Latency && c.Metric != "wall_ms" {
		return "claim " + id
	}
	_, lo := stats.Bound(c.AtLeast)
	_, hi := stats.Bound(c.AtMost)
	pair := slices.Clone(c.Compare)
	slices.Sort(pair)
	kind := "band"
	if lo != hi {
		above := lo
		if pair[0] != c.Compare[0] {
			above = !above // [B, A] at_least is [A, B] at_most
		}
		kind = map[bool]string{true: "above", false: "below"}[above]
	}
	return fmt.Sprintf("time %s|%s|%s|%v|%s", pair[0], pair[1], kind, c.Where, c.Group)
}

// seedSegment finds the write-up ids a source or seed passage names:
// "000: ..." at its start or after "; ".
var seedSegment = regexp.MustCompile(`(?:^|; )(\d{3}): `)

// seedTitles lists every write-up a run draws on, by title: the
// manifest's source and each claim's seed passage, in id order.
func seedTitles(source string, figs map[string]seedFigure) []string {
	ids := map[string]bool{}
	add := func(s string) {
		for _, m := range seedSegment.FindAllStringSubmatch(s, -1) {
			ids[m[1]] = true
		}
	}
	add(source)
	for _, f := range figs {
		add(f.From)
	}
	var out []string
	for _, w := range seeds.Writeups {
		if ids[w.ID] {
			out = append(out, w.ID+": "+w.Title)
		}
	}
	return out
}
