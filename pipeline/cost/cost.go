// Package cost plans a manifest and predicts its wall time before it runs,
// as JMH prints an estimate first: what `threadlab run --dry-run` prints
// and where the console's ETA starts.
//
// Data flow: the manifest (cells, forks, iterations, durations) and the
// latest earlier run of the experiment under data/ (run.json's time split
// and trials.csv; for an experiment that never ran, the start and stop
// costs of another experiment's run on the same targets) -> a Model, the seconds per fork and per iteration ->
// Predict's Estimate (wall, measured and dead time) -> Estimate.Write.
package cost

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/judge/verdicts"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/pipeline/replicate"
	"github.com/threadlab/threadlab/stats/dimension"
	"github.com/threadlab/threadlab/store/record"
)

// Assumed costs when no earlier run of the experiment measured them.
const (
	// DefaultSpringStartS is a built-in Spring Boot target's start on
	// this project's 2-core VM (pool-sweep, Dec 2026: 12-17 s, median 15 s,
	// with 100,000 orders seeded).
	DefaultSpringStartS = 15.0
	// DefaultCommandStartS is a command target's start (a small server).
	DefaultCommandStartS = 1.0
	// DefaultBurstS is the window of a burst, whose length the manifest
	// does not say: the time until the last answer.
	DefaultBurstS = 1.0
	// DefaultStopS is a target's shut-down (SIGTERM until it is gone).
	DefaultStopS = 0.5
	// SteadyWarmupRounds is the rounds per fork an until-steady warm-up
	// is planned at until a run of the manifest measured one by today's
	// rule. Under the first rule (last 4 rounds against the 4 before) the
	// catalog's runs took 12.4 (pool-sweep 20261201T181903Z), 13.7
	// (boot-versions 20261201T194927Z) and 26.4 (jep491-pinning
	// 20261201T174903Z) rounds a fork. The rule with a drift bound (issue
	// 20) replayed on the published series warms io-bound's forks 16
	// rounds longer (about 33) and boot-versions' 32 longer (about 46),
	// and a flat fork stops by round 20 in 83% of simulated series: 32.
	SteadyWarmupRounds = 32
	// SteadyCPUWarmupRounds replaces it for a manifest whose warm-up
	// waits for the target's CPU too (Manifest.WarmupMetrics): in issue
	// 20's pilot (io-bound's 600-request burst, one fork a variant, 60
	// bursts) the CPU-seconds of a burst fell 5-7x and settled after 30-40
	// bursts (18,000-24,000 requests), WebFlux's after about 50. A burst
	// manifest only: a timed round of 1 s serves thousands of requests,
	// so the CPU of a timed load is planned at SteadyWarmupRounds until a
	// run has measured it (unmeasured so far).
	SteadyCPUWarmupRounds = 50
)

// Model is the seconds a run spends per fork and per iteration.
type Model struct {
	StartS     float64 // launch until ready
	WarmupS    float64 // the warm-up load before the first iteration
	StopS      float64 // shut-down
	ForkPauseS float64 // cool-down gate and pause around a fork
	WindowS    float64 // one measured iteration (load.Run, drain included)
	PauseS     float64 // between two iterations of a fork
	FixedS     float64 // once per run: build, host check, services, report

	steadyWarmup bool   // WarmupS was measured under an until-steady warm-up
	untilSteady  bool   // the run warmed up until steady, under today's rule or an earlier one
	cpu          string // env.CPU.Identity of the run that measured these costs ("" unknown)
}

// Fork is the seconds of one fork of iterations measured windows.
func (c Model) Fork(iterations int) float64 {
	return c.StartS + c.WarmupS + c.StopS + c.ForkPauseS + float64(iterations)*c.WindowS + float64(max(iterations-1, 0))*c.PauseS
}

// Estimate is a manifest's plan and its predicted wall time, before it runs.
type Estimate struct {
	Experiment, Profile string
	Cells               []replicate.CellID
	Forks               experiments.Rounds
	Iterations          int
	Costs               Model
	// From says where the costs come from: an earlier run directory, or
	// the manifest's durations and assumed start costs.
	From     string
	Measured bool // the start cost was measured (From is a run)
	WallS    float64
	MaxWallS float64 // with forks: {min, max}, if every round runs
	MeasureS float64 // measured load of the planned forks
	// CPU is the processor of the run the costs were measured on
	// (its fingerprint's env.CPU.Identity; "" when unknown or assumed), HostCPU the one this
	// plan is for (PredictOn; "" when not given). Starts and until-steady
	// warm-ups are the host's: call-depth's warm-ups took 45-57 s a fork on
	// an Intel Xeon and 78-91 s on an AMD EPYC, same manifest and rule.
	CPU, HostCPU string
}

