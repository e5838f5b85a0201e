package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/threadlab/threadlab/experiments/seeds"
	"github.com/threadlab/threadlab/judge/diff"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// runView is everything a run page shows, computed once from a
// record.Run; the template only lays it out.
type runView struct {
	run        *record.Run
	layout     layout
	assetsHost string // relative path from the page to reports/assets/
	hists      map[trialKey]*record.HistogramLog
	seeds      map[string]seedFigure // claim ID -> the seed write-up's figure
	checks     map[string]*stats.Check
	controls   map[string]bool  // variants with role: control, references and not choices
	recorded   []record.Verdict // verdicts.json as read
	readings   []reading        // one per recorded verdict

	Title      string
	Experiment string
	ID         string
	Question   string
	Source     string
	SeedTitles []string // every write-up the run's claims draw on, "000: title" (seeds.go)
	Notes      string
	State      string
	Banner     string // non-empty for runs that did not complete
	Profile    string
	Started    string
	Finished   string
	Host       string
	Primary    string
	PrimaryTxt string
	Measured   string
	Groups     []string
	Variants   []string
	Points     []string
	SweepKeys  []string
	Scripts    []string // JS assets from go-echarts, relative to the page
	Latest     *latestLink
	Across     *acrossView // the experiment page only: the runs beside this one (across.go)

	Verdicts    []verdictRow
	Repro       []reproRow   // the reproduction table (repro.go)
	OtherSeeds  []otherSeed  // the seed statements about this experiment without a verdict here
	Wins        *winsTable   // seed 002's wins per metric, for several variants (wins.go)
	SeedTables  []*seedTable // a write-up's own results table beside our medians (seedtable.go)
	Charts      []*chart
	Series      []*chart
	SeriesNote  string
	Legend      []legendItem
	Summary     []summaryRow
	Comparisons []comparisonRow
	Invalid     []trialRow
	Warned      []trialRow
	Flagged     []flagRow
	Warnings    []string
	Trials      []trialRow
	TrialCols   []string

	HostCheck       checkDoc
	HostCheckErr    string
	Fingerprint     []kv
	FingerprintJSON string
	Manifest        string
	ManifestErr     string
	// Drift says how the catalog's manifest has changed since the run
	// (drift.go); DriftLabel is its heading ("Older plan").
	Drift, DriftLabel string

	Seed       int64
	Order      []string
	TargetCmds []kv
	Pinning    string
	Command    string
	Version    string
	Reproduce  string
	// ReproduceNote says what Reproduce could not pin down: a build
	// without a commit, a tree with uncommitted changes, another
	// machine's host inventory.
	ReproduceNote string
	Rebuild       string
	Raw           []rawLink
	Compare       *compareLink // the comparison with the previous run, if any
	Merged        []mergedRow  // percentiles of each cell's merged histogram
	MergedCols    []string
	Method        []string // the Method section, written from the manifest as run
	Answer        string   // at most two sentences, from the verdicts and measured figures
	ClaimList     []string // one line per claim below the answer (claimText)
	FDR           string   // the Benjamini-Hochberg statement across the page's claims
	// Extra holds rendered partials other parts of threadlab add to the
	// page (an across-runs table, a per-fork series chart): each is placed
	// after the verdicts, in order.
	Extra     []extraPartial
	HistFiles []rawLink // histograms/*.hlog published with the page
	LogFiles  []rawLink // logs/*.log, capped and redacted
}

// latestLink is set on reports/<experiment>/index.html, the copy of the
// latest run, to point at its permanent page.
type latestLink struct{ ID, Href string }

type rawLink struct{ Name, Href, What string }

// legendItem is a variant and its colour, for the shared legend of the
// per-second small multiples.
type legendItem struct{ Name, Color string }

