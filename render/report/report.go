// Package report owns threadlab's static site: one notebook-style HTML page
// per run (question, verdicts, charts, tables, validity, host, manifest,
// how to reproduce, raw data), a copy of the latest run per experiment, and
// the site index with the decision framework generated from the verdicts.
//
// Data flow: the pipeline (or `threadlab report`) reads a run directory with
// record.Read and calls Run, which renders
// reports/<experiment>/<run-id>/index.html, copies the run's CSV and JSON
// files next to it, refreshes reports/<experiment>/index.html and writes the
// vendored ECharts bundle to reports/assets/. Index then walks data/ and
// renders reports/index.html. Everything is derived from data/ alone, so a
// report can always be rebuilt, and the output is deterministic (fixed
// chart IDs, no clock) so it can be golden-tested and diffed in review.
//
// The site works offline: the only script is assets/echarts.min.js,
// loaded by a relative path; CSS is inline; every string from a manifest
// or data file is escaped by html/template.
package report

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/store/record"
)

//go:embed assets/echarts.min.js assets/LICENSE-echarts assets/NOTICE-echarts
var assetFS embed.FS

//go:embed templates
var templateFS embed.FS

// AssetsDir is the directory under the reports root that holds the
// vendored scripts every page loads.
const AssetsDir = "assets"

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"css": func() template.CSS {
		b, _ := templateFS.ReadFile("templates/style.css")
		return template.CSS(b)
	},
	"badge": badgeClass,
	"pt": func(p string) string {
		if p == "" {
			return "–"
		}
		return strings.ReplaceAll(p, ";", " ")
	},
	"summaryTable": func(v page, primary bool) summaryTable {
		t := summaryTable{Sweep: len(v.SweepKeys) > 0, Grouped: len(v.Groups) > 1}
		for _, r := range v.Summary {
			if (r.Metric == v.Primary) == primary {
				t.Rows = append(t.Rows, r)
			}
		}
		return t
	},
	"lastIndex": func(xs []string) int { return len(xs) - 1 },
	"label":     metric.Label,
	"sizeFlag":  sizeFlag,
	// trimDot lets a template end a sentence built from manifest text that
	// may or may not end with a period.
	"trimDot":  func(s string) string { return strings.TrimRight(strings.TrimSpace(s), ".") },
	"isNumCol": func(i int) bool { return i == 0 || i == 4 || i >= 6 },
}).ParseFS(templateFS, "templates/*.html"))

type summaryTable struct {
	Sweep, Grouped bool
	Rows           []summaryRow
}

// badgeClass maps a status word from data to one of the stylesheet's
// classes, so data never chooses arbitrary class names.
func badgeClass(s string) string {
	switch strings.ToLower(s) {
	case "supported", "solid", "ok", "pass", "complete", "contradicted", "failed", "fail", "bad", "error",
		"directional", "warn", "warning", "interrupted", "running", "inconclusive", "unknown", "skip", "not-applicable",
		"smaller", "equivalent", "reversed":
		return "b-" + strings.ToLower(s)
	case "true":
		return "b-ok"
	case "false":
		return "b-bad"
	}
	return "b-other"
}

// page is the template data: the run view plus the page's place in the site.
type page struct {
	*runView
	Up string // relative path to the reports root
}

// Run renders reports/<experiment>/<run-id>/index.html from a run read by
// record.Read, copies the run's raw CSV/JSON files next to it (so the raw
// data links work on a static site), writes the assets, and refreshes
// reports/<experiment>/index.html with the latest run of the experiment
// (this run, or a newer one found beside it in data/). It returns the path
// of the run's page.
func Run(r *record.Run, reportsDir string) (string, error) {
	if r == nil {
		return "", errors.New("report: no run given (read one with record.Read)")
	}
	if err := writeAssets(reportsDir); err != nil {
		return "", err
	}
	path, err := renderRun(r, reportsDir)
	if err != nil {
		return "", err
	}
	latest := latestSibling(r)
	if latest != r {
		if _, err := renderRun(latest, reportsDir); err != nil {
			return "", err
		}
	}
	if err := renderLatest(latest, reportsDir); err != nil {
		return "", err
	}
	return path, nil
}

// latestSibling returns the run the experiment's page headlines among r's
// siblings in data/ (headline.go: the manifest's choice, else the newest
// complete single-host run with verdicts), or r itself when it is that run
// or none can be read. Rendering an old run must not replace the
// experiment's page with stale numbers.
func latestSibling(r *record.Run) *record.Run {
	if r.Dir == "" { // built in memory, not read from data/
		return r
	}
	parent := filepath.Dir(filepath.Clean(r.Dir))
	dirs, err := record.Runs(filepath.Dir(parent), filepath.Base(parent))
	if err != nil || len(dirs) == 0 {
		return r
	}
	hs := make([]headlineRun, len(dirs))
	for i, d := range dirs {
		hs[i] = headlineOf(d)
	}
	i := pickHeadline(hs)
	if i < 0 {
		// No run has verdicts: the newest readable one.
		i = len(dirs) - 1
	}
	if filepath.Clean(dirs[i]) == filepath.Clean(r.Dir) {
		return r
	}
	if other, err := record.Read(dirs[i]); err == nil {
		return other
	}
	return r
}