// OtherCPU says whether the plan borrows costs measured on a processor
// other than the host's, when both are known.
func (e Estimate) OtherCPU() bool {
	return e.Measured && e.CPU != "" && e.HostCPU != "" && e.CPU != e.HostCPU
}

// Predict plans m and predicts its wall time from the latest earlier
// run of the experiment under dataDir (data/<name>/<run>/run.json with its
// time split), as JMH prints an estimate before a run: the measured start,
// warm-up, stop and pause costs per fork and window cost per iteration. A
// run of another profile lends only its start and stop costs, and so does,
// for an experiment that never ran, the newest run of another experiment
// on the same built-in targets and Spring Boot release (siblingRun);
// without any, the manifest's durations and assumed start costs are used,
// and the estimate says so.
func Predict(m *experiments.Manifest, dataDir string) (Estimate, error) {
	return PredictOn(m, dataDir, "")
}

// PredictOn is Predict for a host whose processor is cpu (env.CPU.Identity:
// the fingerprint's model name with family and model numbers, as
// env.CPUModel reads them): among the earlier runs that can lend costs it
// prefers the newest measured on that processor (after the profile and,
// for an until-steady manifest, the kind of warm-up: previousRun),
// and the estimate says when it had to borrow from another (OtherCPU).
// An empty cpu prefers nothing, as Predict.
func PredictOn(m *experiments.Manifest, dataDir, cpu string) (Estimate, error) {
	e := Estimate{Experiment: m.Name, Profile: m.ProfileName(), Forks: m.Forks, Iterations: max(m.Iterations, 1), HostCPU: cpu}
	for _, c := range replicate.Cells(m) {
		e.Cells = append(e.Cells, c.ID())
	}
	if len(e.Cells) == 0 {
		return e, fmt.Errorf("%s: no cells to plan (the manifest has no variants)", m.File)
	}
	manifestCosts, err := fromManifest(m)
	if err != nil {
		return e, err
	}
	e.Costs, e.From = manifestCosts, "the manifest's durations and an assumed start cost"
	if prev, dir, same := previousRun(m, dataDir, cpu); prev != nil {
		e.Measured, e.CPU = true, prev.cpu
		if same {
			e.Costs, e.From = *prev, dir
		} else {
			e.Costs.StartS, e.Costs.StopS, e.Costs.FixedS = prev.StartS, prev.StopS, prev.FixedS
			e.From = dir + " (another profile: its start and stop costs; warm-up and windows from the manifest)"
		}
	} else if sib, dir := siblingRun(m, dataDir, cpu); sib != nil {
		e.Measured, e.CPU = true, sib.cpu
		e.Costs.StartS, e.Costs.StopS, e.Costs.FixedS = sib.StartS, sib.StopS, sib.FixedS
		e.From = dir + " (another experiment on the same targets and Spring Boot line: its start and stop costs; warm-up and windows from the manifest)"
	}
	// The pause between iterations is a setting of this manifest, not a
	// cost the earlier run measured.
	e.Costs.PauseS = manifestCosts.PauseS
	// What a timed window costs beyond its duration (drain, scrape): a
	// warm-up round pays it too.
	drain := max(0, e.Costs.WindowS-manifestCosts.WindowS)
	// A window the manifest has since lengthened takes at least its new
	// duration. A burst has no duration in the manifest (its window is the
	// assumed DefaultBurstS): a measured burst window stands, or a burst
	// of 0.86 s (boot-versions 20261201T194927Z) would be planned as 1 s
	// of measurement and the dead time printed 4 points low.
	if !e.Measured || !burst(m) {
		e.Costs.WindowS = max(e.Costs.WindowS, manifestCosts.WindowS)
	}
	if m.Load.Warmup.Steady() {
		// An until-steady warm-up runs at least the rule's rounds and min.
		// Unless an until-steady run of this profile measured it, it is
		// planned at the rounds such runs take (an earlier fixed warm-up
		// says nothing about them).
		least := manifestCosts.WarmupS
		if !e.Costs.steadyWarmup {
			least = max(least, typicalSteadyWarmupS(m, e.Costs, drain))
		}
		e.Costs.WarmupS = max(e.Costs.WarmupS, least)
		// A fork's warm-up ends at the round that reaches max: a run
		// measured under a longer max (concurrency-sweep 20261204T161358Z:
		// 59 s a fork at a 1-minute cap) plans no more than the new one.
		e.Costs.WarmupS = min(e.Costs.WarmupS, cappedWarmupS(m, e.Costs, drain))
	}
	cells := float64(len(e.Cells))
	e.WallS = e.Costs.FixedS + cells*float64(m.Forks.Min)*e.Costs.Fork(e.Iterations)
	e.MaxWallS = e.Costs.FixedS + cells*float64(m.Forks.Max)*e.Costs.Fork(e.Iterations)
	e.MeasureS = cells * float64(m.Forks.Min*e.Iterations) * e.Costs.WindowS
	return e, nil
}