type verdictRow struct {
	ID, Says, Status, Strength string
	StatusText                 string // the status as a reader sees it ("not applicable here")
	Reason, Leans              string
	Evidence                   []string
	Numbers                    string
	Seed                       string // the seed's figure beside ours, with the magnitude reading
	Flags                      []string
	Decision                   *record.Decision
	Reading                    reading // direction, size, threshold and outcome (reading.go)
	Then                       thenAdvice
	// HostSpeed says the claim's metric followed the host's own speed
	// across its forks (hostspeed.go); "" when it did not or was not probed.
	HostSpeed string
}

// manifestNotes is what the manifest says of a verdict beside the seed's
// figure: a design fact (shown, not counted as evidence) and, for a
// contradicted or smaller-here result, why it differs (record.Differs).
func manifestNotes(x record.Verdict) string {
	var s string
	if x.DesignFact != "" {
		s += " Design fact, not counted as evidence: " + strings.TrimRight(x.DesignFact, ".") + "."
	}
	if d := x.Differs; d != nil {
		s += " Why it may differ from the seed (" + d.Cause + "): " + strings.TrimRight(d.Why, ".") + "."
	}
	return s
}

// ciLabel names a verdict's interval: 1 - 2 x its one-sided level (90% for
// the calibrated rules' 5% tests); runs decided before levels were
// recorded used 95% intervals.
func ciLabel(x record.Verdict) string {
	if x.Level > 0 && x.Level < 0.5 {
		return fmt.Sprintf("%g%% CI", math.Round(1000*(1-2*x.Level))/10)
	}
	return "95% CI"
}

// magnitude reads the seed's figure against our interval of the same
// ratio: inside it the size is reproduced; below it the effect is larger
// here, above it smaller here. The verdict says whether the direction
// holds; this says whether the size does.
func magnitude(seed float64, x record.Verdict) string {
	if x.Low == 0 && x.High == 0 || math.IsNaN(seed) {
		return ""
	}
	switch {
	case seed < x.Low:
		return "larger here"
	case seed > x.High:
		return "smaller here"
	}
	return "reproduced"
}

type summaryRow struct {
	Variant, Point, Group, Metric string
	N                             int
	Median, CI, Range, CV         string
	CIMissing                     bool
	Flags                         []string
	Primary                       bool
}

// flagRow is one noise or validity flag of one cell, with the metrics it
// was raised on: one line per flag keeps "few-trials on every metric"
// from burying the flag that matters.
type flagRow struct {
	Variant, Point, Group, Flag string
	Metrics                     []string
}

type comparisonRow struct {
	Point, Group, Metric, A, B string
	MedianA, MedianB, Delta    string
	P, PAdj, Verdict, Note     string
	Same                       bool
}

type trialRow struct {
	Cells  []string
	Valid  bool
	Reason string
}

// rawFiles are the data files copied next to the page, with what each holds.
var rawFiles = []struct{ name, what string }{
	{record.TrialsFile, "one row per trial and request group"},
	{record.SummaryFile, "median, CI, spread and noise flags per cell and metric"},
	{record.ComparisonsFile, "variant comparisons (Mann-Whitney U, Holm)"},
	{record.LatencyFile, "latency percentile spectrum of every trial"},
	{record.SeriesFile, "per-second client and server series"},
	{record.VerdictsFile, "claim verdicts with evidence"},
	{record.RunFile, "run metadata: seed, order, commands, state"},
	{record.ManifestFile, "the normalized manifest as run"},
	{record.FingerprintFile, "host and software fingerprint"},
	{record.HostCheckFile, "host check results"},
	{"warmup.csv", "warm-up rounds, excluded from every statistic"},
}

