package diff

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/store/record"
)

// The run directories under testdata/runs are written by writeFixture, so
// that they are plain, reviewable CSV and JSON whose numbers are known by
// construction. Regenerate them with
//
//	go test ./judge/diff -run TestDiffFixtureUpToDate -fixture
//
// and the golden outputs with -update.
var regenFixture = flag.Bool("fixture", false, "rewrite testdata/runs from writeFixture")

const fixtureDir = "testdata/runs"

// jitter is the trial-to-trial spread of a quiet cell, about ±1%: trial k
// of a cell takes jitter[(k+offset) % 8], so two runs with other offsets
// draw the same spread in another order and must compare as "~".
var jitter = []float64{1.000, 1.011, 0.993, 1.004, 0.989, 1.007, 0.998, 1.009}

// fixtureCell is one cell of a fixture run: the wall time of a burst and
// how its trials deviate from it.
type fixtureCell struct {
	variant string
	burst   int
	wallMs  float64
	offset  int
	// spike multiplies one trial (1-based; 0: none), for a noisy cell.
	spike       int
	spikeFactor float64
	// invalid marks one trial (1-based; 0: none) as left out.
	invalid int
}

type fixtureRun struct {
	dir, id, profile, state string
	trials                  int
	cells                   []fixtureCell
	fp                      *env.Fingerprint // nil: no fingerprint.json
	manifest                string
}

// fingerprint is the fixture host: a 2-vCPU cloud VM.
func fingerprint(mutate func(*env.Fingerprint)) *env.Fingerprint {
	fp := &env.Fingerprint{
		Schema: 1, Time: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), Hostname: "bench-1",
		CPU: env.CPU{Model: "AMD EPYC 7B13", Vendor: "AuthenticAMD", Cores: 1, Threads: 2, Sockets: 1,
			Allowed: "0-1", FlagsHash: "3f2a9c0d1b7e4a55", NumFlags: 104, Microcode: "0xffffffff"},
		Memory:     env.Memory{TotalBytes: 8 << 30, AvailableBytes: 6 << 30},
		Kernel:     env.Kernel{Release: "6.8.0-1019-gcp", Arch: "x86_64", Cmdline: "console=ttyS0"},
		Distro:     env.Distro{ID: "debian", VersionID: "13", PrettyName: "Debian GNU/Linux 13 (trixie)"},
		Cgroup:     env.Cgroup{Version: 2, Path: "/", MemoryMax: -1},
		Sysctls:    map[string]string{"net.core.somaxconn": "4096"},
		JDK:        env.JDK{Vendor: "Eclipse Adoptium", Version: "25.0.1", Runtime: "25.0.1+8-LTS"},
		Components: map[string]string{"spring-mvc spring-boot": "4.0.7", "spring-mvc tomcat": "11.0.15"},
		Go:         "go1.26.8 linux/amd64",
		Threadlab:  env.Build{Version: "dev", Commit: "0a1b2c3d4e5f"},
		Manifest:   env.Manifest{Path: "experiments/io-bound.yaml", SHA256: "9e1d"},
	}
	if mutate != nil {
		mutate(fp)
	}
	return fp
}

const fixtureManifest = `name: io-bound
title: A burst of slow I/O requests
question: How long until a burst of 300 or 600 requests of 300 ms each is answered?
variants:
  platform: {target: spring-mvc, properties: {spring.threads.virtual.enabled: "false"}}
  virtual: {target: spring-mvc, properties: {spring.threads.virtual.enabled: "true"}}
sweep:
  burst: {load: burst, values: ["300", "600"]}
load:
  model: burst
  requests: [{path: "/io?ms=300"}]
  warmup: 5s
trials: %d
`

// baseCells are the old run: platform queues behind 200 threads, virtual
// does not (seed 000's shape).
func baseCells(offset int) []fixtureCell {
	return []fixtureCell{
		{variant: "platform", burst: 300, wallMs: 702, offset: offset},
		{variant: "platform", burst: 600, wallMs: 1325, offset: offset + 1},
		{variant: "virtual", burst: 300, wallMs: 561, offset: offset + 2},
		{variant: "virtual", burst: 600, wallMs: 1042, offset: offset + 3},
	}
}

func fixtureRuns() []fixtureRun {
	sameHost := fingerprint(func(fp *env.Fingerprint) { fp.Threadlab.Commit = "5f6e7d8c9b0a" })
	slower := baseCells(4)
	// The change under review slowed virtual threads at 600 by 20%...
	slower[3].wallMs = 1250
	// ...and one platform trial at 300 hit a busy host: a 60% spike, and
	// one platform trial at 600 was invalid (left out).
	slower[0].spike, slower[0].spikeFactor = 4, 1.6
	slower[1].invalid = 2
	return []fixtureRun{
		{dir: "base", id: "20260301T100000Z", profile: "default", state: "complete", trials: 6,
			cells: baseCells(0), fp: fingerprint(nil)},
		{dir: "same", id: "20260302T100000Z", profile: "default", state: "complete", trials: 6,
			cells: baseCells(3), fp: sameHost},
		{dir: "slower", id: "20260303T100000Z", profile: "default", state: "complete", trials: 6,
			cells: slower, fp: sameHost},
		{dir: "elsewhere", id: "20260304T100000Z", profile: "default", state: "complete", trials: 6,
			cells: baseCells(5), fp: fingerprint(func(fp *env.Fingerprint) {
				fp.Hostname = "laptop"
				fp.CPU.Model = "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"
				fp.CPU.Vendor = "GenuineIntel"
				fp.CPU.FlagsHash = "77c1e0aa5d3b9f20"
				fp.JDK.Version, fp.JDK.Runtime = "21.0.5", "21.0.5+11-LTS"
			})},
		{dir: "few", id: "20260305T100000Z", profile: "smoke", state: "interrupted", trials: 3,
			cells: baseCells(1), fp: sameHost},
	}
}

