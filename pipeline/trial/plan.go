package trial

import (
	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/pipeline/replicate"
)

// LoadPlan turns the manifest's load into a load.Plan for one cell; sweep
// dimensions over load parameters set them on the measured group. The
// conversion is experiments.Manifest.LoadGroups, the one the loader
// validates, so a manifest that loads is a plan the generator accepts.
func LoadPlan(m *experiments.Manifest, c replicate.Cell, target string, seed int64) (load.Plan, error) {
	groups, err := m.LoadGroups(c.Variant, c.Point)
	return load.Plan{Target: target, Seed: seed, Groups: groups}, err
}

// Properties are the Spring properties of a cell: the variant's, the
// swept ones, then those of the services threadlab started.
func Properties(m *experiments.Manifest, c replicate.Cell, services map[string]string) map[string]string {
	props := map[string]string{}
	for k, v := range c.Variant.Properties {
		props[k] = v
	}
	for _, d := range m.Sweep {
		if d.Property != "" {
			props[d.Property] = c.Point[d.Name]
		}
	}
	for k, v := range services {
		props[k] = v
	}
	return props
}