// newRunView derives the page from the run. rawPrefix is prepended to raw
// file links (the experiment's latest copy lives one directory up).
func newRunView(r *record.Run, assetsHost, rawPrefix string, present map[string]bool) (*runView, error) {
	v := &runView{run: r, assetsHost: assetsHost}
	var m *record.ManifestInfo
	if len(r.Manifest) > 0 {
		mi, err := record.ParseManifestInfo(r.Manifest)
		if err != nil {
			v.ManifestErr = fmt.Sprintf("%s could not be read (%v); variant order and the primary metric were inferred from the data", record.ManifestFile, err)
		} else {
			m = &mi
		}
		v.Manifest = string(r.Manifest)
	}
	v.layout = newLayout(r, m)
	l := v.layout

	v.Experiment = experimentName(r)
	v.ID = runID(r)
	if d := catalogDrift(r); d != nil {
		d.Current = laterCurrent(r)
		v.Drift, v.DriftLabel = d.Text(v.Experiment, runRef(r.Dir)), upperFirst(d.Badge())
	}
	v.Title, v.Question, v.Source = r.Meta.Title, r.Meta.Question, r.Meta.Source
	if m != nil {
		v.Title = firstOf(v.Title, m.Title)
		v.Question = firstOf(v.Question, m.Question)
		v.Source = firstOf(v.Source, m.Source)
		v.Notes = m.Notes
	}
	if v.Title == "" {
		v.Title = v.Experiment
	}
	v.State = r.Meta.State
	switch r.Meta.State {
	case "complete":
	case "interrupted":
		v.Banner = "This run was interrupted: only the trials that finished are shown, and cells may have fewer trials than planned. Resume it to complete the design before drawing conclusions."
	case "failed":
		v.Banner = "This run failed: only the trials that finished are shown."
	case "running", "":
		v.Banner = "This run had not finished when this page was rendered (state: " + orDash(r.Meta.State) + "): numbers may change."
	default:
		v.Banner = "Run state: " + r.Meta.State + "."
	}
	if r.Meta.Error != "" && v.Banner != "" {
		v.Banner += " Error: " + r.Meta.Error
	}
	v.Profile = r.Meta.Profile
	v.Started, v.Finished = r.Meta.Started, r.Meta.Finished
	v.Primary, v.PrimaryTxt, v.Measured = l.Primary, metric.Label(l.Primary), l.Measured
	v.Groups, v.Variants, v.Points, v.SweepKeys = l.Groups, l.Variants, l.Points, l.SweepKeys

	mi := readMethod(r.Manifest)
	v.seeds = mi.seeds() // before the verdicts, which show the seed's figure beside ours
	v.SeedTitles = seedTitles(v.Source, v.seeds)
	v.checks = mi.checkMap()
	if err := v.verdicts(); err != nil {
		return nil, err
	}
	v.Method = v.method(mi)
	v.controls = mi.controls()
	v.Answer = v.answer()
	for i, x := range v.recorded {
		v.ClaimList = append(v.ClaimList, claimText(x, v.readings[i]))
	}
	if len(v.recorded) > 0 {
		v.FDR = multiplicity(v.recorded, stats.Alpha).String()
	}
	v.summary()
	v.Wins = newWins(r.Summary, l.Variants, l.Points, l.Measured)
	v.comparisons()
	v.trials()
	v.Warnings = append(slices.Clone(r.Meta.Warnings), r.Problems...)

	if len(r.HostCheck) > 0 {
		d, err := readCheckDoc(r.HostCheck)
		if err != nil {
			v.HostCheckErr = fmt.Sprintf("%s is not valid JSON: %v", record.HostCheckFile, err)
		}
		v.HostCheck = d
	} else {
		v.HostCheck.Checks.Status, v.HostCheck.Checks.Code = -1, -1
	}
	if len(r.Fingerprint) > 0 {
		if n, err := parseJSON(r.Fingerprint); err == nil {
			v.Fingerprint = flatten(n, "", nil)
			v.Host = hostHeadline(v.Fingerprint)
		} else {
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s is unreadable (%v): the host is named from run.json only; regenerate it with threadlab fingerprint --json, or delete it", record.FingerprintFile, err))
		}
		v.Host = firstOf(v.Host, r.Meta.Host)
		var buf bytes.Buffer
		if json.Indent(&buf, r.Fingerprint, "", "  ") == nil {
			v.FingerprintJSON = buf.String()
		} else {
			v.FingerprintJSON = string(r.Fingerprint)
		}
	}

	if names := r.Meta.Hosts.Names(); len(names) > 0 {
		// A multi-host run: every host by role, destination and name.
		v.Host = strings.TrimPrefix(v.Host+"; ", "; ") + "hosts: " + strings.Join(names, ", ")
	}

	inventory, err := seeds.All()
	if err != nil {
		return nil, fmt.Errorf("seed claims inventory: %w (fix %s; go test ./experiments/seeds says where)", err, seeds.File)
	}
	v.reproduction(v.recorded, inventory) // after the host, which each row names
	if v.SeedTables, err = v.seedTables(); err != nil {
		return nil, err
	}

	v.Seed = r.Meta.Seed
	v.Order = r.Meta.Order
	keys := make([]string, 0, len(r.Meta.TargetCmds))
	for k := range r.Meta.TargetCmds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v.TargetCmds = append(v.TargetCmds, kv{k, shellJoin(r.Meta.TargetCmds[k])})
	}
	v.Pinning, v.Command, v.Version = r.Meta.Pinning, r.Meta.Command, r.Meta.Version
	v.Reproduce, v.ReproduceNote = reproduce(v.Experiment, r.Meta)
	v.Rebuild = "threadlab report " + shellQuote("data/"+v.Experiment+"/"+v.ID)
	for _, f := range rawFiles {
		if present[f.name] {
			v.Raw = append(v.Raw, rawLink{Name: f.name, Href: rawPrefix + f.name, What: f.what})
		}
	}

	if c := v.primaryChart(); c != nil {
		v.Charts = append(v.Charts, c)
	}
	if c := v.sweepChart(); c != nil {
		v.Charts = append(v.Charts, c)
	}
	var histProblems []string
	v.hists, histProblems = readHists(r)
	v.Warnings = append(v.Warnings, histProblems...)
	v.Warnings = append(v.Warnings, layoutProblems(r, v.layout)...)
	if r.Dir != "" {
		if _, _, err := record.ReadSteady(r.Dir); err != nil {
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s is unreadable (%v): the steady-state section is left out (restore it from git, or threadlab report --reevaluate the run)", record.SteadyFile, err))
		}
	}
	if len(v.hists) > 0 {
		v.Charts = append(v.Charts, v.burstCharts()...)
		if c := v.spectrumChart(); c != nil {
			v.Charts = append(v.Charts, c)
		}
		if c := v.distributionChart(); c != nil {
			v.Charts = append(v.Charts, c)
		}
		v.Merged, v.MergedCols = v.mergedTable()
	} else if c := v.latencyChart(); c != nil {
		v.Charts = append(v.Charts, c)
	}
	v.Series, v.SeriesNote = v.seriesCharts()
	for _, vr := range l.Variants {
		v.Legend = append(v.Legend, legendItem{vr, v.color(vr)})
	}
	if len(v.Charts)+len(v.Series) > 0 {
		v.Scripts = []string{assetsHost + "echarts.min.js"}
	}
	return v, nil
}

