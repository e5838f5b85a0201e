package pipeline

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/threadlab/threadlab/env/remote"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/measure/telemetry"
	"github.com/threadlab/threadlab/pipeline/trial"
)

// Telemetry and noise on the hosts of a multi-host run (issue 25): for
// each trial a sampler runs on every host (remote.Host.Sample). The target
// host's sampler reads the target process from /proc there, so target CPU,
// RSS and threads fill the same columns as on one machine; every host's
// CPU used outside threadlab and its steal gate the trial as this
// machine's do on a single-machine run, each host on its own. The target
// host's sampler also reads the target's cumulative CPU time at the
// agents' release and at the last answer (target_cpu_s), as the local
// sampler reads it around load.Run on one machine. JVM metrics still come
// from the target's actuator, scraped from here. The samplers start at the
// agents' planned release, seconds before the actual one while the agents
// connect; the trial's row reads only the samples between the release and
// the last answer (rowSamples), as on one machine, and the per-second
// series keeps them all.

// hostSampling is one trial's samplers, one per distinct host.
type hostSampling struct {
	names []string // "target tl-target", in inventory order
	runs  []*remote.Sampling
	errs  []error
	cpu   telemetry.CPUSeconds // the target's CPU-seconds over the window, read on its host (stop)

	// The load's edges, for the samples a trial's row reads (rowSamples).
	origin   time.Time          // when this machine's sampler started: its samples' T count from it (trialWindow)
	opened   time.Time          // when the window opened, at the planned release (begin)
	from, to time.Duration      // the actual release and the last answer, after opened (endAt)
	edged    bool               // endAt named them
	local    []telemetry.Sample // this machine's samples, before the target host's are merged in (stop)
	target   []telemetry.Sample // the target host's samples within the edges (stop, remote.Sampling.Window)
	targetOK bool               // the target host's report came back
}

// trialWindow is what a trial's load window opens and closes (runLoadIn):
// every host's sampler under --hosts (the target's CPU-seconds read on
// its host), else the local sampler's CPU window on the target process.
func trialWindow(local *telemetry.Sampler, onHosts *hostSampling) window {
	if onHosts != nil {
		if local != nil {
			onHosts.origin = local.Origin()
		}
		return onHosts
	}
	return localWindow{local}
}

// rowSamples are the samples a trial's row reads (trial.Rows: target CPU,
// peak RSS and threads, the JVM's peaks and GC totals), given those stop
// returned, which the per-second series keeps whole. On one machine, and
// under --hosts when the window was not told its edges, they are the same.
// Otherwise they are the samples read between the load's release and its
// last answer, and the reading that closes the window (telemetry.Within):
// this machine's (the JVM scrape) on this machine's clock, and the target
// host's (its process) on that host's (remote.Sampling.Window). The
// samplers start at the planned release, seconds before the actual one
// while the agents open their connections; on one machine the connects
// take a few hundred ms and no reading falls in them, so the peaks there
// cover the release to the last answer, and here they cover the same.
func (hs *hostSampling) rowSamples(samples []telemetry.Sample) []telemetry.Sample {
	if hs == nil || !hs.edged || !hs.targetOK || hs.origin.IsZero() {
		return samples
	}
	at := func(d time.Duration) time.Duration { return hs.opened.Add(d).Sub(hs.origin) }
	out := slices.Clone(telemetry.Within(hs.local, at(hs.from), at(hs.to)))
	for _, x := range hs.target {
		x.GenCPUPct = 0 // the target host's sampler's own CPU, not the generator's
		out = append(out, x)
	}
	return out
}

// localWindow opens and closes a single-machine trial's CPU window.
type localWindow struct{ s *telemetry.Sampler }

func (w localWindow) begin() { w.s.Begin() }
func (w localWindow) end()   { w.s.End() }

// cpuColumns are a trial's target_cpu_s and target_cpu_ms_per_req: the
// target's CPU-seconds from the load's release to its last answer (on
// the target's host under --hosts), and those over the requests of every
// group, which the one target served, in ms; 0 and 0 when not measured
// (a flag says why) or nothing completed.
func cpuColumns(local *telemetry.Sampler, onHosts *hostSampling, res *load.Result) (sec, msPerReq float64) {
	c := local.CPU()
	if onHosts != nil {
		c = onHosts.cpu
	}
	if !c.OK {
		return 0, 0
	}
	var n int64
	if res != nil {
		for _, g := range res.Groups {
			n += g.Requests
		}
	}
	sec = math.Round(c.Sec*1e4) / 1e4 // 0.1 ms: the clock's ns are noise below that
	if n > 0 {
		msPerReq = math.Round(c.Sec*1e3/float64(n)*1e4) / 1e4
	}
	return sec, msPerReq
}

// noiseOn is one host's noise over a trial's window, % of one core.
type noiseOn struct {
	Host           string
	Outside, Steal float64
}

