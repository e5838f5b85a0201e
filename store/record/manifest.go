package record

import (
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ManifestInfo is a run's manifest.yaml (the manifest as run) as the
// run's readers use it: its summary, the next run's time estimate,
// dimensioning, the report's layout, Method section and claim seeds, and
// the diff's comparison of two runs' manifests. It is the one reader of a
// manifest as run, decoded leniently, not through package experiments: the
// data files are the contract and the manifest is context, so a run whose
// manifest schema has since moved on still gives what can be read, and
// what cannot stays zero. experiments.Load is the strict reader of a
// manifest to run.
type ManifestInfo struct {
	Name     string `yaml:"name"`
	Title    string `yaml:"title"`
	Question string `yaml:"question"`
	Source   string `yaml:"source"`
	Notes    string `yaml:"notes"`
	Headline string `yaml:"headline"`

	Trials     int    `yaml:"trials"`
	Iterations int    `yaml:"iterations"`
	Retries    *int   `yaml:"retries"`
	Order      string `yaml:"order"`
	FreshJVM   *bool  `yaml:"fresh_jvm"`
	Noise      struct {
		MaxOutsidePct *float64 `yaml:"max_outside_pct"`
	} `yaml:"noise"`

	Variants VariantInfos `yaml:"variants"`
	Sweep    SweepInfos   `yaml:"sweep"`
	Load     struct {
		LoadGroupInfo `yaml:",inline"`
		Measure       string          `yaml:"measure"`
		Groups        []LoadGroupInfo `yaml:"groups"`
		Warmup        WarmupInfo      `yaml:"warmup"`
	} `yaml:"load"`
	CoolDown struct {
		MaxBusyPct float64 `yaml:"max_busy_pct"`
		MaxWait    string  `yaml:"max_wait"`
		Pause      string  `yaml:"pause"`
		Iteration  string  `yaml:"iteration"` // pause between iterations of a fork, as written (10s)
	} `yaml:"cooldown"`
	Pinning struct {
		Target    string `yaml:"target"`
		Services  string `yaml:"services"`
		Generator string `yaml:"generator"`
	} `yaml:"pinning"`
	Claims []ClaimInfo `yaml:"claims"`

	// Keys holds every top-level key's value, decoded generically (maps,
	// lists, scalars): how a diff tells which parts of two manifests
	// differ. Nil when the manifest does not decode as a YAML mapping; an
	// empty document is an empty map.
	Keys map[string]any `yaml:"-"`
}

// LoadGroupInfo is one request group of load (or load itself, for a
// manifest of one group), with durations as written.
type LoadGroupInfo struct {
	Name     string   `yaml:"name"`
	Model    string   `yaml:"model"`
	Users    int      `yaml:"users"`
	Rate     float64  `yaml:"rate"`
	Burst    int      `yaml:"burst"`
	Duration string   `yaml:"duration"`
	Start    string   `yaml:"start"`
	Think    []string `yaml:"think"`
	Timeout  string   `yaml:"timeout"`
	Stages   []struct {
		Duration string  `yaml:"duration"`
		Users    int     `yaml:"users"`
		Rate     float64 `yaml:"rate"`
	} `yaml:"stages"`
	Requests []struct {
		Method string `yaml:"method"`
		Path   string `yaml:"path"`
	} `yaml:"requests"`
	KeepAlive   *bool `yaml:"keepalive"`
	Preallocate int   `yaml:"preallocate"`
}

// ClaimInfo is one claim as run. Its check stays a YAML node: the check's
// syntax belongs to package stats (a layer above this one), whose
// stats.Check a reader decodes it into.
type ClaimInfo struct {
	ID    string    `yaml:"id"`
	Check yaml.Node `yaml:"check"`
	Seed  *struct {
		Value  *float64 `yaml:"value"`  // nil: the write-up gave no figure
		Scaled *float64 `yaml:"scaled"` // the figure at this profile's scale; nil when not given
		From   string   `yaml:"from"`
		Point  string   `yaml:"point"`
	} `yaml:"seed"`
}

// ParseManifestInfo decodes a manifest as run. On an error (not YAML, or a
// field of another type than today's) it returns what it could read with
// the error, so a caller may go on with the rest.
func ParseManifestInfo(b []byte) (ManifestInfo, error) {
	var mi ManifestInfo
	err := yaml.Unmarshal(b, &mi)
	var keys map[string]any
	if yaml.Unmarshal(b, &keys) == nil {
		if keys == nil {
			keys = map[string]any{}
		}
		mi.Keys = keys
	}
	return mi, err
}

// ReadManifestInfo is ParseManifestInfo of dir/manifest.yaml; a run without
// one reads as the zero ManifestInfo, with no error.
func ReadManifestInfo(dir string) (ManifestInfo, error) {
	b, err := readOptional(dir, ManifestFile)
	if err != nil || b == nil {
		return ManifestInfo{}, err
	}
	return ParseManifestInfo(b)
}

// VariantInfo is one variant of the manifest as run.
type VariantInfo struct {
	Name     string   `yaml:"-"`        // its key under variants:
	Target   string   `yaml:"target"`   // a built-in target (a JVM), "" for a command
	Command  []string `yaml:"command"`  // a command variant's argv
	Describe string   `yaml:"describe"` // the variant in words, for the report
	Role     string   `yaml:"role"`     // "control": a reference, not a choice (experiments.RoleControl)
	// SpringBoot is the release a built-in target was built on (4.1.2),
	// "" in runs recorded before the manifest wrote it.
	SpringBoot string `yaml:"spring_boot"`
	// Measure is "cold" for a variant that measured its start
	// (experiments.MeasureCold), "" for steady state.
	Measure string `yaml:"measure"`
}

// Get returns the variant called name.
func (vs VariantInfos) Get(name string) (VariantInfo, bool) {
	for _, v := range vs {
		if v.Name == name {
			return v, true
		}
	}
	return VariantInfo{}, false
}

// VariantInfos are the variants in manifest order.
type VariantInfos []VariantInfo

// UnmarshalYAML reads the variants mapping in document order; a variant
// that does not decode keeps its name only.
func (vs *VariantInfos) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return &yaml.TypeError{Errors: []string{"variants: not a mapping"}}
	}
	var errs []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		v := VariantInfo{Name: n.Content[i].Value}
		if err := n.Content[i+1].Decode(&v); err != nil {
			v = VariantInfo{Name: n.Content[i].Value}
			errs = append(errs, err.Error())
		}
		*vs = append(*vs, v)
	}
	if len(errs) > 0 {
		return &yaml.TypeError{Errors: errs}
	}
	return nil
}

