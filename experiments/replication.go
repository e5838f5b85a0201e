package experiments

// Replication is how often a cell is measured, in JMH's words: forks are
// fresh target processes (JVMs), iterations are measured windows or bursts
// inside one fork after its warm-up. The fork is the unit of replication
// (Georges et al. 2007, Kalibera & Jones 2013): iterations of one JVM share
// its JIT profile, heap layout and address space, so they are not
// independent samples, while forks are.
//
// forks: 5              five fresh JVMs per cell, one after another in rounds
// forks: {min: 5, max: 20}
//                       sequential: five rounds, then one more round at a
//                       time for the cells an undecided claim reads, up to 20
// iterations: 3         three measured windows per fork (default 1)
// trials: ...           the older name of forks, same meaning
// retries: 3            re-runs of invalid iterations or forks per cell
// noise: {max_outside_pct: 10, max_steal_pct: 10}
//                       in-trial host noise gate, % of one core
// noise: {max_release_spread: 5ms}
//                       how far apart a burst split across generators may
//                       leave (run --hosts)

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/threadlab/threadlab/stats"
	"gopkg.in/yaml.v3"
)

// Rounds is a number of forks: fixed (Min == Max) or sequential (Max > Min).
type Rounds struct {
	Min int `yaml:"min"`
	Max int `yaml:"max"`
}

// UnmarshalYAML accepts a number (5) or a mapping ({min: 5, max: 20}).
func (r *Rounds) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		var k int
		if x, err := strconv.ParseFloat(n.Value, 64); n.Tag == "!!float" && (err != nil || x != math.Trunc(x)) {
			// yaml.v3 would truncate 2.5 to 2 forks
			return &yaml.TypeError{Errors: []string{lineMsg(n, fmt.Sprintf("%s is not a whole number of forks (write a count like 5)", n.Value))}}
		}
		if err := n.Decode(&k); err != nil {
			return &yaml.TypeError{Errors: []string{lineMsg(n, fmt.Sprintf("%q is not a number of forks (write a number like 5, or {min: 5, max: 20} for sequential rounds)", n.Value))}}
		}
		r.Min, r.Max = k, k
		return nil
	case yaml.MappingNode:
		type plain Rounds // no UnmarshalYAML: avoids recursing into this method
		var p plain
		if err := n.Decode(&p); err != nil {
			return err
		}
		*r = Rounds(p)
		return nil
	}
	return &yaml.TypeError{Errors: []string{lineMsg(n, "a list is not a number of forks (write a number like 5, or {min: 5, max: 20} for sequential rounds)")}}
}

// MarshalYAML writes a fixed count as a number, so a normalized manifest
// reads the way its author would have written it.
func (r Rounds) MarshalYAML() (any, error) {
	if r.Min == r.Max {
		return r.Min, nil
	}
	type plain Rounds
	return plain(r), nil
}

// IsZero lets omitempty drop an unset count.
func (r Rounds) IsZero() bool { return r.Min == 0 && r.Max == 0 }

// Sequential tells whether rounds past Min depend on the claims.
func (r Rounds) Sequential() bool { return r.Max > r.Min }

func (r Rounds) String() string {
	if r.Sequential() {
		return fmt.Sprintf("%d..%d", r.Min, r.Max)
	}
	return fmt.Sprint(r.Min)
}

// Noise is the in-trial noise gate: CPU used on the host outside threadlab
// (its own process, the target's process group and the services it
// started) and CPU stolen by the hypervisor, both in % of one core averaged
// over a measured window. A window above either is invalid and re-run.
type Noise struct {
	MaxOutsidePct float64 `yaml:"max_outside_pct,omitempty"`
	MaxStealPct   float64 `yaml:"max_steal_pct,omitempty"`
	// MaxReleaseSpread bounds how far apart the shares of a burst split
	// across generators (run --hosts) may leave, first to last, on the
	// agreed clock; a trial over it is invalid (the target saw several
	// smaller bursts). Default DefaultMaxReleaseSpread.
	MaxReleaseSpread time.Duration `yaml:"max_release_spread,omitempty"`
}

// Defaults of the replication fields, filled by Normalize.
const (
	DefaultForks          = 5
	DefaultRetries        = 3
	DefaultNoisePct       = 10.0                   // % of one core: the "10% of one core averaged over the window"
	DefaultIterationPause = 250 * time.Millisecond // drains the last window's stragglers; short, it is dead time
	// A few ms: well above timer wake-up jitter and the clock offsets'
	// uncertainty on one network (half a ping's RTT, well under 1 ms),
	// far below any wait a burst experiment is about (tens to hundreds of ms).
	DefaultMaxReleaseSpread = 5 * time.Millisecond
)