// startSampling starts a sampler on every host; on the target host it
// samples the target process too. A host whose sampler does not start is
// named in the trial's reasons when it stops.
func (hr *hostRun) startSampling(ctx context.Context, s *State, t trial.Target) *hostSampling {
	hr.warnOnce(s, "cooldown", "multi-host run: the idle-host wait before a fork (cooldown.max_busy_pct) reads this machine only and is skipped; the in-trial noise gates run on every host")
	pidFile := ""
	if rt, ok := t.(*remoteTarget); ok {
		pidFile = rt.pidFile
	}
	var conns []*remote.Host
	hs := &hostSampling{}
	for i, h := range hr.rec.Hosts {
		c := hr.conn(i)
		if c == nil || slices.Contains(conns, c) { // a host with two roles is sampled once
			continue
		}
		conns = append(conns, c)
		hs.names = append(hs.names, h.Role+" "+h.SSH)
	}
	hs.runs, hs.errs = make([]*remote.Sampling, len(conns)), make([]error, len(conns))
	var dbHost *remote.Host
	if hr.dbPidFile != "" && hr.inv.Database != nil {
		dbHost = hr.conn(len(hr.rec.Hosts) - 1)
	}
	own := map[*remote.Host]string{} // each host's program of the experiment, by pid file
	for _, c := range conns {
		switch {
		case c == hr.target:
			own[c] = pidFile
		case c == dbHost:
			own[c] = hr.dbPidFile // PostgreSQL's processes are the experiment's, not noise
		}
	}
	kernels := hr.kernels(ctx, s, conns)
	var wg sync.WaitGroup
	for i, c := range conns {
		// Hosts on one kernel share its CPUs: the programs of the others
		// are the experiment's here too, not this host's noise.
		var exclude []string
		for _, o := range conns {
			if o != c && own[o] != "" && kernels[o] != "" && kernels[o] == kernels[c] {
				exclude = append(exclude, own[o])
			}
		}
		wg.Add(1)
		go func() { defer wg.Done(); hs.runs[i], hs.errs[i] = c.Sample(ctx, own[c], exclude...) }()
	}
	wg.Wait()
	return hs
}

// begin starts every host's window as the load starts (the fleet's
// Release hook, at the agents' agreed instant); a host whose
// window cannot start is named in the trial's reasons when it stops.
func (hs *hostSampling) begin() {
	if hs == nil {
		return
	}
	hs.opened = time.Now()
	for i, r := range hs.runs {
		if r != nil {
			if err := r.Begin(); err != nil && hs.errs[i] == nil {
				hs.errs[i] = err
			}
		}
	}
}

// end ends every host's window as the load ends (the fleet's Done hook,
// at the last agent's answer), before anything slower
// (the JVM scrape here, collecting the reports) happens.
func (hs *hostSampling) end() {
	if hs == nil {
		return
	}
	for _, r := range hs.runs {
		if r != nil {
			r.End()
		}
	}
}

// endAt ends every host's window and sets its edges afterwards: the
// load's actual release and its last answer, from and to after begin
// (remote.Sampling.EndAt). begin runs at the planned release, before a
// load agent has opened its connections, and endAt once the answers have
// come back over ssh; on one machine the window opens at the burst's
// release, after its connects, and closes at load.Run's return, so
// neither the target's accepting of the load's connections nor its
// closing them, nor the ssh round trips, belong in it.
func (hs *hostSampling) endAt(from, to time.Duration) {
	if hs == nil {
		return
	}
	hs.from, hs.to, hs.edged = from, to, true
	for _, r := range hs.runs {
		if r != nil {
			r.EndAt(from, to)
		}
	}
}

// stop ends the samplers and folds the target host's samples into the
// trial's (sampled here for the JVM scrape): its process and host columns
// replace this machine's, and its flags this machine's process flags (the
// target's pid is not on this machine). It returns each host's noise and
// the reasons the trial is invalid for a host: noise over the manifest's
// gates, or no sampler.
func (hs *hostSampling) stop(s *State, local []telemetry.Sample, flags []telemetry.Flag) ([]telemetry.Sample, []telemetry.Flag, []noiseOn, []string) {
	m := s.M
	var noise []noiseOn
	var reasons []string
	hs.local = slices.Clone(local) // withProcess merges into local in place
	flags = slices.DeleteFunc(flags, func(f telemetry.Flag) bool {
		on := telemetry.Affects(f.Code)
		return slices.Contains(on, "target_cpu_pct") || slices.Contains(on, "target_cpu_s")
	})
	for i, r := range hs.runs {
		name := hs.names[i]
		if r == nil {
			reasons = append(reasons, fmt.Sprintf("host %s: no telemetry (%v)", name, hs.errs[i]))
			continue
		}
		samples, fl, err := r.Stop()
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("host %s: no telemetry (%v)", name, err))
			continue
		}
		outside, steal := measureNoise(samples)
		noise = append(noise, noiseOn{Host: name, Outside: round1(outside), Steal: round1(steal)})
		if outside > m.Noise.MaxOutsidePct {
			reasons = append(reasons, fmt.Sprintf("host noise on %s: %.0f%% of one core used outside threadlab during the window (noise.max_outside_pct %g)", name, outside, m.Noise.MaxOutsidePct))
		}
		if steal > m.Noise.MaxStealPct {
			reasons = append(reasons, fmt.Sprintf("host noise on %s: %.0f%% of one core stolen by the hypervisor during the window (noise.max_steal_pct %g)", name, steal, m.Noise.MaxStealPct))
		}
		if i == 0 { // the target host
			local = withProcess(local, samples)
			flags = append(flags, fl...)
			hs.cpu = r.CPU()
			hs.target, hs.targetOK = r.Window(), true
			if from, to, closed, closedSec, ok := r.Edges(); ok && hs.cpu.OK {
				s.Logf("target host %s: target CPU %.4f s from the release (%.1f ms after the planned one) to the last answer (%.1f ms after it); from the planned release to the sampler's end of stdin (%.1f ms later) it would read %.4f s",
					name, hs.cpu.Sec, float64(from)/1e6, float64(to-from)/1e6, float64(closed-to)/1e6, closedSec)
				rss, th := gaugePeaks(hs.target)
				allRSS, allTh := gaugePeaks(samples)
				s.Logf("target host %s: %d of %d samples within the release and the last answer: peak RSS %.1f MiB and %d threads (%.1f MiB and %d over every sample)",
					name, len(hs.target), len(samples), rss, th, allRSS, allTh)
			}
		}
	}
	return local, flags, noise, reasons
}

