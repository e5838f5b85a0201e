package report

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/store/record"
)

// A published run answers the manifest it ran, which it keeps
// (manifest.yaml). The catalog's manifest may have moved on since: more
// forks, a cold reading instead of a warm one, another warm-up rule. A
// reader of the page, or of the index that lists it as the experiment's
// headline, must not take the run for an answer to today's plan. drift
// says what changed and what brings the page up to date: a new run when
// the plan changed, a re-evaluation when only the claims did.

// drift is a run's manifest against the catalog's today.
type drift struct {
	// Manifest is the catalog file compared with, as the run names it
	// (experiments/spike.yaml).
	Manifest string
	// Fields are the top-level fields of the plan that differ (load,
	// forks, variants, ...): the run measured another plan.
	Fields []string
	// Claims is set when only the claims differ: the run can be judged by
	// today's claims without running it again.
	Claims bool
	// Err says why the run's own manifest could not be compared (it no
	// longer loads with this threadlab).
	Err string
	// Current is the ID of a later run of the experiment, beside this one,
	// that answers today's plan and claims (the latest such): the reader
	// is sent to it instead of to a new run. Set by laterCurrent.
	Current string
}

// catalogDrift compares the run's manifest with the catalog file it was
// made from, when that file is at hand: a run in <root>/data/<experiment>
// /<id> made from a manifest path inside <root> (experiments/x.yaml, as
// `make experiment` runs it). It returns nil when there is nothing to say:
// the plan and the claims are today's, the catalog file is not there (a
// run rendered elsewhere, a test), it does not load (lint reports that),
// or it is another experiment's. The path comes from run.json, which a
// pull request may carry: only a local path ending in .yaml is read.
func catalogDrift(r *record.Run) *drift {
	if r == nil || r.Dir == "" || len(r.Manifest) == 0 {
		return nil
	}
	path := filepath.ToSlash(r.Meta.Manifest)
	if !filepath.IsLocal(path) || !strings.HasSuffix(path, ".yaml") {
		return nil
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Clean(r.Dir))))
	file := filepath.Join(root, filepath.FromSlash(path))
	if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	today, err := experiments.Load(file, r.Meta.Profile)
	if today == nil || err != nil && !experiments.HostOnly(err) {
		return nil
	}
	d := &drift{Manifest: path}
	ran, err := experiments.Parse(record.ManifestFile, r.Manifest, "")
	if ran == nil {
		d.Err = fmt.Sprintf("the run's %s no longer loads with this threadlab (%v)", record.ManifestFile, firstLine(err))
		return d
	}
	if ran.Name != today.Name {
		return nil
	}
	if d.Fields, err = experiments.ChangedFields(ran, today); err != nil {
		d.Err = err.Error()
		return d
	}
	if len(d.Fields) == 0 {
		if d.Claims, err = experiments.ClaimsChanged(ran, today); err != nil {
			d.Err = err.Error()
			return d
		}
		if !d.Claims {
			return nil
		}
	}
	return d
}

// laterCurrent returns the ID of the latest run beside r (the same
// experiment directory) that is later than r and answers today's catalog
// manifest, "" when there is none. A run's page that is an older plan's
// then points at the run that answers today's, not at a new run that is
// not needed. Only runs with verdicts count: the page's reader wants an
// answer.
func laterCurrent(r *record.Run) string {
	if r == nil || r.Dir == "" {
		return ""
	}
	dir := filepath.Clean(r.Dir)
	dirs, err := record.Runs(filepath.Dir(filepath.Dir(dir)), filepath.Base(filepath.Dir(dir)))
	if err != nil {
		return ""
	}
	self := filepath.Base(dir)
	for i := len(dirs) - 1; i >= 0; i-- {
		id := filepath.Base(dirs[i])
		if id <= self {
			break // Runs sorts by name; run IDs sort by start time
		}
		h := headlineOf(dirs[i])
		if !h.verdicts || !h.complete {
			continue
		}
		o, err := runForDrift(dirs[i])
		if err != nil || len(o.Manifest) == 0 {
			continue
		}
		// The same catalog file, or catalogDrift's nil means "not compared".
		if o.Meta.Manifest == r.Meta.Manifest && catalogDrift(o) == nil {
			return h.id
		}
	}
	return ""
}

