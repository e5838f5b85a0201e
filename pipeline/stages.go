package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/env/downstream"
	"github.com/threadlab/threadlab/env/postgres"
	"github.com/threadlab/threadlab/env/targets"
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/judge/verdicts"
	"github.com/threadlab/threadlab/pipeline/trial"
	"github.com/threadlab/threadlab/render/report"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// version is set by the Makefile (-ldflags -X) to git describe.
var version = "dev"

// Version is threadlab's version string.
func Version() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return version
}

// HostCheck records the host check; failures are warnings, never fixed silently.
type HostCheck struct{}

func (HostCheck) Name() string { return "host check" }

func (HostCheck) Run(ctx context.Context, s *State) error {
	req := env.Requirements{}
	for _, g := range s.M.Load.Groups {
		req.Connections += max(g.Users, g.Burst, g.MaxInFlight, g.Preallocate)
	}
	for _, d := range s.M.Sweep {
		if d.Load == "users" || d.Load == "burst" || d.Load == "connections" {
			for _, v := range d.Values {
				if n, err := strconv.Atoi(v); err == nil && n > req.Connections {
					req.Connections = n
				}
			}
		}
	}
	if s.hosts != nil {
		// The hosts that serve and load; this machine only directs.
		s.hosts.hostCheck(ctx, s, req)
		req = env.Requirements{}
	}
	checks := env.HostCheck(ctx, req)
	for _, c := range checks {
		if c.Status == "fail" {
			s.Warn("host check %s: %s (want %s); fix: %s", c.Name, c.Value, c.Want, c.Fix)
		}
	}
	return record.WriteJSON(s.Dir, record.HostCheckFile, checks)
}

// Fingerprint records the machine and software the numbers come from.
// It runs again after Build so the target versions are known; see Build.
type Fingerprint struct{}

func (Fingerprint) Name() string { return "fingerprint" }

func (Fingerprint) Run(ctx context.Context, s *State) error {
	if s.hosts != nil {
		s.hosts.fingerprints(ctx, s) // each host's own, into run.json
	}
	jh := s.JVM.JavaHome
	if jh == "" && s.needsJVM() {
		jh, _, _ = targets.FindJDK()
	}
	var jvm []string
	for _, v := range s.M.Variants {
		jvm = append(jvm, v.JVM...)
	}
	o := env.FingerprintOptions{
		JavaHome: jh, JVMFlags: jvm, Components: s.Components,
		ManifestPath: s.M.File, RepoDir: ".", AOT: s.JVM.AOTCaches(s.M),
	}
	// Probing each JVM option set starts a JVM per set: do it once, after
	// Build (which runs this stage again), not also before it.
	final := !s.needsJVM() || s.JVM.Jars != nil
	if final {
		o.JVMArgSets = trial.JVMArgSets(s.M)
	} else if s.resumed {
		return nil // compared once, complete, after Build
	}
	fp, err := env.Collect(ctx, o)
	if err != nil {
		s.Warn("fingerprint incomplete: %v", err)
		if fp == nil {
			return nil
		}
	}
	if s.resumed {
		if keep, err := s.resumedFingerprint(fp); keep || err != nil {
			return err
		}
	}
	return record.WriteJSON(s.Dir, record.FingerprintFile, fp)
}

func (s *State) needsJVM() bool {
	return slices.ContainsFunc(s.M.Variants, func(v experiments.Variant) bool { return v.Target != "" })
}

// Build finds a JDK and builds the built-in targets on every Spring Boot
// version the variants ask for (cached by source hash and version).
type Build struct{}

func (Build) Name() string { return "build targets" }

func (Build) Run(ctx context.Context, s *State) error {
	if !s.needsJVM() {
		return nil
	}
	jh, major, err := targets.FindJDK()
	if err != nil {
		return err
	}
	s.JVM.JavaHome = jh
	s.Logf("JDK %d at %s", major, jh)
	s.resolveJDKs(targets.ReleaseFinder(s.Opt.TargetsDir))
	s.JVM.Jars = map[string]string{}
	for _, version := range trial.BootVersions(s.M) {
		jars, err := targets.BuildBoot(ctx, s.Opt.TargetsDir, version, s.Opt.Log)
		if err != nil {
			return err
		}
		for n, jar := range jars {
			s.JVM.Jars[trial.JarKey(n, version)] = jar
		}
	}
	s.Components = map[string]string{}
	mixed := len(trial.BootVersions(s.M)) > 1
	for _, v := range s.M.Variants {
		if v.Target == "" {
			continue
		}
		vs, err := targets.Versions(s.JVM.JarOf(v.Target, v.SpringBoot))
		if err != nil {
			s.Warn("versions of %s: %v", v.Target, err)
			continue
		}
		// One Boot: keys as before ("spring-mvc spring-boot"); several: the
		// version too, so each line's libraries stand side by side.
		name := v.Target
		if mixed {
			name += "@" + trial.BootOf(v.SpringBoot)
		}
		for k, x := range vs {
			s.Components[name+" "+k] = x
		}
	}
	aot, err := s.JVM.PrepareAOT(ctx, s.M, s.skipped, s.Opt.Log, s.Warn, s.Logf)
	s.Meta.AOT = aot
	if err != nil {
		return err
	}
	// Now that the target versions and AOT caches are known, complete the fingerprint.
	return Fingerprint{}.Run(ctx, s)
}

