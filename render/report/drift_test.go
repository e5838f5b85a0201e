package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/store/record"
)

// catalogManifest is the catalog's io-bound manifest, loaded.
func catalogManifest(t *testing.T) *experiments.Manifest {
	t.Helper()
	m, err := experiments.Load("../../experiments/io-bound.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func marshalled(t *testing.T, m *experiments.Manifest) []byte {
	t.Helper()
	b, err := experiments.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCatalogDrift(t *testing.T) {
	raw, err := os.ReadFile("../../experiments/io-bound.yaml")
	if err != nil {
		t.Fatal(err)
	}
	edited := func(edit func(m *experiments.Manifest)) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			m := catalogManifest(t)
			edit(m)
			return marshalled(t, m)
		}
	}
	cases := []struct {
		why     string
		catalog func(t *testing.T) []byte // today's experiments/io-bound.yaml; nil: no such file
		path    string                    // manifest_path in run.json
		ran     []byte                    // the run's manifest.yaml; nil: the catalog's, normalized
		badge   string
		text    []string
	}{
		{"the catalog's own file, comments and profiles and all, against its normalized copy: nothing changed",
			func(*testing.T) []byte { return raw }, "experiments/io-bound.yaml", nil, "", nil},
		{"more forks and iterations: another plan, named, and a new run is what answers it",
			edited(func(m *experiments.Manifest) { m.Forks.Min, m.Forks.Max, m.Iterations = 9, 9, 12 }), "experiments/io-bound.yaml", nil,
			"older plan", []string{"experiments/io-bound.yaml has changed since this run: forks and iterations differ", "make publish EXPS=io-bound"}},
		{"a longer cap on the warm-up: the load changed",
			edited(func(m *experiments.Manifest) { m.Load.Warmup.Max *= 2 }), "experiments/io-bound.yaml", nil,
			"older plan", []string{": load differs"}},
		{"claims alone: the same data can be judged by today's claims",
			edited(func(m *experiments.Manifest) { m.Claims = m.Claims[1:] }), "experiments/io-bound.yaml", nil,
			"older claims", []string{"in its claims only", "threadlab report --reevaluate --claims experiments/io-bound.yaml data/io-bound/20261202T000000Z"}},
		{"a run's manifest this threadlab cannot load is said so, not compared",
			func(*testing.T) []byte { return raw }, "experiments/io-bound.yaml", []byte("name: io-bound\nvariants: 7\n"),
			"older plan", []string{"could not be compared", "no longer loads"}},
		{"no catalog file (a run rendered from elsewhere): nothing to say",
			nil, "experiments/io-bound.yaml", nil, "", nil},
		{"a path out of the checkout in run.json is never read",
			edited(func(m *experiments.Manifest) { m.Iterations = 12 }), "../io-bound.yaml", nil, "", nil},
		{"an absolute path in run.json is never read",
			edited(func(m *experiments.Manifest) { m.Iterations = 12 }), "/etc/io-bound.yaml", nil, "", nil},
		{"a file that is not a manifest (.yaml only) is never read",
			edited(func(m *experiments.Manifest) { m.Iterations = 12 }), "experiments/io-bound.yml", nil, "", nil},
		{"the file holds another experiment now: not this run's manifest",
			edited(func(m *experiments.Manifest) { m.Name, m.Iterations = "other", 12 }), "experiments/io-bound.yaml", nil, "", nil},
	}
	for _, c := range cases {
		t.Run(c.why, func(t *testing.T) {
			root := t.TempDir()
			if c.catalog != nil {
				must(t, os.MkdirAll(filepath.Join(root, "experiments"), 0o755))
				name := filepath.Base(c.path)
				must(t, os.WriteFile(filepath.Join(root, "experiments", name), c.catalog(t), 0o644))
			}
			ran := c.ran
			if ran == nil {
				ran = marshalled(t, catalogManifest(t))
			}
			r := &record.Run{Dir: filepath.Join(root, "data", "io-bound", "20261202T000000Z"),
				Meta: record.Meta{Experiment: "io-bound", Manifest: c.path, Profile: "default"}, Manifest: ran}
			d := catalogDrift(r)
			if got := d.Badge(); got != c.badge {
				t.Fatalf("badge %q, want %q (drift %+v)", got, c.badge, d)
			}
			text := d.Text("io-bound", runRef(r.Dir))
			for _, w := range c.text {
				if !strings.Contains(text, w) {
					t.Errorf("notice %q\ndoes not say %q", text, w)
				}
			}
			if c.badge == "" && text != "" {
				t.Errorf("no drift, but a notice: %q", text)
			}
		})
	}
}

