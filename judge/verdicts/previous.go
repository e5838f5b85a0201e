package verdicts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// Re-evaluating a run (`threadlab report --reevaluate`) judges its claims
// again with today's rules (OfRun) and says, from the data alone, what
// changed: the verdicts as first recorded stay in verdicts.previous.json,
// and every verdict whose status or reason differs from its previous one
// carries that one (record.Previous) and an evidence line.

// KeepPrevious copies the run's verdicts.json to verdicts.previous.json
// unless that already exists (a run re-evaluated before keeps its first
// verdicts); a run that never got verdicts keeps an empty list, so every
// claim is new.
func KeepPrevious(dir string) error {
	prev := filepath.Join(dir, record.PreviousVerdictsFile)
	if _, err := os.Stat(prev); err == nil {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, record.VerdictsFile))
	if errors.Is(err, os.ErrNotExist) {
		data = []byte("[]\n") // a run that never got verdicts: everything is new
	} else if err != nil {
		return err
	}
	return record.WriteFile(dir, record.PreviousVerdictsFile, data)
}

// Change is a claim whose verdict changed on re-evaluation, and how.
type Change struct {
	ID  string
	Why string
}

// MarkChanges compares the verdicts judged now with the ones recorded
// before (old). Each verdict that changed gets its previous status,
// reason, version and why (Previous, unless the claim is new) and, first
// in its evidence, a line saying which version re-evaluated it and what
// changed. It returns the changes in now's order.
func MarkChanges(old, now []record.Verdict, version string) []Change {
	var out []Change
	for i := range now {
		v := &now[i]
		prev := Find(old, v.ID)
		why := changeOf(prev, *v)
		if why == "" {
			continue
		}
		if prev != nil {
			v.Previous = &record.Previous{Status: prev.Status, Reason: prev.Reason, Version: prev.Version, Why: why}
		}
		v.Evidence = append([]string{fmt.Sprintf("re-evaluated by threadlab %s: %s", version, why)}, v.Evidence...)
		out = append(out, Change{ID: v.ID, Why: why})
	}
	return out
}

// Find is the verdict of claim id, nil when vs has none.
func Find(vs []record.Verdict, id string) *record.Verdict {
	for i := range vs {
		if vs[i].ID == id {
			return &vs[i]
		}
	}
	return nil
}

// changeOf says what changed between a claim's previous and current
// verdict, "" when nothing did.
func changeOf(prev *record.Verdict, now record.Verdict) string {
	decidedBy := func(v record.Verdict) string {
		if v.Version == "" {
			return "the rules it was recorded with"
		}
		return "threadlab " + v.Version
	}
	switch {
	case prev == nil:
		return fmt.Sprintf("new claim, %s: %s", stats.StatusText(now.Status), now.Reason)
	case prev.Status != now.Status:
		return fmt.Sprintf("was %s under %s (%s); now %s: %s (%s)",
			stats.StatusText(prev.Status), decidedBy(*prev), prev.Reason, stats.StatusText(now.Status), now.Reason, firstClause(now.Method))
	case prev.Reason != now.Reason:
		return fmt.Sprintf("still %s, for a new reason: %s (was: %s)", stats.StatusText(now.Status), now.Reason, prev.Reason)
	}
	return ""
}

// firstClause is a method line up to its first semicolon: the test's name.
func firstClause(s string) string {
	if i := strings.Index(s, ";"); i >= 0 {
		return s[:i]
	}
	return s
}