// Services starts the downstream service and the database a manifest asks for.
type Services struct{}

func (Services) Name() string { return "services" }

func (Services) Run(ctx context.Context, s *State) error {
	m := s.M
	if d := m.Services.Downstream; d != nil {
		var url string
		if s.hosts != nil {
			// On the downstream host (or the target's), on its address.
			u, err := s.hosts.startDownstream(ctx, s, d.Delay)
			if err != nil {
				return fmt.Errorf("start the downstream service: %w", err)
			}
			url = u
		} else if m.Pinning.Services != "" && len(s.Opt.Downstream) > 0 {
			// A process of its own, so that it can run on the services' CPUs.
			u, err := s.startDownstream(ctx, d.Delay)
			if err != nil {
				return fmt.Errorf("start the downstream service: %w", err)
			}
			url = u
		} else {
			srv, err := downstream.Start(context.WithoutCancel(ctx), "127.0.0.1:0", d.Delay)
			if err != nil {
				return fmt.Errorf("start the downstream service: %w", err)
			}
			s.OnCleanup(func() { srv.Close() })
			url = srv.URL()
			s.downstreamPid = os.Getpid() // it shares the generator's process, and CPUs
			if m.Pinning.Services != "" {
				s.Warn("pinning.services cannot pin the downstream service: it runs inside threadlab, on the load generator's CPUs (this pipeline was given no downstream command)")
				s.aff.Said(roleDownstream) // said here; the read-back need not say it again
			}
		}
		s.ServiceProps["threadlab.downstream-url"] = url
		s.ServiceSubst["downstream"] = url
		s.Logf("downstream service at %s (delay %s)", url, d.Delay)
	}
	if m.Services.Orders > 0 {
		s.ServiceProps["threadlab.orders"] = strconv.Itoa(m.Services.Orders)
	}
	if m.Services.Database == "postgres" && s.hosts != nil { // on its own host (hostdb.go)
		return s.hosts.startPostgres(ctx, s)
	}
	if m.Services.Database == "postgres" {
		// Appended, not truncated: a resumed run keeps the first start's log.
		logf, err := os.OpenFile(filepath.Join(s.Dir, record.LogsDir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		start := time.Now()
		// ctx bounds the start-up only (Ctrl-C during initdb stops it); the
		// server then runs until the cleanup stops it.
		c, err := postgres.Start(ctx, logf)
		if err != nil {
			logf.Close()
			return fmt.Errorf("start PostgreSQL: %w", err)
		}
		s.OnCleanup(func() {
			if err := c.Stop(); err != nil {
				s.Warn("stop PostgreSQL: %v", err)
			}
			logf.Close()
		})
		for k, v := range c.Properties() {
			s.ServiceProps[k] = v
		}
		s.ServiceEnv = append(s.ServiceEnv, c.Env()...)
		s.pgGroup = s.serviceGroup(filepath.Join(c.Dir, "data", "postmaster.pid")) // its CPU is not host noise
		// Pinned as a group: the postmaster and its helpers now, and the
		// backends it forks for the targets' connections inherit the mask.
		if err := s.pinGroup("PostgreSQL", s.pgGroup); err != nil {
			return err
		}
		if m.Pinning.Services != "" && s.pgGroup == 0 {
			s.Warn("pinning.services: PostgreSQL was not pinned: its process group could not be read from postmaster.pid")
		}
		s.Logf("PostgreSQL at %s (started in %s)", c.JDBCURL(), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// Claims gives every claim of the manifest a verdict with its evidence
// (package verdicts judges them) and writes verdicts.json.
type Claims struct{}

func (Claims) Name() string { return "claims" }

func (Claims) Run(ctx context.Context, s *State) error {
	if len(s.M.Claims) == 0 {
		return nil
	}
	trials, err := record.ReadCSV[record.Trial](s.Dir, record.TrialsFile)
	if err != nil {
		return err
	}
	fp, _ := os.ReadFile(filepath.Join(s.Dir, record.FingerprintFile)) // absent: the core count is unknown
	out, err := verdicts.OfRun(s.Dir, s.M, s.Meta, fp, trials, stats.Options{Seed: s.M.Seed, Version: Version()})
	if err != nil {
		return err
	}
	for _, v := range out {
		s.Logf("claim %s: %s", v.ID, stats.StatusText(v.Status))
	}
	return record.WriteJSON(s.Dir, record.VerdictsFile, out)
}

// Report renders the run's page and the site index from the data alone.
type Report struct{}

func (Report) Name() string { return "report" }

func (Report) Run(ctx context.Context, s *State) error {
	if s.Opt.NoReport {
		return nil
	}
	if err := s.saveMeta(); err != nil {
		return err
	}
	r, err := record.Read(s.Dir)
	if err != nil {
		return err
	}
	page, err := report.Run(r, s.Opt.ReportsDir)
	if err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	if _, err := report.Index(s.Opt.DataDir, s.Opt.ReportsDir); err != nil {
		return fmt.Errorf("render index: %w", err)
	}
	s.ReportPath = page
	return nil
}
