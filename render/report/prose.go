package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// methodInfo is the manifest as run (record.ManifestInfo, its one reader)
// with its claims' checks decoded into stats.Check, as the Method section
// and the claims' seed figures read it.
type methodInfo struct {
	record.ManifestInfo
	checks map[string]*stats.Check // by claim ID
}

// seedFigure is a seed write-up's number for a claim (experiments.SeedFigure);
// Value is NaN when the write-up gave none.
type seedFigure struct {
	Value  float64
	From   string
	Point  string   // our comparable unit, "" for the deciding one
	Scaled *float64 // the figure at this profile's scale, nil when the manifest gives none (seedtable.go)
	// Band is the claim's two-sided band when its check is one of equality
	// (stats.Check.Band: a tie's [at_least, at_most], flat_over's
	// [1/(1+tolerance), 1+tolerance]), nil otherwise: a seed
	// figure and an interval that both lie inside it reproduce the claim's
	// size, whatever the digits (seedtable.go, size).
	Band *[2]float64
}

// readMethod decodes the manifest for the Method section and the claims'
// seed figures; nil when there is no manifest, or it or a claim's check
// does not decode.
func readMethod(manifest []byte) *methodInfo {
	if len(manifest) == 0 {
		return nil
	}
	m, err := record.ParseManifestInfo(manifest)
	if err != nil {
		return nil
	}
	mi := &methodInfo{ManifestInfo: m, checks: map[string]*stats.Check{}}
	for _, c := range m.Claims {
		ch := new(stats.Check)
		if c.Check.Kind != 0 && c.Check.Decode(ch) != nil {
			return nil
		}
		mi.checks[c.ID] = ch
	}
	return mi
}

// seeds maps claim IDs to their seed figures.
func (mi *methodInfo) seeds() map[string]seedFigure {
	out := map[string]seedFigure{}
	if mi == nil {
		return out
	}
	for _, c := range mi.Claims {
		if c.Seed != nil {
			v := math.NaN() // the write-up gave no figure
			if c.Seed.Value != nil {
				v = *c.Seed.Value
			}
			sf := seedFigure{Value: v, From: c.Seed.From, Point: c.Seed.Point, Scaled: c.Seed.Scaled}
			if ch := mi.checks[c.ID]; ch != nil {
				if lo, hi, ok := ch.Band(); ok {
					sf.Band = &[2]float64{lo, hi}
				}
			}
			out[c.ID] = sf
		}
	}
	return out
}

// controls is the set of variants the manifest marks role: control: the
// answer ranks the others and gives the controls apart.
func (mi *methodInfo) controls() map[string]bool {
	out := map[string]bool{}
	if mi == nil {
		return out
	}
	for _, vi := range mi.Variants {
		if vi.Role == experiments.RoleControl {
			out[vi.Name] = true
		}
	}
	return out
}

// checkMap maps claim IDs to their checks as run (readClaim tells a
// shortfall from a reversal with them).
func (mi *methodInfo) checkMap() map[string]*stats.Check {
	if mi == nil {
		return map[string]*stats.Check{}
	}
	return mi.checks
}

