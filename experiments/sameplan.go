package experiments

import (
	"bytes"
	"fmt"
	"slices"
)

// SameMeasurement reports whether two normalized manifests measure the
// same thing: the same variants, services, sweep, load, replication,
// pinning and the rest, ignoring what only describes or judges the
// measurement (title, question, source, notes, variant descriptions, the
// seed the run drew, and the claims). It is the gate for re-evaluating a
// finished run with claims edited after it ran: new claims may be judged
// on old data only when the data are of the plan the new manifest
// describes. When they differ it returns the first differing line of each
// (normalized YAML), so the message can say what changed.
func SameMeasurement(run, edited *Manifest) (diff string, same bool, err error) {
	a, err := measurementYAML(run)
	if err != nil {
		return "", false, err
	}
	b, err := measurementYAML(edited)
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

// measurementYAML is the normalized manifest with the describing and
// judging fields cleared.
func measurementYAML(m *Manifest) ([]byte, error) {
	c := *m
	c.Title, c.Question, c.Source, c.Notes = "", "", "", ""
	c.Claims, c.Seed, c.Profile = nil, 0, ""
	c.Variants = slices.Clone(m.Variants)
	for i := range c.Variants {
		c.Variants[i].Describe = ""
	}
	return Marshal(&c)
}
