package layers

import (
	"bufio"
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layer is one floor of the module, bottom first.
type layer struct {
	name string
	pkgs []string // paths inside the module
}

// layers is README.md's drawing of the layers as data, bottom first: a
// package may import packages of its own layer or a lower one, never a
// higher one.
var layers = []layer{
	{"data on disk, and helpers that import nothing of ours", []string{
		"store/record", "store/markdown", "store/digits", "internal/testenv", "internal/layers", "internal/yamlpos",
		"cmd/threadlab/internal/fakeserver", "measure/load/internal/benchserver", "measure/load/internal/nethttpbaseline"}},
	{"measuring, hosts", []string{
		"measure/load", "measure/fleet", "measure/bounds", "measure/metric", "measure/metric/metrictest", "measure/telemetry",
		"env", "env/supervise", "env/downstream", "env/postgres", "env/targets", "env/hosts", "env/remote", "env/remote/netnstest"}},
	{"statistics", []string{"stats", "stats/steady", "stats/dimension"}},
	{"the manifest", []string{"experiments", "experiments/seeds"}},
	{"reading runs", []string{"judge/verdicts", "judge/diff", "judge/across"}},
	{"rendering", []string{"render/report", "render/console"}},
	{"running a plan", []string{"pipeline/preflight", "pipeline/replicate", "pipeline/cost", "pipeline/trial", "pipeline/forks"}},
	{"the orchestrator", []string{"pipeline"}},
	{"the CLI", []string{"cmd/threadlab", "cmd/hostsparity"}},
}

// TestLayers reads the imports of every package of the module (its
// non-test files, as the build sees them) and fails on an import that
// climbs a layer, on a package the table does not place, and on a table
// entry that names no package.
func TestLayers(t *testing.T) {
	root, module := moduleRoot(t)
	graph, err := imports(root, module)
	if err != nil {
		t.Fatal(err)
	}
	if len(graph) < 10 {
		t.Fatalf("found %d packages under %s: the walk is broken, not the layers", len(graph), root)
	}
	for _, v := range violations(graph, layers) {
		t.Error(v)
	}
}

// folders says which layer each top-level folder holds: the tree shows
// the layers (README.md, Layout). pipeline/ holds the orchestrator and,
// one level down, its rooms ("running a plan"); measure/ and env/ are one
// layer, what is measured and the hosts it is measured on.
var folders = map[string]string{
	"store":       "data on disk, and helpers that import nothing of ours",
	"internal":    "data on disk, and helpers that import nothing of ours",
	"measure":     "measuring, hosts",
	"env":         "measuring, hosts",
	"stats":       "statistics",
	"experiments": "the manifest",
	"judge":       "reading runs",
	"render":      "rendering",
	"pipeline/":   "running a plan", // pipeline's sub-packages
	"pipeline":    "the orchestrator",
	"cmd":         "the CLI",
}

// TestFoldersTellLayers: every package sits in the layer its top-level
// folder names, so the tree reads as the drawing. A package under an
// internal/ folder is a private helper of the package above it and may sit
// lower (the load generator's benchmark server is a leaf).
func TestFoldersTellLayers(t *testing.T) {
	for _, l := range layers {
		for _, pkg := range l.pkgs {
			if strings.Contains(pkg, "/internal/") {
				continue
			}
			top, _, nested := strings.Cut(pkg, "/")
			want, ok := folders[top]
			if nested && top == "pipeline" {
				want, ok = folders["pipeline/"]
			}
			if !ok {
				t.Errorf("package %s is in top-level folder %s/, which names no layer: add the folder to folders or move the package", pkg, top)
				continue
			}
			if want != l.name {
				t.Errorf("package %s is in layer %q but its folder %s/ holds %q: move it to the folder of its layer", pkg, l.name, top, want)
			}
		}
	}
}

// TestViolations: the check itself, on a small graph that breaks each rule.
func TestViolations(t *testing.T) {
	table := []layer{
		{"leaves", []string{"store/record", "stats"}},
		{"judging", []string{"judge/verdicts"}},
		{"orchestrator", []string{"pipeline"}},
		{"gone", []string{"pipeline/old"}},
	}
	graph := map[string][]string{
		"store/record":     nil,
		"stats":            {"store/record"},                                   // same layer: allowed
		"judge/verdicts":   {"stats", "pipeline"},                              // climbs to the orchestrator
		"pipeline":         {"judge/verdicts", "store/record"},                 // down: allowed
		"pipeline/new":     {"store/record"},                                   // not placed
		"pipeline/record2": {},                                                 // not placed either
		"cmd/x":            {"pipeline", "judge/verdicts", "pipeline/record3"}, // unplaced importer, unknown import
	}
	got := violations(graph, table)
	for _, want := range []string{
		"judge/verdicts (layer 2, judging) imports pipeline (layer 3, orchestrator)",
		"package cmd/x is in no layer",
		"package pipeline/new is in no layer",
		"package pipeline/record2 is in no layer",
		"layer 4 (gone) names pipeline/old, which is not a package of the module",
	} {
		if !slices.ContainsFunc(got, func(v string) bool { return strings.HasPrefix(v, want) }) {
			t.Errorf("no violation starting %q in:\n%s", want, strings.Join(got, "\n"))
		}
	}
	if len(got) != 5 {
		t.Errorf("%d violations, want 5 (imports within a layer or downward are allowed):\n%s", len(got), strings.Join(got, "\n"))
	}
}

// violations lists every import that climbs a layer, every package of the
// graph the table does not place and every table entry the graph lacks,
// each as a sentence that says how to fix it.
func violations(graph map[string][]string, table []layer) []string {
	level := map[string]int{}
	for i, l := range table {
		for _, p := range l.pkgs {
			level[p] = i + 1
		}
	}
	var out []string
	for _, p := range sortedKeys(graph) {
		lp, ok := level[p]
		if !ok {
			out = append(out, fmt.Sprintf("package %s is in no layer: add it to the layer it belongs to in internal/layers/layers_test.go (and to README.md's Layout drawing)", p))
			continue
		}
		for _, q := range graph[p] {
			if lq, ok := level[q]; ok && lq > lp {
				out = append(out, fmt.Sprintf("%s (layer %d, %s) imports %s (layer %d, %s): a package may import only its own layer or lower ones; move what it needs down, or pass it in from above",
					p, lp, table[lp-1].name, q, lq, table[lq-1].name))
			}
		}
	}
	for i, l := range table {
		for _, p := range l.pkgs {
			if _, ok := graph[p]; !ok {
				out = append(out, fmt.Sprintf("layer %d (%s) names %s, which is not a package of the module: remove it from internal/layers/layers_test.go", i+1, l.name, p))
			}
		}
	}
	return out
}

// imports maps each package of the module under root (its path inside the
// module) to the module packages its non-test files import.
func imports(root, module string) (map[string][]string, error) {
	graph := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") ||
			rel == "data" || rel == "reports" {
			return filepath.SkipDir // published results, caches, fixtures: no packages of ours
		}
		p, err := build.Default.ImportDir(path, 0)
		var none *build.NoGoError
		if errors.As(err, &none) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		var deps []string
		for _, imp := range p.Imports {
			if dep, ok := strings.CutPrefix(imp, module+"/"); ok {
				deps = append(deps, dep)
			}
		}
		graph[rel] = deps
		return nil
	})
	return graph, err
}

// moduleRoot finds go.mod above the test's directory and reads the module
// path from it.
func moduleRoot(t *testing.T) (root, module string) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		f, err := os.Open(filepath.Join(dir, "go.mod"))
		if err == nil {
			defer f.Close()
			s := bufio.NewScanner(f)
			for s.Scan() {
				if m, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
					return dir, strings.TrimSpace(m)
				}
			}
			t.Fatalf("%s has no module line", filepath.Join(dir, "go.mod"))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