func (v *runView) trialsOf(variant, point, group string) []record.Trial {
	var out []record.Trial
	for _, t := range v.run.Trials {
		if t.Variant == variant && t.Point == point && t.Group == group {
			out = append(out, t)
		}
	}
	return out
}

func (v *runView) validTrial(variant, point, group string, trial int) bool {
	for _, t := range v.run.Trials {
		if t.Variant == variant && t.Point == point && t.Group == group && t.Trial == trial {
			return t.Valid
		}
	}
	return true // latency rows without a trial row: a torn trials.csv; show rather than hide
}

func (v *runView) summaryOf(variant, point, group, name string) *record.Summary {
	for i, s := range v.run.Summary {
		if s.Variant == variant && s.Point == point && s.Group == group && s.Metric == name {
			return &v.run.Summary[i]
		}
	}
	return nil
}

func (v *runView) verdicts() error {
	vs, err := v.run.ReadVerdicts()
	if err != nil {
		return fmt.Errorf("read verdicts: %w (fix or delete the file, then rerun threadlab report)", err)
	}
	for _, x := range vs {
		rd := readClaim(x, v.checks[x.ID], v.seeds[x.ID])
		v.readings = append(v.readings, rd)
		row := verdictRow{ID: x.ID, Says: x.Says, Status: orDash(x.Status), StatusText: statusText(x.Status), Strength: strength(x, v.run.Meta.Warnings), Reason: x.Reason, Leans: x.Leans,
			Evidence: x.Evidence, Flags: x.Flags, Decision: x.Decision, Reading: rd, Then: thenOf(x.Decision, rd, vs, v.checks, v.seeds)}
		var nums []string
		if x.Ratio != 0 {
			s := "ratio " + num(x.Ratio)
			if x.Low != 0 || x.High != 0 {
				s += " (" + ciLabel(x) + " " + num(x.Low) + "–" + num(x.High) + ")"
			}
			nums = append(nums, s)
		}
		if x.P != 0 {
			nums = append(nums, "p = "+pval(x.P))
		}
		row.Numbers = strings.Join(nums, ", ")
		row.HostSpeed = v.spinClaimNote(v.checks[x.ID])
		if sf, ok := v.seeds[x.ID]; ok {
			row.Seed = "The write-up's figure: " + seedNum(sf.Value) + sf.scaledNote()
			if sf.From != "" {
				row.Seed += " (" + strings.TrimRight(sf.From, ".") + ")"
			}
			if m := sf.size(x); m != "" && x.Status != stats.NotApplicable {
				row.Seed += "; size: " + m
			}
		}
		row.Seed += manifestNotes(x)
		v.Verdicts = append(v.Verdicts, row)
	}
	v.recorded = vs
	return nil
}