// TestIndexShowsDriftAndTheUnpublished renders a checkout-shaped tree: the
// fixture's io-bound runs under data/, a catalog whose io-bound has more
// forks than its runs were made with, and a catalog experiment with no run.
func TestIndexShowsDriftAndTheUnpublished(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	src := filepath.Join(fixtureDir, "io-bound", ioRun)
	dst := filepath.Join(data, "io-bound", ioRun)
	must(t, os.MkdirAll(dst, 0o755))
	entries, err := os.ReadDir(src)
	must(t, err)
	for _, e := range entries {
		if e.Type().IsRegular() {
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			must(t, err)
			must(t, os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644))
		}
	}
	var meta map[string]any
	must(t, record.ReadJSON(dst, record.RunFile, &meta))
	meta["manifest_path"] = "experiments/io-bound.yaml"
	js, err := json.Marshal(meta)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dst, record.RunFile), js, 0o644))

	// Today's catalog: the fixture run's own manifest with more forks, and
	// a second experiment.
	ran, err := os.ReadFile(filepath.Join(dst, record.ManifestFile))
	must(t, err)
	load := func() *experiments.Manifest {
		m, err := experiments.Parse("the fixture's "+record.ManifestFile, ran, "")
		must(t, err)
		return m
	}
	must(t, os.MkdirAll(filepath.Join(root, "experiments"), 0o755))
	today := load()
	today.Forks.Min, today.Forks.Max = 11, 11
	must(t, os.WriteFile(filepath.Join(root, "experiments", "io-bound.yaml"), marshalled(t, today), 0o644))
	other := load()
	other.Name, other.Title = "never-run", "An experiment nobody has run yet"
	must(t, os.WriteFile(filepath.Join(root, "experiments", "never-run.yaml"), marshalled(t, other), 0o644))

	r, err := record.Read(dst)
	must(t, err)
	if r.Meta.Manifest != "experiments/io-bound.yaml" {
		t.Fatalf("fixture's run.json was not pointed at the catalog: manifest_path %q", r.Meta.Manifest)
	}
	reports := filepath.Join(root, "reports")
	page, err := Run(r, reports)
	must(t, err)
	b, err := os.ReadFile(page)
	must(t, err)
	if !bytes.Contains(b, []byte(`id="drift"><strong>Older plan.</strong> experiments/io-bound.yaml has changed since this run: forks differs.`)) {
		t.Errorf("the run page does not say its plan is older than the catalog's")
	}
	md, err := os.ReadFile(filepath.Join(filepath.Dir(page), MarkdownFile))
	must(t, err)
	if !bytes.Contains(md, []byte("> **Older plan.**")) {
		t.Errorf("report.md does not say its plan is older than the catalog's")
	}
	index, err := Index(data, reports)
	must(t, err)
	b, err = os.ReadFile(index)
	must(t, err)
	for _, want := range []string{
		`<span class="badge b-warn" title="experiments/io-bound.yaml has changed since this run (forks): its numbers answer the plan it ran">older plan</span>`,
		`An experiment nobody has run yet`,
		`No published run yet: <code>make experiment EXP=never-run</code>`,
	} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("the index does not show %q", want)
		}
	}
	if i, j := bytes.Index(b, []byte("<code class=\"muted\">io-bound</code>")), bytes.Index(b, []byte("<code class=\"muted\">never-run</code>")); i < 0 || j < 0 || i > j {
		t.Errorf("experiments are not listed in name order, the unpublished with the published (io-bound at %d, never-run at %d)", i, j)
	}
}

