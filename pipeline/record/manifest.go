package record

import (
	"time"

	"gopkg.in/yaml.v3"
)

// ManifestInfo is the part of a run's manifest.yaml (the manifest as run)
// that the run's readers use: its summary, the next run's time estimate,
// dimensioning. It is decoded leniently, not through package experiments:
// the data files are the contract and the manifest is context, so a run
// whose manifest schema has since moved on still gives what can be read,
// and what cannot stays zero. experiments.Load is the strict reader of a
// manifest to run.
type ManifestInfo struct {
	Variants VariantInfos `yaml:"variants"`
	Load     struct {
		Warmup WarmupInfo `yaml:"warmup"`
	} `yaml:"load"`
	CoolDown struct {
		Iteration string `yaml:"iteration"` // pause between iterations of a fork, as written (10s)
	} `yaml:"cooldown"`
}

// ParseManifestInfo decodes a manifest as run. On an error (not YAML, or a
// field of another type than today's) it returns what it could read with
// the error, so a caller may go on with the rest.
func ParseManifestInfo(b []byte) (ManifestInfo, error) {
	var mi ManifestInfo
	err := yaml.Unmarshal(b, &mi)
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
	Name   string `yaml:"-"`      // its key under variants:
	Target string `yaml:"target"` // a built-in target (a JVM), "" for a command
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

// WarmupInfo is load.warmup as run: a duration (10s, Min = Max), or the
// until-steady mapping {min, max, until: steady}.
type WarmupInfo struct {
	Min   time.Duration `yaml:"min"`
	Max   time.Duration `yaml:"max"`
	Until string        `yaml:"until"`
}

// UnmarshalYAML accepts both forms of load.warmup.
func (w *WarmupInfo) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var d time.Duration
		if err := n.Decode(&d); err != nil {
			return err
		}
		*w = WarmupInfo{Min: d, Max: d}
		return nil
	}
	type plain WarmupInfo
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*w = WarmupInfo(p)
	return nil
}

// Steady tells whether the warm-up ran until each fork was steady.
func (w WarmupInfo) Steady() bool { return w.Until == "steady" }