// burst says whether m's measured group is a burst, whose window the
// manifest does not give.
func burst(m *experiments.Manifest) bool {
	g := m.Measured()
	return g != nil && g.Model == "burst"
}

// fromManifest are the costs the manifest's durations imply.
func fromManifest(m *experiments.Manifest) (Model, error) {
	c := Model{StartS: DefaultCommandStartS, StopS: DefaultStopS, PauseS: m.CoolDown.Iteration.Seconds(),
		ForkPauseS: m.CoolDown.Pause.Seconds(), WarmupS: warmupS(m)}
	if slices.ContainsFunc(m.Variants, func(v experiments.Variant) bool { return v.Target != "" }) {
		c.StartS = DefaultSpringStartS
	}
	cell := replicate.Cells(m)[0]
	groups, err := m.LoadGroups(cell.Variant, cell.Point)
	if err != nil {
		return c, fmt.Errorf("%s: %w", m.File, err)
	}
	c.WindowS = windowOf(groups).Seconds()
	if c.WarmupS > 0 {
		c.WarmupS = max(c.WarmupS, min(c.WindowS, DefaultBurstS)) // a burst warm-up runs at least once
	}
	return c, nil
}

// warmupS is the warm-up a fork is planned with: a fixed warm-up's
// duration; for until: steady, its min, or the 2·4 rounds the stopping
// rule reads if they take longer (the least it can run: a run that
// measured its warm-ups plans with what they took instead). Variants with
// measure: cold have none; the average over variants is returned.
func warmupS(m *experiments.Manifest) float64 {
	w := m.Load.Warmup
	if w.Max <= 0 || len(m.Variants) == 0 {
		return 0
	}
	per := w.Min.Seconds()
	if w.Steady() {
		round := DefaultBurstS
		if g := m.Measured(); g != nil && g.Model != "burst" {
			round = min(experiments.DefaultWarmupRound, w.Max).Seconds()
		}
		per = max(per, 8*round)
	}
	return per * warmShare(m)
}

// typicalSteadyWarmupS is an until-steady warm-up planned before a run
// measured one: SteadyWarmupRounds rounds (SteadyCPUWarmupRounds when it
// waits for the target's CPU too), each a burst (its window and
// the pause after it) or a timed round with the window's drain, at least
// min and at most max, averaged over the variants as warmupS.
func typicalSteadyWarmupS(m *experiments.Manifest, c Model, drain float64) float64 {
	w := m.Load.Warmup
	if w.Max <= 0 || len(m.Variants) == 0 {
		return 0
	}
	round := c.WindowS + c.PauseS
	if !burst(m) {
		round = min(experiments.DefaultWarmupRound, w.Max).Seconds() + drain
	}
	rounds := float64(SteadyWarmupRounds)
	if burst(m) && len(m.WarmupMetrics()) > 1 {
		rounds = SteadyCPUWarmupRounds
	}
	per := min(max(rounds*round, w.Min.Seconds()), w.Max.Seconds())
	return per * warmShare(m)
}

// cappedWarmupS is the longest an until-steady warm-up can run: its max,
// then the round under way (a burst and the pause after it, or a timed
// round with the window's drain), averaged over the variants as warmupS.
func cappedWarmupS(m *experiments.Manifest, c Model, drain float64) float64 {
	w := m.Load.Warmup
	round := c.WindowS + c.PauseS
	if !burst(m) {
		round = min(experiments.DefaultWarmupRound, w.Max).Seconds() + drain
	}
	return (w.Max.Seconds() + round) * warmShare(m)
}