// strength is a verdict's standing in the decision framework: a supported
// claim is "solid" only when no noise flag (noisy-cv, outlier-trial,
// slow-first, or any code this report does not know) is attached to it, and
// "directional" otherwise. That is stricter than the claim check, which
// may call a noisy claim supported when even the worst trials agree: a row
// someone acts on without reading the page should be clean. Design-size
// flags (few-trials-ci, few-trials-test) do not weaken it: a supported
// claim already passed its test. An inconclusive verdict stays
// inconclusive even when its medians lean one way; the row shows the lean.
// A run whose host failed a host check (hostWarned) has no solid claims
// either: the verdict is the data's, but a reader acting on the row alone
// should know the host was not what the check wants (review reports.md).
func strength(x record.Verdict, warnings []string) string {
	switch x.Status {
	case "supported":
		for _, f := range x.Flags {
			if !sizeFlag(f) {
				return "directional"
			}
		}
		if hostWarned(warnings) {
			return "directional"
		}
		return "solid"
	case "contradicted", "inconclusive", stats.NotApplicable:
		return x.Status
	case "":
		return "inconclusive"
	}
	return x.Status
}

// hostWarned tells whether a run's warnings say its host failed a host
// check (pipeline.State.Warn's "host check …", on this machine or on one
// of --hosts).
func hostWarned(warnings []string) bool {
	return slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, "host check ") })
}

// statusText is a recorded status as the page shows it: "not applicable
// here" for a claim whose precondition failed, "–" for none.
func statusText(s string) string {
	if strings.TrimSpace(s) == "" {
		return orDash(s)
	}
	return stats.StatusText(s)
}

// sizeFlag tells flags about the number of trials from noise flags; a
// verdict flag reads "code (variant, point)".
func sizeFlag(f string) bool {
	code, _, _ := strings.Cut(f, " ")
	return code == "few-trials-ci" || code == "few-trials-test"
}