// describeGroup says in words what load one request group puts on the
// target. swept are the sweep dimensions that set its load figure (the
// measured group's only): the figure then varies by point, and the prose
// names it N and gives the sweep's values, instead of the group's own
// figure, which the sweep replaced (a fixed-rate sweep's group has no
// rate of its own, and read "an open model at 0 requests per second").
func describeGroup(g record.LoadGroupInfo, swept ...record.SweepInfo) string {
	users, rate, burst := strconv.Itoa(g.Users), num(g.Rate), strconv.Itoa(g.Burst)
	prealloc := ""
	if g.Preallocate > 0 {
		prealloc = strconv.Itoa(g.Preallocate)
	}
	var from []string
	for _, d := range swept {
		switch d.Load {
		case "users":
			users = "N"
		case "rate":
			rate = "N"
		case "connections":
			rate, prealloc = "N", "N"
		case "burst":
			burst = "N"
		default:
			continue
		}
		from = append(from, fmt.Sprintf("N the sweep's %s (%s)", d.Key, strings.Join(d.Values, ", ")))
	}
	var what string
	switch g.Model {
	case "burst":
		what = fmt.Sprintf("a burst of %s requests released at the same instant on connections opened beforehand; each trial is timed until the last answer", burst)
	case "open":
		what = fmt.Sprintf("an open model at %s requests per second for %s, latency timed from each request's intended send time (no coordinated omission)", rate, orDash(g.Duration))
	case "ramp":
		var st []string
		for _, s := range g.Stages {
			if s.Rate > 0 {
				st = append(st, fmt.Sprintf("%s req/s for %s", num(s.Rate), s.Duration))
			} else {
				st = append(st, fmt.Sprintf("%d users for %s", s.Users, s.Duration))
			}
		}
		what = "a ramp: " + strings.Join(st, ", then ")
	default:
		what = fmt.Sprintf("a closed model of %s users for %s, each sending its next request when the last is answered", users, orDash(g.Duration))
		if len(g.Think) == 2 {
			what += fmt.Sprintf(" after a think time of %s to %s", g.Think[0], g.Think[1])
		}
	}
	var paths []string
	for _, r := range g.Requests {
		m := r.Method
		if m == "" {
			m = "GET"
		}
		paths = append(paths, m+" "+r.Path)
	}
	if len(paths) > 0 {
		what += " (" + strings.Join(paths, ", ") + ")"
	}
	if prealloc != "" {
		what += fmt.Sprintf(", with %s connections opened at once before the first send (k6's preAllocatedVUs)", prealloc)
	}
	if g.KeepAlive != nil && !*g.KeepAlive {
		what += ", a new connection per request"
	}
	if g.Start != "" {
		what += ", starting " + g.Start + " into the trial"
	}
	if len(from) > 0 {
		what += "; " + strings.Join(from, "; ")
	}
	return what
}

// method writes the Method section from the manifest as run and run.json:
// what was compared, the load, warm-up, trials and their order, pinning
// and the gate before each trial.
func (v *runView) method(mi *methodInfo) []string {
	if mi == nil {
		return nil
	}
	var out []string
	var vs []string
	for _, name := range v.layout.Variants {
		vi, _ := mi.Variants.Get(name)
		d := vi.Describe
		if d == "" {
			d = vi.Target
		}
		if vi.Role == experiments.RoleControl {
			d = strings.TrimSpace("the control: " + d)
		}
		if d != "" {
			vs = append(vs, name+" ("+d+")")
		} else {
			vs = append(vs, name)
		}
	}
	s := fmt.Sprintf("Compared %d variants: %s.", len(vs), strings.Join(vs, "; "))
	if len(v.SweepKeys) > 0 {
		s += fmt.Sprintf(" Each was run at %d point%s of a sweep over %s.", len(v.Points), plural(len(v.Points) != 1), strings.Join(v.SweepKeys, ", "))
	}
	for _, x := range v.run.Meta.Skipped {
		s += fmt.Sprintf(" Variant %s did not run on this host: %s; the claims that read it are not applicable here.", x.Variant, strings.TrimRight(x.Reason, "."))
	}
	out = append(out, s)
	groups := mi.Load.Groups
	if len(groups) == 0 {
		groups = []record.LoadGroupInfo{mi.Load.LoadGroupInfo}
	}
	// The sweep sets the measured group's load (experiments.LoadGroups):
	// the only group, or the one load.measure names.
	sweptFor := func(g record.LoadGroupInfo) []record.SweepInfo {
		if len(groups) > 1 && g.Name != mi.Load.Measure {
			return nil
		}
		return mi.Sweep
	}
	if len(groups) == 1 {
		out = append(out, "Load: "+describeGroup(groups[0], sweptFor(groups[0])...)+".")
	} else {
		var gs []string
		for _, g := range groups {
			gs = append(gs, fmt.Sprintf("%q: %s", g.Name, describeGroup(g, sweptFor(g)...)))
		}
		out = append(out, fmt.Sprintf("Load: %d request groups at once, measured separately; the question is answered by %q. %s.", len(groups), v.Measured, strings.Join(gs, "; ")))
	}
	meta := v.run.Meta
	unit := "trial"
	if meta.Forks != "" {
		unit = "fork"
		out = append(out, v.design(mi))
		if s := cellOutcome(meta); s != "" {
			out = append(out, s)
		}
		if s := wallClock(meta.Time); s != "" {
			out = append(out, s)
		}
		if s := resumes(meta); s != "" {
			out = append(out, s)
		}
	} else {
		out = append(out, v.trialDesign(mi))
	}
	s = pinningAsked(mi)
	if len(meta.Affinity) > 0 {
		s += " " + readBack(meta.Affinity)
	}
	if g := v.generatorShare(mi.Pinning.Generator != ""); g != "" {
		s += " " + g
	}
	if mi.CoolDown.MaxBusyPct > 0 && mi.CoolDown.MaxBusyPct < 100 {
		s += fmt.Sprintf(" Before each %s the host had to fall below %s%% CPU busy outside threadlab (waiting at most %s).", unit, num(mi.CoolDown.MaxBusyPct), orDash(mi.CoolDown.MaxWait))
	}
	out = append(out, s)
	if meta.Forks != "" {
		out = append(out, fmt.Sprintf("Statistics: per cell the median of its valid forks, each fork the median of its valid iterations in steady state%s, with a 95%% confidence interval of the median%s; variants compared with a Mann-Whitney U test on the fork medians, Holm-corrected; the primary metric is %s of the %q group.", v.everyIteration(), v.fewForksInterval("forks"), metric.Label(v.Primary), v.Measured))
		return out
	}
	out = append(out, fmt.Sprintf("Statistics: per cell the median of the valid trials with a 95%% confidence interval of the median%s; variants compared with a Mann-Whitney U test, Holm-corrected; the primary metric is %s of the %q group.", v.fewForksInterval("trials"), metric.Label(v.Primary), v.Measured))
	return out
}