// TestLaterCurrent: an older run's page sends its reader to the later run
// that answers today's plan, and only to a run that does.
func TestLaterCurrent(t *testing.T) {
	raw, err := os.ReadFile("../../experiments/io-bound.yaml")
	must(t, err)
	older := catalogManifest(t)
	older.Iterations++
	type run struct {
		id, path, state string
		manifest        []byte
		verdicts        string
	}
	today := marshalled(t, catalogManifest(t))
	const old, later = "20261201T000000Z", "20261202T000000Z"
	cases := []struct {
		why  string
		runs []run // beside the older run
		want string
	}{
		{"a later complete run of today's plan with verdicts: the page names it",
			[]run{{later, "experiments/io-bound.yaml", "complete", today, `[{"claim":"x"}]`}}, later},
		{"the latest of two current runs is named",
			[]run{{"20261201T120000Z", "experiments/io-bound.yaml", "complete", today, `[{"claim":"x"}]`},
				{later, "experiments/io-bound.yaml", "complete", today, `[{"claim":"x"}]`}}, later},
		{"no later run: a new run is what answers today's plan",
			nil, ""},
		{"an earlier run of today's plan is not a later answer",
			[]run{{"20261130T000000Z", "experiments/io-bound.yaml", "complete", today, `[{"claim":"x"}]`}}, ""},
		{"a later run that was interrupted is no answer",
			[]run{{later, "experiments/io-bound.yaml", "interrupted", today, `[{"claim":"x"}]`}}, ""},
		{"a later run without verdicts is no answer",
			[]run{{later, "experiments/io-bound.yaml", "complete", today, `[]`}}, ""},
		{"a later run of another older plan is no answer",
			[]run{{later, "experiments/io-bound.yaml", "complete", marshalled(t, older), `[{"claim":"x"}]`}}, ""},
		{"a later run made from another file (not compared, so not known to be current) is no answer",
			[]run{{later, "/tmp/io-bound.yaml", "complete", today, `[{"claim":"x"}]`}}, ""},
	}
	for _, c := range cases {
		t.Run(c.why, func(t *testing.T) {
			root := t.TempDir()
			must(t, os.MkdirAll(filepath.Join(root, "experiments"), 0o755))
			must(t, os.WriteFile(filepath.Join(root, "experiments", "io-bound.yaml"), raw, 0o644))
			write := func(r run) string {
				dir := filepath.Join(root, "data", "io-bound", r.id)
				must(t, os.MkdirAll(dir, 0o755))
				js, err := json.Marshal(record.Meta{Experiment: "io-bound", Manifest: r.path, Profile: "default", State: r.state})
				must(t, err)
				must(t, os.WriteFile(filepath.Join(dir, record.RunFile), js, 0o644))
				must(t, os.WriteFile(filepath.Join(dir, record.ManifestFile), r.manifest, 0o644))
				must(t, os.WriteFile(filepath.Join(dir, record.VerdictsFile), []byte(r.verdicts), 0o644))
				return dir
			}
			dir := write(run{old, "experiments/io-bound.yaml", "complete", marshalled(t, older), `[{"claim":"x"}]`})
			for _, r := range c.runs {
				write(r)
			}
			r, err := record.Read(dir)
			must(t, err)
			d := catalogDrift(r)
			if d == nil || len(d.Fields) == 0 {
				t.Fatalf("the older run does not drift: %+v", d)
			}
			d.Current = laterCurrent(r)
			if d.Current != c.want {
				t.Fatalf("later current run %q, want %q", d.Current, c.want)
			}
			text := d.Text("io-bound", runRef(r.Dir))
			if want := "run " + c.want + " answers today's"; c.want != "" && !strings.Contains(text, want) {
				t.Errorf("notice %q\ndoes not say %q", text, want)
			}
			if c.want == "" && !strings.Contains(text, "make publish EXPS=io-bound") {
				t.Errorf("notice %q\ndoes not say a new run answers today's plan", text)
			}
		})
	}
}