// writeFixture writes every fixture run under dir.
func writeFixture(t *testing.T, dir string) {
	t.Helper()
	for _, fr := range fixtureRuns() {
		d := filepath.Join(dir, fr.dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		meta := record.Meta{
			ID: fr.id, Experiment: "io-bound", Title: "A burst of slow I/O requests",
			Question: "How long until a burst of 300 or 600 requests of 300 ms each is answered?",
			Variants: []string{"platform", "virtual"}, SweepKeys: []string{"burst"}, Groups: []string{"main"},
			Measured: "main", Primary: "wall_ms", Trials: fr.trials, Host: "bench-1", Profile: fr.profile,
			Manifest: "experiments/io-bound.yaml", Seed: 7, State: fr.state, Pinning: "none",
			Started: fr.id, Version: "dev",
		}
		var trials []record.Trial
		seq := 0
		for k := 1; k <= fr.trials; k++ {
			for _, c := range fr.cells {
				seq++
				wall := c.wallMs * jitter[(k+c.offset)%len(jitter)]
				if k == c.spike {
					wall *= c.spikeFactor
				}
				threads := c.burst
				if c.variant == "platform" {
					threads = 200
				}
				tr := record.Trial{
					Variant: c.variant, Point: fmt.Sprintf("burst=%d", c.burst), Group: "main", Trial: k, Seq: seq,
					Valid: k != c.invalid, Started: fr.id, Requests: int64(c.burst), RPS: round(float64(c.burst) / wall * 1000),
					P50Ms: round(wall * 0.55), P90Ms: round(wall * 0.9), P99Ms: round(wall * 0.96), P999Ms: round(wall * 0.99),
					MaxMs: round(wall), MeanMs: round(wall * 0.6), WallMs: round(wall), DistinctThreads: threads,
				}
				if !tr.Valid {
					tr.Reason = "host busy: 63% CPU outside threadlab after waiting 10s"
				}
				trials = append(trials, tr)
				meta.Order = append(meta.Order, fmt.Sprintf("%s|%s|%d", tr.Variant, tr.Point, k))
			}
		}
		if err := record.WriteJSON(d, record.RunFile, meta); err != nil {
			t.Fatal(err)
		}
		if err := record.WriteCSV(d, record.TrialsFile, trials); err != nil {
			t.Fatal(err)
		}
		if err := record.WriteFile(d, record.ManifestFile, fmt.Appendf(nil, fixtureManifest, fr.trials)); err != nil {
			t.Fatal(err)
		}
		// The slower run loses the headline claim: a changed verdict.
		verdicts := []record.Verdict{
			{ID: "virtual-beats-platform", Says: "virtual threads answer the burst at least 1.5x sooner", Status: "supported", Ratio: 2.2, Low: 2.05, High: 2.4, P: 0.002},
			{ID: "threads-used", Says: "platform uses at most 200 threads", Status: "supported", Reason: "median 200"},
		}
		if fr.dir == "slower" {
			verdicts[0].Status, verdicts[0].Ratio, verdicts[0].Low, verdicts[0].High, verdicts[0].P = "inconclusive", 1.6, 1.2, 2.1, 0.09
		}
		if err := record.WriteJSON(d, record.VerdictsFile, verdicts); err != nil {
			t.Fatal(err)
		}
		if fr.fp != nil {
			if err := record.WriteJSON(d, record.FingerprintFile, fr.fp); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// round keeps fixture CSVs readable: two decimals.
func round(x float64) float64 {
	return float64(int64(x*100+0.5)) / 100
}

func TestDiffFixtureUpToDate(t *testing.T) {
	if *regenFixture {
		if err := os.RemoveAll(fixtureDir); err != nil {
			t.Fatal(err)
		}
		writeFixture(t, fixtureDir)
	}
	tmp := t.TempDir()
	writeFixture(t, tmp)
	err := filepath.WalkDir(tmp, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(tmp, path)
		want, _ := os.ReadFile(path)
		got, err := os.ReadFile(filepath.Join(fixtureDir, rel))
		switch {
		case err != nil:
			t.Errorf("fixture file %s missing: run go test ./judge/diff -run TestDiffFixtureUpToDate -fixture", rel)
		case string(got) != string(want):
			t.Errorf("fixture file %s differs from writeFixture: run go test ./judge/diff -run TestDiffFixtureUpToDate -fixture", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