// trialDesign is the Design sentence of a run from before forks x
// iterations (run.json without forks): trials, one JVM each or one per cell.
func (v *runView) trialDesign(mi *methodInfo) string {
	trials := mi.Trials
	if v.run.Meta.Trials > 0 {
		trials = v.run.Meta.Trials
	}
	fresh := "a fresh JVM for every trial"
	if mi.FreshJVM != nil && !*mi.FreshJVM {
		fresh = "one JVM per cell, kept across its trials"
	}
	order := mi.Order
	switch order {
	case "", "interleaved":
		order = "interleaved: trial k of every cell runs before trial k+1, in an order shuffled with the run's seed, so slow drift of the host spreads over all variants"
	case "sequential":
		order = "sequential: every trial of one cell before the next cell"
	}
	warm := "no warm-up"
	if mi.Load.Warmup.Text != "" {
		warm = warmupText(mi.Load.Warmup.Text).phrase() + " of the same load before each trial, excluded from every statistic (warmup.csv)"
	}
	return fmt.Sprintf("Design: %d trials per cell (%d recorded in this run), %s; %s. Order %s.", trials, len(v.run.Trials), fresh, warm, order)
}

// design is the Design sentence of a forks x iterations run: "5 forks x 4
// iterations per cell (a fresh JVM per fork, ...)", the noise gate and
// the retry budget.
func (v *runView) design(mi *methodInfo) string {
	meta := v.run.Meta
	its := max(meta.Iterations, 1)
	what := "JVM"
	for _, x := range mi.Variants {
		if x.Target == "" {
			what = "process"
		}
	}
	var within []string
	within = append(within, "a fresh "+what+" per fork")
	if mi.Load.Warmup.Text != "" {
		within = append(within, warmupText(mi.Load.Warmup.Text).phrase()+" of the same load before its first iteration, excluded from every statistic (warmup.csv)")
	} else {
		within = append(within, "no warm-up")
	}
	if mi.CoolDown.Iteration != "" && its > 1 {
		within = append(within, mi.CoolDown.Iteration+" between iterations")
	}
	order := mi.Order
	switch order {
	case "", "interleaved":
		order = "interleaved: fork k of every cell runs before fork k+1, in an order shuffled with the run's seed, so slow drift of the host spreads over all variants"
	case "sequential":
		order = "sequential: every fork of one cell before the next cell"
	}
	s := fmt.Sprintf("Design: %s fork%s x %d iteration%s per cell (%s). A fork is the unit of replication: the iterations of one %s share its state (JIT, heap, pools), so they are summarised per fork first. Order %s.",
		meta.Forks, plural(meta.Forks != "1"), its, plural(its != 1), strings.Join(within, ", "), what, order)
	if strings.Contains(meta.Forks, "..") {
		s += " Forks past the first number ran only while a claim reading the cell was undecided (group-sequential looks)."
	}
	var gate []string
	if p := mi.Noise.MaxOutsidePct; p != nil && *p < 10000 { // 100000 opens the gate (tests)
		gate = append(gate, fmt.Sprintf("an iteration during which the host used more than %s%% of one core outside threadlab is invalid", num(*p)))
	}
	if mi.Retries != nil {
		gate = append(gate, fmt.Sprintf("invalid iterations and lost forks were re-run within a budget of %d per cell", *mi.Retries))
	}
	if len(gate) > 0 {
		s += " " + upperFirst(strings.Join(gate, "; ")) + "."
	}
	return s
}