// SweepInfo is one sweep dimension as run: its key, its values in
// manifest order (nil when they do not decode as a list of scalars) and
// the load figure of the measured group it sets ("users", "rate",
// "connections", "burst"; "" for a dimension that sets none).
type SweepInfo struct {
	Key    string
	Values []string
	Load   string
}

// SweepInfos are the sweep dimensions in manifest order.
type SweepInfos []SweepInfo

// UnmarshalYAML reads the sweep mapping in document order. It never fails:
// a sweep that is not a mapping reads as none, and a dimension whose
// values do not decode keeps its key.
func (ss *SweepInfos) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		var dim struct {
			Values []string `yaml:"values"`
			Load   string   `yaml:"load"`
		}
		s := SweepInfo{Key: n.Content[i].Value}
		if n.Content[i+1].Decode(&dim) == nil {
			s.Values, s.Load = dim.Values, dim.Load
		}
		*ss = append(*ss, s)
	}
	return nil
}

// WarmupInfo is load.warmup as run: a duration (10s, Min = Max), or the
// until-steady mapping {min, max, until: steady}. Text is the warm-up as
// written, for prose: "10s", or "until steady, 5s to 1m0s" (", also in
// target_cpu_s" when warmup.also names metrics); it is kept
// when the durations do not decode.
type WarmupInfo struct {
	Min   time.Duration `yaml:"min"`
	Max   time.Duration `yaml:"max"`
	Until string        `yaml:"until"`
	Text  string        `yaml:"-"`
}

// UnmarshalYAML accepts both forms of load.warmup.
func (w *WarmupInfo) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		w.Text = n.Value
		var d time.Duration
		if err := n.Decode(&d); err != nil {
			return err
		}
		w.Min, w.Max = d, d
		return nil
	}
	var text struct {
		Min, Max, Until string
		Also            []string
	}
	if err := n.Decode(&text); err != nil {
		return err
	}
	w.Text = "until " + text.Until + ", " + text.Min + " to " + text.Max
	if len(text.Also) > 0 {
		w.Text += ", also in " + strings.Join(text.Also, ", ")
	}
	type plain WarmupInfo
	var p plain
	err := n.Decode(&p)
	p.Text = w.Text
	*w = WarmupInfo(p)
	return err
}

// Steady tells whether the warm-up ran until each fork was steady.
func (w WarmupInfo) Steady() bool { return w.Until == "steady" }

// SteadyOnly tells whether the run measured steady state only: its load
// warmed up until steady and no variant measured its start (measure:
// cold), whose median depends on how many warm iterations follow the cold
// one. Forks and iterations are then replication, not part of what was
// measured (experiments.replicationOnly is the same rule on a manifest to
// run).
func (m ManifestInfo) SteadyOnly() bool {
	if !m.Load.Warmup.Steady() {
		return false
	}
	for _, v := range m.Variants {
		if v.Measure == "cold" {
			return false
		}
	}
	return true
}