// warmShare is the share of m's variants that warm up (not measure: cold).
func warmShare(m *experiments.Manifest) float64 {
	warm := 0
	for _, v := range m.Variants {
		if v.Measure != experiments.MeasureCold {
			warm++
		}
	}
	return float64(warm) / float64(len(m.Variants))
}

// windowOf is how long one iteration's load runs: its longest group.
func windowOf(groups []load.Group) time.Duration {
	var w time.Duration
	for _, g := range groups {
		d := g.Duration
		switch g.Model {
		case load.Burst:
			d = time.Duration(DefaultBurstS * float64(time.Second))
		case load.Ramp:
			d = 0
			for _, st := range g.Stages {
				d += st.Duration
			}
		}
		w = max(w, g.Start+d)
	}
	return w
}

// previousRun returns the costs measured by the latest run of m under
// dataDir that recorded its time split, preferring one of the same
// profile (same reports whether it is); within that, when m warms up until
// steady, one whose warm-up ran until steady (under today's rule or an
// earlier one: a measured lower bound either way); and within
// that, one measured on the processor cpu (when cpu is not ""). The
// profile first, because another profile lends only its start and stop
// costs; the warm-up rule before the processor, because a warm-up that ran
// until steady on another processor is nearer the truth than the 32 rounds
// assumed for a fixed one: connection-burst's fixed-warm-up run on this
// processor would plan 118 min, its until-steady run on the other
// generation 139, and until-steady runs take more rounds than assumed
// (reactor-parallel 20261204T215718Z: 49 a fork).
func previousRun(m *experiments.Manifest, dataDir, cpu string) (c *Model, dir string, same bool) {
	ents, err := os.ReadDir(filepath.Join(dataDir, m.Name))
	if err != nil {
		return nil, "", false
	}
	steady := m.Load.Warmup.Steady()
	// best[same profile][warm-up of the kind m asks for][same cpu], newest first.
	var best [2][2][2]*Model
	var bestDir [2][2][2]string
	for i := len(ents) - 1; i >= 0; i-- { // run ids are UTC time stamps: newest last
		d := filepath.Join(dataDir, m.Name, ents[i].Name())
		var meta record.Meta
		if !ents[i].IsDir() || record.ReadJSON(d, record.RunFile, &meta) != nil {
			continue
		}
		k, ok := measuredCosts(d, meta)
		if !ok {
			continue
		}
		p, w, h := b2i(meta.Profile == m.ProfileName()), b2i(!steady || k.untilSteady), b2i(cpu != "" && k.cpu == cpu)
		if best[p][w][h] == nil {
			best[p][w][h], bestDir[p][w][h] = &k, d
		}
		if best[1][1][b2i(cpu != "")] != nil {
			break // the newest of the profile and rule on this processor (or, with none to prefer, at all): nothing older wins
		}
	}
	for _, pwh := range [][3]int{{1, 1, 1}, {1, 1, 0}, {1, 0, 1}, {1, 0, 0}, {0, 1, 1}, {0, 1, 0}, {0, 0, 1}, {0, 0, 0}} {
		if c := best[pwh[0]][pwh[1]][pwh[2]]; c != nil {
			return c, bestDir[pwh[0]][pwh[1]][pwh[2]], pwh[0] == 1
		}
	}
	return nil, "", false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runCPU is the processor a run directory's fingerprint identifies
// (env.CPU.Identity: a run recorded before the family and model numbers
// were written names its model only, and so never matches a host that
// gives them), "" when it has none or it does not decode.
func runCPU(dir string) string {
	var fp struct {
		CPU env.CPU `json:"cpu"`
	}
	if record.ReadJSON(dir, record.FingerprintFile, &fp) != nil {
		return ""
	}
	return fp.CPU.Identity()
}

// siblingRun lends a manifest that has never run the costs measured by
// the newest run of another experiment under dataDir that started every
// built-in target of m on the same Spring Boot release: a Spring start is
// the target's and the release's, not the experiment's. call-depth was
// planned at the assumed 15 s a start (DefaultSpringStartS, measured with
// 100,000 orders seeded) where connection-burst and spike, on its targets
// and line, measured 4.5-7.6 s. JVM options are not matched; a variant of
// a run recorded before spring_boot was written (no release) matches
// nothing. Manifests with command targets only have no sibling. A run
// measured on a processor of model cpu (when not "") is preferred to a
// newer one on another.
func siblingRun(m *experiments.Manifest, dataDir, cpu string) (c *Model, dir string) {
	want := map[string]bool{}
	for _, v := range m.Variants {
		if v.Target != "" {
			want[v.Target+"@"+v.SpringBoot] = true
		}
	}
	if len(want) == 0 {
		return nil, ""
	}
	exps, err := os.ReadDir(dataDir)
	if err != nil {
		return nil, ""
	}
	// best[same cpu]: the newest sibling run on each side.
	var best [2]Model
	var bestID, bestDir [2]string
	for _, x := range exps {
		if !x.IsDir() || x.Name() == m.Name {
			continue
		}
		runs, err := os.ReadDir(filepath.Join(dataDir, x.Name()))
		if err != nil {
			continue
		}
		for i := len(runs) - 1; i >= 0; i-- { // run ids are UTC time stamps: newest last
			name := runs[i].Name()
			// Older than the run held on this processor (or, with no
			// processor to prefer, than the newest held): nothing older
			// in this experiment can replace it.
			if name <= bestID[1] || (cpu == "" && name <= bestID[0]) {
				break
			}
			d := filepath.Join(dataDir, x.Name(), name)
			var meta record.Meta
			if !runs[i].IsDir() || record.ReadJSON(d, record.RunFile, &meta) != nil {
				continue
			}
			mi, err := record.ReadManifestInfo(d)
			if err != nil || !startsAll(mi, want) {
				continue
			}
			k, ok := measuredCosts(d, meta)
			if !ok {
				continue
			}
			h := b2i(cpu != "" && k.cpu == cpu)
			if name > bestID[h] {
				best[h], bestID[h], bestDir[h] = k, name, d
			}
			if h == 1 || cpu == "" {
				break // this experiment's newest usable run on this processor, or its newest at all
			}
		}
	}
	for _, h := range []int{1, 0} {
		if bestID[h] != "" {
			return &best[h], bestDir[h]
		}
	}
	return nil, ""
}

// startsAll says whether a run's manifest started every target@release
// in want.
func startsAll(mi record.ManifestInfo, want map[string]bool) bool {
	have := map[string]bool{}
	for _, v := range mi.Variants {
		if v.Target != "" && v.SpringBoot != "" {
			have[v.Target+"@"+v.SpringBoot] = true
		}
	}
	for k := range want {
		if !have[k] {
			return false
		}
	}
	return true
}

// measuredCosts divides a run's time split by its forks and iterations.
func measuredCosts(dir string, meta record.Meta) (Model, bool) {
	w := meta.Time
	if w == nil || w.Wall <= 0 {
		return Model{}, false
	}
	runs := 0
	for _, c := range meta.Cells {
		runs += c.Runs
	}
	trials, err := record.ReadCSV[record.Trial](dir, record.TrialsFile)
	if err != nil {
		return Model{}, false
	}
	windows := 0
	for _, t := range trials {
		if t.Group == meta.Measured && t.Iteration > 0 {
			windows++
		}
	}
	if runs == 0 || windows == 0 {
		return Model{}, false
	}
	st := w.Stages
	c := Model{
		StartS:  st[record.StageStarts] / float64(runs),
		WarmupS: st[record.StageWarmups] / float64(runs),
		StopS:   st[record.StageStops] / float64(runs),
		WindowS: st[record.StageMeasure] / float64(windows),
		FixedS:  st[record.StageBuild] + st[record.StageSetup] + st[record.StageFinishing] + st[record.StageOther],
		cpu:     runCPU(dir),
	}
	// Cool-downs are the gate and pause of each fork and the pauses
	// between iterations; the run does not split them, so the pauses
	// between iterations are taken at the manifest's value.
	m, _ := record.ReadManifestInfo(dir) // an old or odd manifest: no pause between iterations
	if d, err := time.ParseDuration(m.CoolDown.Iteration); err == nil {
		c.PauseS = d.Seconds()
	}
	// A warm-up measured under an earlier stop rule says little about
	// today's: the drift bound warms drifting forks much longer.
	st2, ok, err := record.ReadSteady(dir)
	c.untilSteady = m.Load.Warmup.Until == experiments.UntilSteady
	c.steadyWarmup = c.untilSteady && err == nil && ok && verdicts.SameWarmup(st2.Rule)
	between := float64(max(windows-runs, 0)) * c.PauseS
	c.ForkPauseS = max(0, st[record.StageCoolDowns]-between) / float64(runs)
	return c, true
}

// DeadShare is the predicted share of the wall time that measures nothing:
// starts, warm-ups, stops, cool-downs and the run's fixed stages.
func (e Estimate) DeadShare() float64 {
	if e.WallS <= 0 {
		return 0
	}
	return 1 - e.MeasureS/e.WallS
}

// IterationsForDead is the least number of iterations per fork that
// holds the planned run's dead share to maxDead with its forks and costs
// (the run's fixed stages spread over its forks), by
// dimension.MinIterationsForDead; ok is false when none does.
func (e Estimate) IterationsForDead(maxDead float64) (int, bool) {
	c := e.Costs
	forks := float64(len(e.Cells) * max(e.Forks.Min, 1))
	// Fork(r) = start + warm-up + stop + fork pause + r·window + (r-1)·pause
	forkS := c.StartS + c.WarmupS + c.StopS + c.ForkPauseS - c.PauseS + c.FixedS/forks
	return dimension.MinIterationsForDead(forkS, c.WindowS+c.PauseS, c.WindowS, maxDead)
}

// Write prints the plan and the estimate, e.g.
//
//	pool-sweep (profile default): 6 cells x 5 forks x 4 iterations = 30 forks, 120 measured windows
func (e Estimate) Write(w io.Writer) {
	n := len(e.Cells)
	fmt.Fprintf(w, "%s (profile %s): %d cell(s) x %s fork(s) x %d iteration(s) = %d forks, %d measured windows",
		e.Experiment, e.Profile, n, e.Forks, e.Iterations, n*e.Forks.Min, n*e.Forks.Min*e.Iterations)
	if e.Forks.Sequential() {
		fmt.Fprintf(w, " (up to %d forks if no claim is decided early)", n*e.Forks.Max)
	}
	fmt.Fprintln(w)
	var names []string
	for _, c := range e.Cells {
		names = append(names, c.String())
	}
	fmt.Fprintf(w, "cells: %s\n", strings.Join(names, "; "))
	c := e.Costs
	fmt.Fprintf(w, "costs from %s:\n", e.From)
	if e.OtherCPU() {
		fmt.Fprintf(w, "  (measured on %s, not this host's %s: starts and warm-ups may differ)\n", e.CPU, e.HostCPU)
	}
	fmt.Fprintf(w, "  per fork:      start %s, warm-up %s, stop %s, gate and pauses %s\n", secs(c.StartS), secs(c.WarmupS), secs(c.StopS), secs(c.ForkPauseS))
	fmt.Fprintf(w, "  per iteration: window %s, then %s pause\n", secs(c.WindowS), secs(c.PauseS))
	fmt.Fprintf(w, "  per run:       %s (build, host check, services, report)\n", secs(c.FixedS))
	dead := 0.0
	if e.WallS > 0 {
		dead = 100 * (1 - e.MeasureS/e.WallS)
	}
	fmt.Fprintf(w, "estimate: %s wall, %s of it measured (%.0f%% dead)", dur(e.WallS), dur(e.MeasureS), dead)
	if e.Forks.Sequential() {
		fmt.Fprintf(w, "; at most %s if every round runs", dur(e.MaxWallS))
	}
	fmt.Fprintln(w)
	if e.DeadShare() > dimension.DefaultMaxDead {
		if r, ok := e.IterationsForDead(dimension.DefaultMaxDead); ok {
			fmt.Fprintf(w, "dead time over %.0f%%: %d iterations per fork would amortize each start and warm-up (set iterations: %d)\n",
				100*dimension.DefaultMaxDead, r, r)
		} else {
			fmt.Fprintf(w, "dead time over %.0f%% at any number of iterations: the pause after each window is too long for it\n", 100*dimension.DefaultMaxDead)
		}
	}
	if !e.Measured {
		fmt.Fprintln(w, "(no earlier run of this experiment under data/: the start cost is assumed; a run makes the next estimate measured)")
	}
}

func secs(x float64) string {
	if x > 0 && x < 1 {
		return fmt.Sprintf("%.2f s", x)
	}
	return fmt.Sprintf("%.1f s", x)
}

func dur(x float64) string {
	return time.Duration(x * float64(time.Second)).Round(time.Second).String()
}