func (v *runView) rank(variant, point, group string) (int, int, int) {
	idx := func(xs []string, x string) int {
		for i, y := range xs {
			if y == x {
				return i
			}
		}
		return len(xs)
	}
	return idx(v.layout.Variants, variant), idx(v.layout.Points, point), idx(v.layout.Groups, group)
}

func (v *runView) summary() {
	rows := append([]record.Summary(nil), v.run.Summary...)
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		ap, bp := a.Point, b.Point
		av, apt, ag := v.rank(a.Variant, ap, a.Group)
		bv, bpt, bg := v.rank(b.Variant, bp, b.Group)
		if ag != bg {
			return ag < bg
		}
		if (a.Metric == v.layout.Primary) != (b.Metric == v.layout.Primary) {
			return a.Metric == v.layout.Primary
		}
		if am, bm := metric.Rank(a.Metric), metric.Rank(b.Metric); am != bm {
			return am < bm
		}
		if a.Metric != b.Metric {
			return a.Metric < b.Metric
		}
		if apt != bpt {
			return apt < bpt
		}
		return av < bv
	})
	for i := range rows {
		s := &rows[i]
		row := summaryRow{Variant: s.Variant, Point: s.Point, Group: s.Group, Metric: s.Metric, N: s.N,
			Median: num(s.Median), Range: num(s.Min) + "–" + num(s.Max), CV: pct(s.CVPct),
			Flags: splitList(s.Flags), Primary: s.Metric == v.layout.Primary && s.Group == v.layout.Measured}
		if hasCI(s) {
			row.CI = num(s.Low) + "–" + num(s.High)
			if math.Abs(s.Confidence-0.95) > 1e-9 && math.Abs(s.Confidence-95) > 1e-9 {
				row.CI += " (" + confidence(s.Confidence) + ")"
			}
		} else if lo, hi := stats.MedianInterval(diff.Forks(v.run, record.CellKey{Variant: s.Variant, Point: s.Point, Group: s.Group}, s.Metric),
			stats.Alpha, 0, 1, s.Variant+"|"+s.Point+"|"+s.Group+"|"+s.Metric); !math.IsNaN(lo) && !math.IsNaN(hi) {
			// Too few forks for the order-statistic interval: the verdicts'
			// 90% hierarchical bootstrap interval, labelled as such.
			row.CI = num(lo) + "–" + num(hi) + " (90%)"
			row.Flags = slices.DeleteFunc(row.Flags, func(f string) bool { return f == stats.FlagFewTrialsCI })
		} else {
			row.CIMissing = true
		}
		v.Summary = append(v.Summary, row)
	}
	type flagKey struct{ variant, point, group, flag string }
	at := map[flagKey]int{}
	for _, row := range v.Summary {
		for _, f := range row.Flags {
			k := flagKey{row.Variant, row.Point, row.Group, f}
			i, ok := at[k]
			if !ok {
				i = len(v.Flagged)
				at[k] = i
				v.Flagged = append(v.Flagged, flagRow{Variant: row.Variant, Point: row.Point, Group: row.Group, Flag: f})
			}
			v.Flagged[i].Metrics = append(v.Flagged[i].Metrics, row.Metric)
		}
	}
	sort.SliceStable(v.Flagged, func(i, j int) bool {
		a, b := v.Flagged[i], v.Flagged[j]
		av, ap, ag := v.rank(a.Variant, a.Point, a.Group)
		bv, bp, bg := v.rank(b.Variant, b.Point, b.Group)
		if ag != bg {
			return ag < bg
		}
		if ap != bp {
			return ap < bp
		}
		if av != bv {
			return av < bv
		}
		return a.Flag < b.Flag
	})
}

