package report

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"

	"github.com/threadlab/threadlab/experiments/seeds"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// indexView is reports/index.html: the decision framework first (what a
// reader came for), then every experiment and its runs.
type indexView struct {
	// Answer is the short answer to "platform, virtual threads or
	// WebFlux?" across the catalog, each clause linked to its evidence;
	// FDR the Benjamini-Hochberg statement across the latest runs' claims.
	Answer      indexAnswer
	FDR         string
	Decisions   []decisionRow
	Experiments []experimentView
	// NotApplicable is set when a decision row's claim did not apply on
	// its host, so the legend explains that badge too.
	NotApplicable bool
	// Seeds is every statement of the seed write-ups (seeds.go).
	Seeds []seedRow
	// Supported counts the latest runs' supported claims as evidence,
	// design facts left out (seeds.go).
	Supported string
}

type decisionRow struct {
	When, Pick, Then        string
	Claim, Says             string
	Because                 string // the measured ratio, CI and p, and the seed's figure
	Status, Strength, Leans string
	Flags                   []string
	Experiment, Run, Href   string
	RunState                string
	Drift, DriftTitle       string     // the run's plan or claims are older than the catalog's (drift.go)
	Reading                 reading    // outcome, direction, size, threshold (reading.go)
	Advice                  thenAdvice // the "then", where the pick stands
	Shortfall               string     // for "smaller than claimed": by how much
	// MeasuredAt is the load the run measured at (measuredAt), shown
	// under "when", which keeps the seed's scale words.
	MeasuredAt string
}

type experimentView struct {
	Name, Title, Question string
	Href                  string // latest-run page, empty when not rendered
	Runs                  []runRow
	// Unpublished: in the catalog (experiments/), no run under data/ yet.
	Unpublished bool
}

type runRow struct {
	ID, Href, Started, Host, Profile, State, Trials, Error string
	Rebuild                                                string
	Compare                                                string // compare.html against the previous run, when rendered
	// Drift and DriftTitle: the catalog's manifest has changed since the
	// run ("older plan", "older claims"), and how (drift.go).
	Drift, DriftTitle string
	// Headline marks the run the experiment's page and the decision
	// framework use (headline.go); MultiHost a run over several hosts.
	Headline, MultiHost bool
}

// indexRun is the part of a run the index needs; it skips series and
// latency so a large data/ tree indexes quickly.
type indexRun struct {
	dir      string
	meta     record.Meta
	manifest *record.ManifestInfo
	seeds    map[string]seedFigure
	checks   map[string]*stats.Check
	verdicts []record.Verdict
	drift    *drift // the run's manifest against the catalog's today (drift.go)
	host     string
	valid    int
	trials   int
	err      error
}

func readIndexRun(dir string) indexRun {
	ir := indexRun{dir: dir}
	if err := record.CheckDir(dir); err != nil {
		ir.err = err
		return ir
	}
	if err := record.ReadJSON(dir, record.RunFile, &ir.meta); err != nil {
		ir.err = err
		return ir
	}
	if b, err := record.ReadRegular(filepath.Join(dir, record.ManifestFile), record.MaxMetaBytes); err == nil {
		if m, err := record.ParseManifestInfo(b); err == nil {
			ir.manifest = &m
		}
		ir.drift = catalogDrift(&record.Run{Dir: dir, Meta: ir.meta, Manifest: b})
		mi := readMethod(b)
		ir.seeds, ir.checks = mi.seeds(), mi.checkMap()
	}
	if b, err := record.ReadRegular(filepath.Join(dir, record.FingerprintFile), record.MaxMetaBytes); err == nil {
		if n, err := parseJSON(b); err == nil {
			ir.host = hostHeadline(flatten(n, "", nil))
		}
	}
	if b, err := record.ReadRegular(filepath.Join(dir, record.VerdictsFile), record.MaxMetaBytes); err == nil && len(b) > 0 {
		r := record.Run{Dir: dir, Verdicts: b}
		if ir.verdicts, err = r.ReadVerdicts(); err != nil {
			ir.err = err
		}
	}
	trials, err := record.ReadCSV[record.Trial](dir, record.TrialsFile)
	if err != nil && ir.err == nil {
		ir.err = err
	}
	// A trial has a row per request group; it counts once, and as valid
	// only when every group of it was.
	type key struct {
		variant, point string
		trial          int
	}
	valid := map[key]bool{}
	var order []key
	for _, t := range trials {
		k := key{t.Variant, t.Point, t.Trial}
		if _, ok := valid[k]; !ok {
			order = append(order, k)
			valid[k] = true
		}
		valid[k] = valid[k] && t.Valid
	}
	for _, k := range order {
		ir.trials++
		if valid[k] {
			ir.valid++
		}
	}
	return ir
}