// cellOutcome says where the cells stopped and how many re-runs each took.
func cellOutcome(meta record.Meta) string {
	if len(meta.Cells) == 0 {
		return ""
	}
	label := func(c record.CellStop) string {
		if c.Point == "" {
			return c.Variant
		}
		return c.Variant + " " + pointLabel(c.Point, meta.SweepKeys)
	}
	planned, retries := true, 0
	var rerun []string
	for _, c := range meta.Cells {
		planned = planned && c.Reason == "planned n reached"
		retries += c.Retries
		if c.Retries > 0 {
			rerun = append(rerun, fmt.Sprintf("%s: %d", label(c), c.Retries))
		}
	}
	if planned && retries == 0 {
		return fmt.Sprintf("Every cell ended at its planned %d fork%s, with no re-run.", meta.Cells[0].Planned, plural(meta.Cells[0].Planned != 1))
	}
	if planned {
		return fmt.Sprintf("Every cell ended at its planned %d fork%s; %d re-run%s (%s).", meta.Cells[0].Planned, plural(meta.Cells[0].Planned != 1), retries, plural(retries != 1), strings.Join(rerun, ", "))
	}
	var parts []string
	for _, c := range meta.Cells {
		p := fmt.Sprintf("%s: %d fork%s, %s", label(c), c.Forks, plural(c.Forks != 1), c.Reason)
		if c.Retries > 0 {
			p += fmt.Sprintf(", %d re-run%s", c.Retries, plural(c.Retries != 1))
		}
		parts = append(parts, p)
	}
	return "Where each cell stopped: " + strings.Join(parts, "; ") + "."
}

// wallClock says where the run's wall time went (run.json's time).
func wallClock(w *record.WallClock) string {
	if w == nil || w.Wall <= 0 {
		return ""
	}
	s := fmt.Sprintf("Wall time: %.0f s, of which %.0f s measured load (%.0f%%; dead time %.0f%%)", w.Wall, w.Measured, 100*w.Measured/w.Wall, 100-100*w.Measured/w.Wall)
	var parts []string
	for _, b := range []string{"starts", "warm-ups", "cool-downs", "stops", "build", "setup", "finishing", "other"} {
		if x := w.Stages[b]; x >= 0.005*w.Wall {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", b, 100*x/w.Wall))
		}
	}
	if len(parts) > 0 {
		s += "; the rest went to " + strings.Join(parts, ", ")
	}
	return s + "."
}

// resumes says when an interrupted run was continued (run.json's resumes):
// its trials then come from more than one sitting, on the same version and
// a matching fingerprint (pipeline/resume.go), and the wall time above is
// the sum of the sittings, not the span from start to finish.
func resumes(meta record.Meta) string {
	if len(meta.Resumes) == 0 {
		return ""
	}
	var at []string
	for _, r := range meta.Resumes {
		at = append(at, fmt.Sprintf("at %s with %d of %d forks done", r.At, r.Done, r.Of))
	}
	return fmt.Sprintf("The run was interrupted and resumed %s (%s): %d sittings, one threadlab version, and on each resume a fingerprint that matched the start's in every field that can move the numbers; the wall time above is the sittings' sum.",
		times(len(meta.Resumes)), strings.Join(at, "; "), len(meta.Resumes)+1)
}

func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// pinningAsked is what the manifest's pinning asked for.
func pinningAsked(mi *methodInfo) string {
	var pin []string
	for _, p := range []struct{ who, cpus string }{{"target", mi.Pinning.Target}, {"services", mi.Pinning.Services}, {"load generator", mi.Pinning.Generator}} {
		if p.cpus != "" {
			pin = append(pin, p.who+" on CPU "+p.cpus)
		}
	}
	if len(pin) == 0 {
		return "No CPU pinning: target and load generator share the host's CPUs."
	}
	return "Pinning: " + strings.Join(pin, ", ") + "."
}

