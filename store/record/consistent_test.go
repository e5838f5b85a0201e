package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadConsistent: Read refuses a run whose files contradict each
// other (rows of another variant or group, more forks than the cell
// started, another experiment's manifest) and reports, without refusing,
// what leaves the page unverifiable (no trials under a complete run, a
// torn last line, a run.json without a name).
func TestReadConsistent(t *testing.T) {
	meta := Meta{ID: "20261201T000000Z", Experiment: "io-bound", Variants: []string{"platform", "webflux"}, Groups: []string{"main"},
		State: "complete", Cells: []CellStop{{Variant: "platform", Runs: 2}, {Variant: "webflux", Runs: 2}}}
	row := func(v string, fork int) Trial {
		return Trial{Variant: v, Group: "main", Trial: fork, Fork: fork, Valid: true, Requests: 10, WallMs: 5}
	}
	good := []Trial{row("platform", 1), row("platform", 2), row("webflux", 1), row("webflux", 2)}
	for _, c := range []struct {
		why      string
		meta     func(*Meta)
		trials   []Trial
		manifest string
		tear     bool
		err      string // "" for a run that reads
		problem  string // a Problems entry, "" for none
	}{
		{why: "a consistent run", trials: good},
		{why: "rows of a variant run.json does not list (webflx vanished from diff)", trials: append(good[:3:3], row("webflx", 2)),
			err: `trials.csv line 5, column variant: "webflx" is not one of the run's variants (platform, webflux in run.json)`},
		{why: "a group the run did not have", trials: append(good[:3:3], Trial{Variant: "webflux", Group: "nope", Trial: 2, Fork: 2}),
			err: `column group: "nope" is not one of the run's request groups`},
		{why: "a phantom fork: more forks than the cell started", trials: append(good, row("platform", 99999)),
			err: "cell platform has rows of 3 forks, but run.json says it started 2"},
		{why: "a running run's cells are not final: no fork check", meta: func(m *Meta) { m.State = "running" }, trials: append(good, row("platform", 3))},
		{why: "another experiment's manifest", trials: good, manifest: "name: cpu-bound\n",
			err: `manifest.yaml is experiment "cpu-bound"'s, but`},
		{why: "its own manifest", trials: good, manifest: "name: io-bound\n"},
		{why: "a complete run without trials", trials: nil, problem: "has no trial rows, though run.json says the run is complete"},
		{why: "a torn last line", trials: good, tear: true, problem: "ends in a line without its newline, left out"},
		{why: "run.json without a name", meta: func(m *Meta) { m.ID, m.Experiment = "", "" }, trials: good, problem: "names no run id or experiment"},
	} {
		dir := t.TempDir()
		m := meta
		m.Cells = append([]CellStop(nil), meta.Cells...)
		if c.meta != nil {
			c.meta(&m)
		}
		if err := WriteJSON(dir, RunFile, m); err != nil {
			t.Fatal(err)
		}
		if err := WriteCSV(dir, TrialsFile, c.trials); err != nil {
			t.Fatal(err)
		}
		if c.tear {
			f, err := os.OpenFile(filepath.Join(dir, TrialsFile), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("platform,,main,3")
			f.Close()
		}
		if c.manifest != "" {
			if err := WriteFile(dir, ManifestFile, []byte(c.manifest)); err != nil {
				t.Fatal(err)
			}
		}
		r, err := Read(dir)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.why, err, c.err)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", c.why, err)
			continue
		}
		got := strings.Join(r.Problems, "; ")
		if (c.problem == "") != (got == "") || !strings.Contains(got, c.problem) {
			t.Errorf("%s: problems %q, want %q", c.why, got, c.problem)
		}
	}
}