// Index renders reports/index.html from every run under dataDir: the
// experiments and their runs, and the decision framework, one row per
// claim with a decision, from the latest complete run of each experiment
// (the latest run with verdicts when none completed), and the seed claims:
// every statement of the write-ups (experiments/seeds) beside those
// verdicts. A run whose page has not been rendered is listed with the
// command that renders it.
func Index(dataDir, reportsDir string) (string, error) {
	entries, err := os.ReadDir(dataDir)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("data directory %s does not exist: pass the directory that holds <experiment>/<run-id>/ (default data)", dataDir)
	}
	if err != nil {
		return "", fmt.Errorf("read data directory: %w", err)
	}
	if err := os.MkdirAll(reportsDir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w (check that --reports points to a writable directory)", reportsDir, err)
	}
	var iv indexView
	var shown []record.Verdict      // every claim of the runs whose verdicts stand, for the FDR statement
	latest := map[string]indexRun{} // by experiment: the run whose verdicts stand
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dirs, err := record.Runs(dataDir, e.Name())
		if err != nil {
			return "", fmt.Errorf("list runs of %s: %w", filepath.Join(dataDir, e.Name()), err)
		}
		if len(dirs) == 0 {
			continue
		}
		runs := make([]indexRun, len(dirs))
		for i, d := range dirs {
			runs[i] = readIndexRun(d)
		}
		iv.Experiments = append(iv.Experiments, experimentRows(e.Name(), runs, reportsDir))
		if i := latestRun(runs); i >= 0 {
			exp, _ := dirName(runs[i], e.Name())
			latest[exp] = runs[i]
			shown = append(shown, runs[i].verdicts...)
		}
		for _, d := range decisionRows(e.Name(), runs) {
			if _, err := os.Stat(filepath.Join(reportsDir, d.Experiment, d.Run, "index.html")); err != nil {
				d.Href = "" // not rendered yet: the run table says how
			}
			iv.Decisions = append(iv.Decisions, d)
			iv.NotApplicable = iv.NotApplicable || d.Strength == stats.NotApplicable
		}
	}
	// The catalog's experiments without a run yet, so the site names every
	// experiment it offers, in name order with the published ones.
	published := map[string]bool{}
	for _, ev := range iv.Experiments {
		published[ev.Name] = true
	}
	if more := unpublished(dataDir, func(n string) bool { return published[n] }); len(more) > 0 {
		iv.Experiments = append(iv.Experiments, more...)
		sort.SliceStable(iv.Experiments, func(i, j int) bool { return iv.Experiments[i].Name < iv.Experiments[j].Name })
	}
	iv.Supported = supportedCount(latest)
	if iv.Seeds, err = seedRows(latest, reportsDir); err != nil {
		return "", fmt.Errorf("seed claims inventory: %w (fix %s; go test ./experiments/seeds says where)", err, seeds.File)
	}
	// Rows a reader can act on first: held (solid before directional),
	// smaller than claimed, then the rest; within one, experiments in
	// name order.
	rank := func(d decisionRow) int {
		switch {
		case d.Reading.Outcome == stats.OutcomeSupported && d.Strength == "solid":
			return 0
		case d.Reading.Outcome == stats.OutcomeSupported:
			return 1
		case d.Reading.Outcome == stats.OutcomeSmaller:
			return 2
		case d.Reading.Outcome == stats.OutcomeEquivalent:
			return 3
		case d.Reading.Outcome == stats.OutcomeInconclusive:
			return 4
		case d.Reading.Outcome == stats.OutcomeNotApplicable:
			return 5
		}
		return 6
	}
	sort.SliceStable(iv.Decisions, func(i, j int) bool { return rank(iv.Decisions[i]) < rank(iv.Decisions[j]) })
	iv.Answer = newIndexAnswer(iv.Decisions)
	if len(shown) > 0 {
		iv.FDR = multiplicity(shown, stats.Alpha).String()
	}
	path := filepath.Join(reportsDir, "index.html")
	return path, writePage(path, "index.html", iv)
}

