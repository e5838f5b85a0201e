package experiments

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/threadlab/threadlab/env/targets"
	"github.com/threadlab/threadlab/measure/metric"
)

// Warning is a methodology weakness: the manifest is valid, but its
// numbers would be weaker than they look. Each names the seed mistake it
// guards against.
type Warning struct {
	File  string
	Field string
	Msg   string
}

func (w Warning) String() string { return fmt.Sprintf("%s: %s: warning: %s", w.File, w.Field, w.Msg) }

// Lint reviews a loaded manifest's design.
func Lint(m *Manifest) []Warning {
	var ws []Warning
	warn := func(field, format string, a ...any) {
		ws = append(ws, Warning{File: m.File, Field: field, Msg: fmt.Sprintf(format, a...)})
	}
	m.lintReplication(warn)
	m.lintWarmup(warn)
	if g := m.Measured(); g != nil {
		m.lintUnderload(g, warn)
		m.lintBackground(g, warn)
		m.lintClosedLatency(g, warn)
	}
	m.lintPreallocate(warn)
	p := m.Pinning
	if p.Target == "" || p.Generator == "" {
		warn("pinning", "the load generator and the target share CPUs without pinning: a busy generator steals CPU from the server (seed 001 checks per-tier CPU for this); set pinning: {target: \"1\", generator: \"0\"} on a machine with cores to spare")
	}
	m.lintClaims(warn)
	m.lintFloors(warn)
	m.lintDecidable(warn)
	m.lintJDK(warn)
	m.lintBoot(warn)
	m.lintTrust(warn)
	if _, ok := m.Profiles["smoke"]; !ok && m.Profile == "" {
		warn("profiles", "no smoke profile: add profiles: {smoke: {...}} so tests can run the experiment in seconds")
	}
	return ws
}

// lintUnderload flags a burst or user count that never exceeds the
// platform-thread pool: every request gets a thread at once, so the
// experiment cannot show queueing (seed 000's 8-request test).
func (m *Manifest) lintUnderload(g *Group, warn func(string, string, ...any)) {
	n := g.Burst
	field := "load.burst"
	if g.Model == "closed" {
		n, field = g.Users, "load.users"
	}
	if g.Model != "burst" && g.Model != "closed" {
		return
	}
	for _, d := range m.Sweep {
		if d.Load == "burst" || d.Load == "users" {
			n, field = 0, "sweep."+d.Name
			for _, v := range d.Values {
				if x, err := strconv.Atoi(v); err == nil && (n == 0 || x < n) {
					n = x
				}
			}
		}
	}
	for _, v := range m.Variants {
		if v.Target != "spring-mvc" || strings.EqualFold(v.Properties["spring.threads.virtual.enabled"], "true") {
			continue
		}
		pool := 200
		if s, ok := v.Properties["server.tomcat.threads.max"]; ok {
			if x, err := strconv.Atoi(s); err == nil {
				pool = x
			}
		}
		if n > 0 && n <= pool {
			warn(field, "%d concurrent requests never exceed variant %s's %d Tomcat threads, so the test is under-loaded and cannot show queueing (seed 000's 8-request flake); use more than %d", n, v.Name, pool, pool)
		}
	}
}

// lintPreallocate flags preallocated connections that cannot be held:
// without keep-alive every request opens its own connection, so
// preallocate only makes the generator's workers ahead, and the server
// never sees N connections open from the first second (seed 002's
// fixed-rate shape with preAllocatedVUs = N, which keeps them).
func (m *Manifest) lintPreallocate(warn func(string, string, ...any)) {
	for i, g := range m.Load.Groups {
		if g.Preallocate > 0 && g.KeepAlive != nil && !*g.KeepAlive {
			warn(m.groupField(i)+".preallocate", "with keepalive: false every request opens its own connection, so the %d preallocated connections are not held open before the first send (only the generator's workers are made ahead); set keepalive: true to present them all at once, or remove preallocate", g.Preallocate)
		}
	}
}

// lintBackground flags background groups that end before the measured
// group does, so part of the measurement runs without the background load.
func (m *Manifest) lintBackground(g *Group, warn func(string, string, ...any)) {
	if len(m.Load.Groups) < 2 || g.Model == "burst" {
		return
	}
	end := g.end()
	for i, b := range m.Load.Groups {
		if b.Name == g.Name || b.Model == "burst" {
			continue
		}
		if b.end() < end || b.Start > g.Start {
			warn(fmt.Sprintf("load.groups[%d]", i), "background group %q runs from %s to %s, but the measured group %q runs from %s to %s: part of the measurement runs without it; start it no later and end it no sooner", b.Name, b.Start, b.end(), g.Name, g.Start, end)
		}
	}
}

// end is when a group stops sending, relative to the trial start.
func (g Group) end() time.Duration {
	if g.Model == "ramp" {
		d := g.Start
		for _, s := range g.Stages {
			d += s.Duration
		}
		return d
	}
	return g.Start + g.Duration
}

// lintClosedLatency flags latency claims measured with a closed model only:
// a closed loop slows its own sending when the server stalls, so its
// percentiles hide the stall (coordinated omission).
func (m *Manifest) lintClosedLatency(g *Group, warn func(string, string, ...any)) {
	for i, c := range m.Claims {
		cg := g
		if c.Check.Group != "" {
			for j := range m.Load.Groups {
				if m.Load.Groups[j].Name == c.Check.Group {
					cg = &m.Load.Groups[j]
				}
			}
		}
		if cg.Model != "closed" {
			continue
		}
		if d, ok := metric.Lookup(c.Check.Metric); ok && d.Kind == metric.Latency {
			warn(fmt.Sprintf("claims[%d].check.metric", i), "latency claim %q is measured with a closed model only, which hides server stalls (coordinated omission); measure it with an open model (rate:) too", c.ID)
		}
	}
}

// lintClaims warns on claims a reader cannot weigh: no seed figure to set
// ours beside, or too few independent JVMs behind each cell. Smoke
// profiles are exempt from the second: they check that things run.
func (m *Manifest) lintClaims(warn func(string, string, ...any)) {
	if len(m.Claims) == 0 {
		return
	}
	for i, c := range m.Claims {
		for kind, over := range map[string]map[string][]string{"increases_over": c.Check.IncreasesOver, "decreases_over": c.Check.DecreasesOver} {
			for k, vs := range over {
				if len(vs) == 2 {
					warn(fmt.Sprintf("claims[%d].check.%s.%s", i, kind, k), "a trend over 2 values is a single comparison; list 3 or more sweep values so a monotone trend can be told from noise")
				}
			}
		}
		if c.Seed == nil {
			warn(fmt.Sprintf("claims[%d]", i), "claim %q has no seed: figure, so the report cannot show the write-up's number beside ours (add seed: {value: ..., from: \"...\"})", c.ID)
		}
	}
	// Fewer than stats.MinReplicates forks behind a claim: lintReplication warns.
}

// lintJDK warns on a variant that asks for a JDK the built-in targets
// cannot run on: it would be skipped at every run, and every claim that
// reads it would be not applicable.
func (m *Manifest) lintJDK(warn func(string, string, ...any)) {
	for _, v := range m.Variants {
		if v.Target != "" && v.JDK != 0 && v.JDK < targets.MinJDK {
			warn("variants."+v.Name+".jdk", "the built-in targets are compiled for Java %d (virtual threads), so a variant on JDK %d is skipped at every run and the claims reading it are not applicable (use jdk: %d or later)", targets.MinJDK, v.JDK, targets.MinJDK)
		}
	}
}
