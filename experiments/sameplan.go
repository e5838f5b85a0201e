package experiments

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"

	"gopkg.in/yaml.v3"
)

// SameMeasurement reports whether two normalized manifests measure the
// same thing: the same variants, services, sweep, load, replication,
// pinning and the rest, ignoring what only describes or judges the
// measurement (title, question, source, notes, variant descriptions and roles, the
// seed the run drew, and the claims). It is the gate for re-evaluating a
// finished run with claims edited after it ran: new claims may be judged
// on old data only when the data are of the plan the new manifest
// describes. When they differ it returns the first differing line of each
// (normalized YAML), so the message can say what changed.
//
// When both warm up until steady and no variant measures its start, the
// number of forks and of iterations is replication, not measurement
// (Kalibera & Jones' lower levels): a steady fork's later iterations
// measure the state its earlier ones did, and fewer forks only widen the
// run's own interval, which the verdicts carry. So a run with fewer
// windows than today's plan (connection-burst 20261203T070155Z: 11 against
// 16) can be judged under today's claims; judge/across compares runs on
// the same rule. Under a fixed warm-up the iterations decide how much
// warm-up leaks into a fork's median, so they stay measured.
func SameMeasurement(run, edited *Manifest) (diff string, same bool, err error) {
	a, err := measurementYAML(run, replicationOnly(run, edited))
	if err != nil {
		return "", false, err
	}
	b, err := measurementYAML(edited, replicationOnly(run, edited))
	if err != nil {
		return "", false, err
	}
	if bytes.Equal(a, b) {
		return "", true, nil
	}
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < max(len(la), len(lb)); i++ {
		var x, y []byte
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if !bytes.Equal(x, y) {
			return fmt.Sprintf("line %d of the normalized plan: the run has %q, the edited manifest %q", i+1, x, y), false, nil
		}
	}
	return "", false, nil
}

// replicationOnly reports whether forks and iterations are replication in
// both manifests: both warm up until steady and no variant of either
// measures its start (measure: cold), whose median depends on how many
// warm iterations follow the cold one.
func replicationOnly(a, b *Manifest) bool {
	steady := func(m *Manifest) bool {
		return m.Load.Warmup.Steady() && !slices.ContainsFunc(m.Variants, func(v Variant) bool { return v.Measure == MeasureCold })
	}
	return steady(a) && steady(b)
}

// measurementYAML is the normalized manifest with the describing and
// judging fields cleared, and the replication counts too when
// replication says they are replication only.
func measurementYAML(m *Manifest, replication bool) ([]byte, error) {
	c := *m
	c.Title, c.Question, c.Source, c.Notes = "", "", "", ""
	c.Claims, c.Seed, c.Profile = nil, 0, ""
	if replication {
		c.Forks, c.Iterations = Rounds{}, 0
	}
	c.Variants = slices.Clone(m.Variants)
	for i := range c.Variants {
		c.Variants[i].Describe, c.Variants[i].Role = "", ""
	}
	return Marshal(&c)
}

// ChangedFields names the top-level fields of the normalized plan in which
// two manifests differ (load, forks, variants, ...), in the order the
// normalized manifest writes them, the run's fields first: what a reader
// of a run's page needs to know when the catalog's manifest has moved on
// since the run (render/report's drift notice). Describing and judging
// fields do not count, as in SameMeasurement; ClaimsChanged reports the
// claims. Empty when SameMeasurement holds.
func ChangedFields(run, edited *Manifest) ([]string, error) {
	a, err := measurementYAML(run, false) // a reader is told of every change, replication too
	if err != nil {
		return nil, err
	}
	b, err := measurementYAML(edited, false)
	if err != nil {
		return nil, err
	}
	fa, err := topFields(a)
	if err != nil {
		return nil, err
	}
	fb, err := topFields(b)
	if err != nil {
		return nil, err
	}
	var changed []string
	seen := map[string]bool{}
	for _, k := range append(fa.order, fb.order...) {
		if seen[k] {
			continue
		}
		seen[k] = true
		if !reflect.DeepEqual(fa.values[k], fb.values[k]) {
			changed = append(changed, k)
		}
	}
	return changed, nil
}

// ClaimsChanged reports whether two manifests state different claims
// (ids, metrics, thresholds, points, seed passages: the normalized YAML of
// the claims).
func ClaimsChanged(run, edited *Manifest) (bool, error) {
	a, err := yaml.Marshal(run.Claims)
	if err != nil {
		return false, fmt.Errorf("encode claims: %w", err)
	}
	b, err := yaml.Marshal(edited.Claims)
	if err != nil {
		return false, fmt.Errorf("encode claims: %w", err)
	}
	return !bytes.Equal(a, b), nil
}

// fields is a YAML mapping's keys in order and their decoded values.
type fields struct {
	order  []string
	values map[string]any
}

// topFields decodes the top-level mapping of a YAML document.
func topFields(doc []byte) (fields, error) {
	f := fields{values: map[string]any{}}
	var n yaml.Node
	if err := yaml.Unmarshal(doc, &n); err != nil {
		return f, fmt.Errorf("decode the normalized manifest: %w", err)
	}
	if n.Kind != yaml.DocumentNode || len(n.Content) == 0 || n.Content[0].Kind != yaml.MappingNode {
		return f, nil
	}
	m := n.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		var v any
		if err := m.Content[i+1].Decode(&v); err != nil {
			return f, fmt.Errorf("decode %s of the normalized manifest: %w", m.Content[i].Value, err)
		}
		f.order = append(f.order, m.Content[i].Value)
		f.values[m.Content[i].Value] = v
	}
	return f, nil
}