// normalizeReplication moves the older trials: into forks: and fills the
// defaults. A manifest that sets both keeps both, for validation to reject.
func (m *Manifest) normalizeReplication() {
	if m.FreshJVM != nil && *m.FreshJVM {
		// fresh_jvm: true (the old default, saved in every run before
		// forks existed) says what forks already mean: drop it, so old
		// runs still load for resume and --reevaluate.
		m.FreshJVM = nil
	}
	if m.Trials != nil && m.Forks.IsZero() {
		m.Forks, m.Trials = *m.Trials, nil
		m.forksKey = "trials"
	}
	if m.Forks.IsZero() {
		m.Forks = Rounds{Min: DefaultForks, Max: DefaultForks}
	}
	if m.Forks.Max == 0 {
		m.Forks.Max = m.Forks.Min
	}
	if m.Iterations == 0 {
		m.Iterations = 1
	}
	if m.Retries == nil {
		r := DefaultRetries
		m.Retries = &r
	}
	if m.Noise.MaxOutsidePct == 0 {
		m.Noise.MaxOutsidePct = DefaultNoisePct
	}
	if m.Noise.MaxStealPct == 0 {
		m.Noise.MaxStealPct = DefaultNoisePct
	}
	if m.CoolDown.Iteration == 0 {
		m.CoolDown.Iteration = DefaultIterationPause
	}
	if m.Noise.MaxReleaseSpread == 0 {
		m.Noise.MaxReleaseSpread = DefaultMaxReleaseSpread
	}
}

// ForksKey is the key the author used for the fork count: "forks", or
// "trials" (its older name), so messages quote what is in the file.
func (m *Manifest) ForksKey() string {
	if m.forksKey != "" {
		return m.forksKey
	}
	return "forks"
}

// validateReplication checks the replication fields of a normalized manifest.
func (m *Manifest) validateReplication(bad func(string, string, ...any)) {
	if m.FreshJVM != nil && !*m.FreshJVM {
		bad("fresh_jvm", "was removed: a cell now runs forks (fresh JVMs) x iterations (measured windows per JVM); "+
			"write forks: 1 and iterations: N for what fresh_jvm: false with trials: N did, or forks: N for fresh_jvm: true, "+
			"and delete fresh_jvm (3 or more forks make the claims' tests meaningful)")
	}
	if m.Trials != nil {
		bad("trials", "set together with forks: keep one (trials is the older name of forks, the number of fresh JVMs per cell)")
	}
	key := m.ForksKey()
	switch f := m.Forks; {
	case f.Min < 1:
		bad(key, "must be at least 1 (got %d); %d or more give a confidence interval", f.Min, stats.MinTrialsCI)
	case f.Max < f.Min:
		bad(key+".max", "%d is below min %d (write {min: 5, max: 20}: min rounds always, more while a claim is undecided)", f.Max, f.Min)
	}
	if m.Iterations < 1 {
		bad("iterations", "must be at least 1 (got %d): measured windows or bursts per fork after its warm-up", m.Iterations)
	}
	if m.Retries != nil && *m.Retries < 0 {
		bad("retries", "must not be negative (got %d); 0 re-runs nothing, so a cell may end below its planned forks", *m.Retries)
	}
	if m.Noise.MaxOutsidePct < 0 || m.Noise.MaxStealPct < 0 {
		bad("noise", "thresholds are %% of one core and must be positive (default %g); set one above 100 x cores to switch that gate off", DefaultNoisePct)
	}
	if m.Noise.MaxReleaseSpread < 0 {
		bad("noise.max_release_spread", "must not be negative (got %v): the most a split burst's shares may leave apart, like 5ms (the default)", m.Noise.MaxReleaseSpread)
	}
	if m.CoolDown.Iteration < 0 {
		bad("cooldown.iteration", "must not be negative (the pause between two iterations of one fork, like 500ms)")
	}
}

// lintReplication warns about replication that looks stronger than it is.
// Its three thresholds are the statistics' own: stats.MinTrialsCI forks
// give an interval of the median, stats.MinTrialsTest per side can make a
// two-sided comparison significant, and below stats.MinReplicates forks
// every claim stays inconclusive (the minimum-forks rule).
func (m *Manifest) lintReplication(warn func(string, string, ...any)) {
	key, n := m.ForksKey(), m.Forks.Min
	noun := key
	if n == 1 {
		noun = key[:len(key)-1]
	}
	if n < stats.MinTrialsCI {
		warn(key, "%d %s give no 95%% confidence interval of the median (%d or more do; seed 000 saw one trial swing by more than 50%%)", n, noun, stats.MinTrialsCI)
	}
	if n < stats.MinTrialsTest && len(m.Variants) > 1 {
		warn(key, "fewer than %d %s per cell cannot show a significant difference between variants (Mann-Whitney U needs %d against %d)",
			stats.MinTrialsTest, key, stats.MinTrialsTest, stats.MinTrialsTest)
	}
	if m.Forks.Sequential() && len(m.Claims) == 0 {
		warn(key, "sequential rounds (%s) stop when the claims are decided, and this manifest has none: every cell runs to max %d; write a number instead", m.Forks, m.Forks.Max)
	}
	if n < stats.MinReplicates && m.Profile != "smoke" && len(m.Claims) > 0 {
		warn(key, "%d fresh JVM(s) with %d iteration(s) each: iterations of one JVM are not independent, so every claim stays inconclusive below %d forks; use %d or more",
			n, m.Iterations, stats.MinReplicates, stats.MinReplicates)
	}
}