func dirName(ir indexRun, exp string) (string, string) {
	id := ir.meta.ID
	if id == "" {
		id = filepath.Base(ir.dir)
	}
	if ir.meta.Experiment != "" {
		exp = ir.meta.Experiment
	}
	return exp, id
}

func experimentRows(name string, runs []indexRun, reportsDir string) experimentView {
	ev := experimentView{Name: name}
	head := latestRun(runs)
	for i := len(runs) - 1; i >= 0; i-- { // newest first
		ir := runs[i]
		exp, id := dirName(ir, name)
		row := runRow{ID: id, Started: ir.meta.Started, Host: ir.host, Profile: ir.meta.Profile, State: ir.meta.State,
			Trials: fmt.Sprintf("%d/%d", ir.valid, ir.trials), Headline: i == head, MultiHost: ir.meta.Hosts != nil,
			Drift: ir.drift.Badge(), DriftTitle: ir.drift.Title()}
		if ir.err != nil {
			row.Error = ir.err.Error()
		}
		if _, err := os.Stat(filepath.Join(reportsDir, exp, id, "index.html")); err == nil {
			row.Href = url.PathEscape(exp) + "/" + url.PathEscape(id) + "/index.html"
			if _, err := os.Stat(filepath.Join(reportsDir, exp, id, CompareFile)); err == nil {
				row.Compare = url.PathEscape(exp) + "/" + url.PathEscape(id) + "/" + CompareFile
			}
		} else {
			row.Rebuild = "threadlab report " + shellQuote(ir.dir)
		}
		ev.Runs = append(ev.Runs, row)
		if ev.Title == "" && ir.err == nil {
			ev.Title = ir.meta.Title
			if ir.manifest != nil {
				if ev.Title == "" {
					ev.Title = ir.manifest.Title
				}
				ev.Question = ir.manifest.Question
			}
		}
	}
	// The experiment page lives under the name run.json gives, which is
	// normally, but not necessarily, the directory's.
	exp, _ := dirName(runs[len(runs)-1], name)
	if _, err := os.Stat(filepath.Join(reportsDir, exp, "index.html")); err == nil {
		ev.Href = url.PathEscape(exp) + "/index.html"
	}
	if ev.Title == "" {
		ev.Title = name
	}
	return ev
}

// decisionRows takes the verdicts of the latest complete run, so an
// interrupted rerun does not erase what a finished run established.
func decisionRows(name string, runs []indexRun) []decisionRow {
	pick := latestRun(runs)
	if pick < 0 {
		return nil
	}
	ir := runs[pick]
	exp, id := dirName(ir, name)
	var out []decisionRow
	for _, v := range ir.verdicts {
		if v.Decision == nil {
			continue
		}
		rd := readClaim(v, ir.checks[v.ID], ir.seeds[v.ID])
		out = append(out, decisionRow{
			Reading: rd, Advice: thenOf(v.Decision, rd, ir.verdicts, ir.checks, ir.seeds), Shortfall: shortfall(v, rd),
			When: v.Decision.When, Pick: v.Decision.Pick, Then: v.Decision.Then,
			Claim: v.ID, Says: v.Says, Status: orDash(v.Status), Strength: strength(v, ir.meta.Warnings), Leans: v.Leans, Flags: v.Flags,
			Because: because(v, ir.seeds[v.ID]), MeasuredAt: measuredAt(ir.manifest, ir.meta.Profile),
			Experiment: exp, Run: id, RunState: ir.meta.State, Drift: ir.drift.Badge(), DriftTitle: ir.drift.Title(),
			Href: url.PathEscape(exp) + "/" + url.PathEscape(id) + "/index.html#claim-" + url.PathEscape(v.ID),
		})
	}
	return out
}