// gaugePeaks are the highest RSS and thread count among samples.
func gaugePeaks(samples []telemetry.Sample) (rssMB float64, threads int) {
	for _, x := range samples {
		rssMB, threads = max(rssMB, x.RSSMB), max(threads, x.Threads)
	}
	return rssMB, threads
}

// withProcess puts the target host's process and host columns into the
// samples taken here, second by second; a second only the target host
// sampled is added as it is.
func withProcess(local, remote []telemetry.Sample) []telemetry.Sample {
	at := map[int]int{}
	for i, x := range local {
		at[int(x.T)] = i
	}
	for _, r := range remote {
		i, ok := at[int(r.T)]
		if !ok {
			r.GenCPUPct = 0
			local = append(local, r)
			continue
		}
		x := &local[i]
		x.CPUUserPct, x.CPUSysPct, x.RSSMB, x.Threads = r.CPUUserPct, r.CPUSysPct, r.RSSMB, r.Threads
		x.HostCPUPct, x.HostStealPct = r.HostCPUPct, r.HostStealPct
	}
	slices.SortStableFunc(local, func(a, b telemetry.Sample) int {
		switch {
		case a.T < b.T:
			return -1
		case a.T > b.T:
			return 1
		}
		return 0
	})
	return local
}

// noiseText is the hosts' noise for trials.csv: "target tl-target 3.1%
// (steal 0.0%); load tl-load1 0.5% ...", each host's CPU outside threadlab
// in % of one core.
func noiseText(ns []noiseOn) string {
	var parts []string
	for _, n := range ns {
		parts = append(parts, fmt.Sprintf("%s %.1f%% (steal %.1f%%)", n.Host, n.Outside, n.Steal))
	}
	return strings.Join(parts, "; ")
}

// worst is the highest outside and steal among the hosts: the figures of
// the trial's host_outside_pct and host_steal_pct columns.
func worst(ns []noiseOn) (outside, steal float64) {
	for _, n := range ns {
		outside, steal = max(outside, n.Outside), max(steal, n.Steal)
	}
	return outside, steal
}

// kernels is each host's kernel boot id (/proc/sys/kernel/random/boot_id),
// read once per run: hosts with the same one are network namespaces or
// containers on one machine. A host whose id cannot be read has "" and is
// taken for a machine of its own.
func (hr *hostRun) kernels(ctx context.Context, s *State, conns []*remote.Host) map[*remote.Host]string {
	hr.mu.Lock()
	var shared []string
	if hr.bootIDs == nil {
		hr.bootIDs = map[*remote.Host]string{}
		byID := map[string][]string{}
		var ids []string
		for i, h := range hr.rec.Hosts {
			c := hr.conn(i)
			if c == nil {
				continue
			}
			if _, seen := hr.bootIDs[c]; seen {
				continue
			}
			out, err := c.Output(ctx, "cat /proc/sys/kernel/random/boot_id")
			id := strings.TrimSpace(string(out))
			if err != nil {
				id = ""
			}
			hr.bootIDs[c] = id
			if id != "" {
				if len(byID[id]) == 0 {
					ids = append(ids, id)
				}
				byID[id] = append(byID[id], h.Role+" "+h.SSH)
			}
		}
		for _, id := range ids {
			if len(byID[id]) > 1 {
				shared = append(shared, strings.Join(byID[id], ", "))
			}
		}
	}
	out := map[*remote.Host]string{}
	for _, c := range conns {
		out[c] = hr.bootIDs[c]
	}
	hr.mu.Unlock()
	for _, names := range shared {
		hr.warnOnce(s, "kernel "+names, "hosts %s share one kernel (network namespaces or containers on one machine): their CPUs are the same, so each one's noise gate counts the experiment's programs on the others as threadlab's, not as noise", names)
	}
	return out
}