func (v *runView) comparisons() {
	rows := append([]record.Comparison(nil), v.run.Comparisons...)
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		_, apt, ag := v.rank("", a.Point, a.Group)
		_, bpt, bg := v.rank("", b.Point, b.Group)
		if ag != bg {
			return ag < bg
		}
		if (a.Metric == v.layout.Primary) != (b.Metric == v.layout.Primary) {
			return a.Metric == v.layout.Primary
		}
		if am, bm := metric.Rank(a.Metric), metric.Rank(b.Metric); am != bm {
			return am < bm
		}
		return apt < bpt
	})
	for _, c := range rows {
		row := comparisonRow{Point: c.Point, Group: c.Group, Metric: c.Metric, A: c.A, B: c.B,
			MedianA: num(c.MedianA), MedianB: num(c.MedianB), Delta: signedPct(c.DeltaPct),
			P: pval(c.P), PAdj: pval(c.PAdj), Verdict: c.Verdict, Note: c.Note, Same: c.Verdict == "~"}
		v.Comparisons = append(v.Comparisons, row)
	}
}

// claimColumns lists the metrics the recorded verdicts' checks judge that
// shown does not hold, each once, in the verdicts' order; a metric the
// registry does not know is left out (its verdict says why).
func claimColumns(recorded []record.Verdict, checks map[string]*stats.Check, shown []string) []string {
	var out []string
	for _, x := range recorded {
		c := checks[x.ID]
		if c == nil || slices.Contains(shown, c.Metric) || slices.Contains(out, c.Metric) {
			continue
		}
		if _, ok := metric.Lookup(c.Metric); ok {
			out = append(out, c.Metric)
		}
	}
	return out
}

func (v *runView) trials() {
	// The metrics every trial table shows (metric.Shown(InTrials)); the
	// primary metric gets a column of its own, first, when it is not one
	// of them; and every metric a claim judges that is not one of them
	// gets one after them, in the claims' order, so that a reader can
	// check a verdict against its trials (48 of the catalog's claims judge
	// error_pct, which the default columns do not show).
	cols := metric.Shown(metric.InTrials)
	if !slices.Contains(cols, v.layout.Primary) {
		cols = append([]string{v.layout.Primary}, cols...)
	}
	cols = append(cols, claimColumns(v.recorded, v.checks, cols)...)
	v.TrialCols = []string{"seq", "variant", "point", "group", "trial", "valid"}
	for _, name := range cols {
		head := name
		if d, ok := metric.Lookup(name); ok {
			head = d.Header()
		}
		v.TrialCols = append(v.TrialCols, head)
	}
	v.TrialCols = append(v.TrialCols, "reason")
	rows := append([]record.Trial(nil), v.run.Trials...)
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Seq != rows[j].Seq {
			return rows[i].Seq < rows[j].Seq
		}
		_, _, gi := v.rank("", "", rows[i].Group)
		_, _, gj := v.rank("", "", rows[j].Group)
		return gi < gj
	})
	for _, t := range rows {
		valid := "yes"
		if !t.Valid {
			valid = "no"
		}
		cells := []string{strconv.Itoa(t.Seq), t.Variant, t.Point, t.Group, strconv.Itoa(t.Trial), valid}
		for _, name := range cols {
			d, _ := metric.Lookup(name)
			x, ok := metric.Measured(t, name)
			if !ok {
				// No measurement (a NaN, or a column a telemetry flag of
				// this trial spoils, e.g. target CPU after a lost pid):
				// "–", as the claims read it, not the 0 it was stored as.
				cells = append(cells, "–")
			} else if d.Whole {
				cells = append(cells, strconv.FormatFloat(x, 'f', -1, 64))
			} else {
				cells = append(cells, num(x))
			}
		}
		cells = append(cells, t.Reason)
		row := trialRow{Cells: cells, Valid: t.Valid, Reason: t.Reason}
		v.Trials = append(v.Trials, row)
		if !t.Valid {
			v.Invalid = append(v.Invalid, row)
		} else if t.Reason != "" {
			v.Warned = append(v.Warned, row)
		}
	}
}