// runForDrift reads what catalogDrift compares of the run in dir: its
// run.json and manifest.yaml.
func runForDrift(dir string) (*record.Run, error) {
	r := &record.Run{Dir: dir}
	if err := record.ReadJSON(dir, record.RunFile, &r.Meta); err != nil {
		return nil, err
	}
	var err error
	if r.Manifest, err = record.ReadRegular(filepath.Join(dir, record.ManifestFile), record.MaxMetaBytes); err != nil {
		return nil, err
	}
	return r, nil
}

// firstLine is an error's first line: a loader error lists every problem.
func firstLine(err error) string {
	if err == nil {
		return ""
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// Text is the notice for the run's page and report.md.
func (d *drift) Text(experiment, runDir string) string {
	switch {
	case d == nil:
		return ""
	case d.Err != "":
		return fmt.Sprintf("This run could not be compared with today's %s: %s. Its numbers answer the manifest it ran (%s).", d.Manifest, d.Err, record.ManifestFile)
	case len(d.Fields) > 0 && d.Current != "":
		return fmt.Sprintf("%s has changed since this run: %s %s. The numbers here answer the plan the run was made with (%s); run %s answers today's.",
			d.Manifest, fieldList(d.Fields), verbAgrees(len(d.Fields)), record.ManifestFile, d.Current)
	case len(d.Fields) > 0:
		return fmt.Sprintf("%s has changed since this run: %s %s. The numbers here answer the plan the run was made with (%s); a new run measures today's: make publish EXPS=%s.",
			d.Manifest, fieldList(d.Fields), verbAgrees(len(d.Fields)), record.ManifestFile, experiment)
	case d.Current != "":
		return fmt.Sprintf("%s has changed since this run in its claims only: the verdicts here judge the claims the run was made with. Run %s answers today's plan and claims; this one is judged by today's claims with: threadlab report --reevaluate --claims %s %s.",
			d.Manifest, d.Current, d.Manifest, filepath.ToSlash(runDir))
	}
	return fmt.Sprintf("%s has changed since this run in its claims only: the verdicts here judge the claims the run was made with. Today's claims judge the same data with: threadlab report --reevaluate --claims %s %s.",
		d.Manifest, d.Manifest, filepath.ToSlash(runDir))
}

// Badge is the short label of the index's run table; Title its tooltip.
func (d *drift) Badge() string {
	switch {
	case d == nil:
		return ""
	case d.Err != "" || len(d.Fields) > 0:
		return "older plan"
	}
	return "older claims"
}

// Title is the badge's tooltip.
func (d *drift) Title() string {
	switch {
	case d == nil:
		return ""
	case d.Err != "":
		return d.Err
	case len(d.Fields) > 0:
		return fmt.Sprintf("%s has changed since this run (%s): its numbers answer the plan it ran", d.Manifest, strings.Join(d.Fields, ", "))
	}
	return fmt.Sprintf("%s's claims have changed since this run: re-evaluate it with --claims", d.Manifest)
}

// fieldList writes fields as "forks", "forks and load", "forks, load and
// variants".
func fieldList(f []string) string {
	if len(f) == 1 {
		return f[0]
	}
	return strings.Join(f[:len(f)-1], ", ") + " and " + f[len(f)-1]
}

// verbAgrees is "differs" after one field, "differ" after more.
func verbAgrees(n int) string {
	if n == 1 {
		return "differs"
	}
	return "differ"
}

// unpublished lists the catalog's experiments (the .yaml files of the
// experiments directory beside dataDir, as in a checkout: data/ and
// experiments/ side by side) that have no run under dataDir, with their
// titles and questions, so the index names every experiment the catalog
// offers. has reports whether an experiment has runs. Files that do not
// load are listed by name: lint reports what is wrong with them.
func unpublished(dataDir string, has func(name string) bool) []experimentView {
	dir := filepath.Join(filepath.Dir(filepath.Clean(dataDir)), "experiments")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil
	}
	sort.Strings(files)
	var out []experimentView
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if has(name) {
			continue
		}
		ev := experimentView{Name: name, Title: name, Unpublished: true}
		if m, err := experiments.Load(f, ""); m != nil && (err == nil || experiments.HostOnly(err)) {
			if m.Name != name {
				continue // the file's experiment is another name's; its runs are under that name
			}
			ev.Title, ev.Question = firstOf(m.Title, name), m.Question
		}
		out = append(out, ev)
	}
	return out
}

// runRef is a run directory as a command run from the checkout names it:
// its last three components (data/spike/20261202T051402Z).
func runRef(dir string) string {
	c := filepath.Clean(dir)
	exp := filepath.Dir(c)
	return filepath.Base(filepath.Dir(exp)) + "/" + filepath.Base(exp) + "/" + filepath.Base(c)
}