func renderRun(r *record.Run, reportsDir string) (string, error) {
	exp, id, err := names(r)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(reportsDir, exp, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w (check that --reports points to a writable directory)", dir, err)
	}
	present, err := copyRaw(r.Dir, dir)
	if err != nil {
		return "", err
	}
	hists, logs, skipped, err := publishExtras(r.Dir, dir)
	if err != nil {
		return "", err
	}
	v, err := newRunView(r, "../../"+AssetsDir+"/", "", present)
	if err != nil {
		return "", err
	}
	for _, w := range skipped {
		fmt.Fprintln(os.Stderr, "report: warning:", w)
		v.Warnings = append(v.Warnings, w)
	}
	v.HistFiles, v.LogFiles = hists, logs
	if v.Compare, err = writeCompare(r, dir); err != nil {
		return "", err
	}
	if err := writeFile(filepath.Join(dir, MarkdownFile), v.markdown()); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "index.html")
	return path, writePage(path, "run.html", page{runView: v, Up: "../../"})
}

// renderLatest writes reports/<experiment>/index.html: a full copy of the
// run's page with paths one level up, rather than a redirect, so the
// experiment has a stable address that works without JavaScript or a
// server and prints the same.
func renderLatest(r *record.Run, reportsDir string) error {
	exp, id, err := names(r)
	if err != nil {
		return err
	}
	present := copied(filepath.Join(reportsDir, exp, id))
	v, err := newRunView(r, "../"+AssetsDir+"/", url.PathEscape(id)+"/", present)
	if err != nil {
		return err
	}
	v.HistFiles, v.LogFiles = publishedLinks(filepath.Join(reportsDir, exp, id), url.PathEscape(id)+"/")
	if old, _, same := previousRun(r); old != nil {
		v.Compare = &compareLink{Href: url.PathEscape(id) + "/" + CompareFile, OldID: runID(old), SameHost: same}
	}
	v.Latest = &latestLink{ID: id, Href: url.PathEscape(id) + "/index.html"}
	v.Across = readAcross(r)
	return writePage(filepath.Join(reportsDir, exp, "index.html"), "run.html", page{runView: v, Up: "../"})
}

// rendered, when set (by the view-model golden test), sees every page's
// template data before it is rendered: the meaning of the page, which the
// golden keeps beside a few whole pages.
var rendered func(path, tmpl string, data any)

func writePage(path, tmpl string, data any) error {
	if rendered != nil {
		rendered(path, tmpl, data)
	}
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, tmpl, data); err != nil {
		return fmt.Errorf("render %s: %w", path, err)
	}
	return writeFile(path, buf.Bytes())
}

// writeFile replaces path atomically and durably, world-readable:
// reports/ is meant to be served by any web server (record.WriteAtomic).
func writeFile(path string, data []byte) error {
	return record.WriteAtomic(path, bytes.NewReader(data))
}

// names returns the experiment and run ID used as directory names under
// reports/, from run.json or else from the run directory's own path.
func names(r *record.Run) (exp, id string, err error) {
	exp, id = experimentName(r), runID(r)
	for _, s := range []struct{ key, v string }{{"experiment", exp}, {"id", id}} {
		if s.v == "" || s.v == "." || s.v == ".." || strings.ContainsAny(s.v, `/\`+"\x00") {
			return "", "", fmt.Errorf("%s: %q cannot name a report directory: set a plain name as %q in %s", r.Dir, s.v, s.key, filepath.Join(r.Dir, record.RunFile))
		}
	}
	return exp, id, nil
}

func experimentName(r *record.Run) string {
	if r.Meta.Experiment != "" {
		return r.Meta.Experiment
	}
	return filepath.Base(filepath.Dir(filepath.Clean(r.Dir)))
}

func runID(r *record.Run) string {
	if r.Meta.ID != "" {
		return r.Meta.ID
	}
	return filepath.Base(filepath.Clean(r.Dir))
}

// copyRaw copies the run's data files into the report directory so that a
// published reports/ tree carries its own evidence. It returns which files
// exist. Histogram logs and target logs are published by publishExtras.
// Only regular files are copied, streamed: a link (warmup.csv ->
// ~/.ssh/id_ed25519) is refused with an error naming it.
func copyRaw(runDir, dst string) (map[string]bool, error) {
	present := map[string]bool{}
	if runDir == "" {
		return present, nil
	}
	for _, f := range rawFiles {
		src := filepath.Join(runDir, f.name)
		in, err := record.OpenRegular(src)
		if errors.Is(err, os.ErrNotExist) {
			os.Remove(filepath.Join(dst, f.name)) // a stale copy from an earlier render
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("copy raw data: %w", err)
		}
		err = record.WriteAtomic(filepath.Join(dst, f.name), in)
		in.Close()
		if err != nil {
			return nil, fmt.Errorf("copy raw data: %w", err)
		}
		present[f.name] = true
	}
	return present, nil
}

// copied lists which raw files a rendered run directory holds.
func copied(dir string) map[string]bool {
	present := map[string]bool{}
	for _, f := range rawFiles {
		if _, err := os.Stat(filepath.Join(dir, f.name)); err == nil {
			present[f.name] = true
		}
	}
	return present
}

// writeAssets writes the vendored ECharts bundle and its license to
// reports/assets/, skipping files that are already identical.
func writeAssets(reportsDir string) error {
	dir := filepath.Join(reportsDir, AssetsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w (check that --reports points to a writable directory)", dir, err)
	}
	entries, err := assetFS.ReadDir("assets")
	if err != nil {
		return err
	}
	for _, e := range entries {
		b, err := assetFS.ReadFile("assets/" + e.Name())
		if err != nil {
			return err
		}
		path := filepath.Join(dir, e.Name())
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
			if err := os.Chmod(path, 0o644); err != nil {
				return fmt.Errorf("write assets: %w", err)
			}
			continue
		}
		if err := writeFile(filepath.Join(dir, e.Name()), b); err != nil {
			return fmt.Errorf("write assets: %w", err)
		}
	}
	return nil
}