// readBack says which CPUs each role's processes could run on, as the
// kernel reported them during the run, and warns where that is not the
// pinning asked for.
func readBack(as []record.Affinity) string {
	var roles []string
	by := map[string][]record.Affinity{}
	for _, a := range as {
		if by[a.Role] == nil {
			roles = append(roles, a.Role)
		}
		by[a.Role] = append(by[a.Role], a)
	}
	var got, bad []string
	for _, role := range roles {
		var parts []string
		for _, a := range by[role] {
			p := fmt.Sprintf("%s (%d process%s", cpuWord(a.Actual), a.Processes, map[bool]string{true: "es"}[a.Processes != 1])
			if a.Mixed {
				p += ", threads differ"
			}
			parts = append(parts, p+")")
			if a.Mismatch {
				pids := make([]string, len(a.Pids))
				for i, x := range a.Pids {
					pids[i] = fmt.Sprint(x)
				}
				bad = append(bad, fmt.Sprintf("the %s was to run on %s, but %d process%s could run on %s (pid %s)", role, cpuWord(a.Asked), a.Processes, map[bool]string{true: "es"}[a.Processes != 1], cpuWord(a.Actual), strings.Join(pids, ", ")))
			}
		}
		got = append(got, role+" "+strings.Join(parts, " and "))
	}
	s := "Read back from the kernel during the run: " + strings.Join(got, "; ") + "."
	if len(bad) > 0 {
		s += " Warning: not the pinning asked: " + strings.Join(bad, "; ") + "."
	}
	return s
}

// cpuWord is "CPU 1" or "CPUs 0-1" for a kernel CPU list.
func cpuWord(list string) string {
	if strings.ContainsAny(list, ",-") {
		return "CPUs " + list
	}
	return "CPU " + list
}

func plural(many bool) string {
	if many {
		return "s"
	}
	return ""
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	return string(unicode.ToUpper(r[0])) + string(r[1:])
}

// measured is a verdict's figures: ratio, its interval and p. The
// interval is two-sided at 1 - 2 x the test's one-sided level (90% at
// 0.05), each end a one-sided bound at that level: the verdict's own
// coverage (ciLabel), not the summary tables' 95%.
func measured(x record.Verdict) string {
	var nums []string
	if x.Ratio != 0 {
		r := "measured " + num(x.Ratio) // a ratio or a value: the check, not shown here, says which
		if x.Low != 0 || x.High != 0 {
			r += ", " + ciLabel(x) + " " + num(x.Low) + "–" + num(x.High)
		}
		nums = append(nums, r)
	}
	if x.P != 0 {
		nums = append(nums, "p = "+pval(x.P))
	}
	return strings.Join(nums, ", ")
}

// because is the decision framework's reason for a row: the measured
// figures and the seed's, or the verdict's own reason when it has no
// ratio (an absolute check).
func because(x record.Verdict, seed seedFigure) string {
	s := measured(x)
	if x.Status == stats.NotApplicable {
		s = strings.TrimRight(x.Reason, ".")
	}
	if s == "" {
		s = strings.TrimRight(x.Reason, ".")
	}
	if s == "" {
		s = "no figures recorded"
	}
	if seed.From != "" || seed.Value != 0 {
		s += "; the seed: " + seedNum(seed.Value) + seed.scaledNote() + " (" + strings.TrimRight(seed.From, ".") + ")"
	}
	return s
}

func lowerFirst(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return s
	}
	// Keep proper nouns and acronyms ("WebFlux", "I/O", "JDBC") as written:
	// lower only a first word that is capitalised and lower case after.
	first := []rune(f[0])
	if !unicode.IsUpper(first[0]) {
		return s
	}
	for _, r := range first[1:] {
		if !unicode.IsLower(r) {
			return s
		}
	}
	return string(unicode.ToLower(first[0])) + s[len(string(first[0])):]
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// seedNum is a seed figure in words: "no figure" when the write-up gave none.
func seedNum(v float64) string {
	if math.IsNaN(v) {
		return "no figure"
	}
	return num(v)
}

// fewForksInterval qualifies the method's "95% confidence interval of the
// median" when some cell has too few replicates for it (5 or fewer):
// those cells print the verdicts' 90% interval, labelled "(90%)", or none.
func (v *runView) fewForksInterval(unit string) string {
	if v.run == nil {
		return ""
	}
	for i := range v.run.Summary {
		if !hasCI(&v.run.Summary[i]) {
			return " (cells with too few " + unit + " for it show the verdicts' 90% interval, labelled, or none)"
		}
	}
	return ""
}

// everyIteration qualifies "in steady state" for a run judged with
// per-metric selection (steady.json every_iteration): counts that do not
// warm up read every valid iteration. Empty for runs judged before.
func (v *runView) everyIteration() string {
	if v.run == nil || v.run.Dir == "" {
		return ""
	}
	st, ok, err := record.ReadSteady(v.run.Dir)
	if err != nil || !ok || len(st.EveryIteration) == 0 {
		return ""
	}
	return " (every valid iteration for counts that do not warm up, such as thread counts and errors)"
}
