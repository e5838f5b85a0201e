package report

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The page goldens are in two parts. The view model of every fixture page
// (the data its template renders, as indented JSON, one file per page
// kind under testdata/golden/view) says what a page means, so a change to
// a number, a verdict or a sentence shows as that field's line in a diff.
// A few whole pages (wholePages) stay byte for byte, so a change to a
// template or to the way a value is printed shows too. -update rewrites
// both.

// wholePages are the pages kept byte for byte: the experiment page (the
// run template with every part a run page has, plus the latest-run and
// across-runs parts), the index, and the comparison page (diff's own
// template). The other six pages are covered by their view models, by
// these three templates and by TestRenderIsDeterministic.
var wholePages = []string{
	"index.html",
	"io-bound/index.html",
	"io-bound/" + ioRun + "/compare.html",
}

// viewKinds names the view-model golden of each template.
var viewKinds = map[string]string{"run.html": "run.json", "index.html": "index.json", "compare": "compare.json"}

// renderViews renders the fixture as renderFixture does and returns, per
// view golden file, the pages' view models keyed by page path.
func renderViews(t *testing.T) (string, map[string]map[string]any) {
	t.Helper()
	var mu sync.Mutex
	views := map[string]map[string]any{}
	out := t.TempDir()
	rendered = func(path, tmpl string, data any) {
		mu.Lock()
		defer mu.Unlock()
		kind, ok := viewKinds[tmpl]
		if !ok {
			t.Errorf("page %s rendered with template %q, which has no view golden", path, tmpl)
			return
		}
		if views[kind] == nil {
			views[kind] = map[string]any{}
		}
		rel, _ := filepath.Rel(out, path)
		views[kind][filepath.ToSlash(rel)] = viewTree(reflect.ValueOf(data), 0)
	}
	defer func() { rendered = nil }()
	renderFixtureInto(t, out)
	return out, views
}

func TestGoldenViews(t *testing.T) {
	out, views := renderViews(t)
	dir := filepath.Join("testdata", "golden", "view")
	pages := len(views["run.json"])
	views["run.json"] = sharedWithRun(views["run.json"])
	pages += len(views["index.json"]) + len(views["compare.json"])
	for _, kind := range []string{"run.json", "index.json", "compare.json"} {
		checkGolden(t, filepath.Join(dir, kind), encodeView(t, views[kind]))
	}
	// Every page has its view model: 4 run pages, 3 experiment pages, the
	// index and the one comparison.
	if all := pagesIn(t, out); pages != len(all) || pages != 9 {
		t.Errorf("%d view models for %d pages (%v), want one per page, 9", pages, len(all), all)
	}
}

// sharedWithRun writes an experiment page (<experiment>/index.html, a copy
// of its latest run's page with its own links and the across-runs parts)
// as the fields that differ from that run page's, under "same as": what
// the copy changes is all there is to see in it.
func sharedWithRun(pages map[string]any) map[string]any {
	out := map[string]any{}
	for path, v := range pages {
		out[path] = v
		exp, ok := strings.CutSuffix(path, "/index.html")
		if !ok || strings.Contains(exp, "/") {
			continue
		}
		page := v.(map[string]any)
		runPath := exp + "/" + fmt.Sprint(page["ID"]) + "/index.html"
		run, ok := pages[runPath].(map[string]any)
		if !ok {
			continue
		}
		diff := map[string]any{"same as": runPath}
		for k, x := range page {
			if !reflect.DeepEqual(x, run[k]) {
				diff[k] = x
			}
		}
		for k := range run {
			if _, ok := page[k]; !ok {
				diff[k] = nil
			}
		}
		out[path] = diff
	}
	return out
}

func encodeView(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func lineAt(b []byte, n int) string {
	lines := bytes.Split(b, []byte("\n"))
	if n < 1 || n > len(lines) {
		return "(end of file)"
	}
	s := strings.TrimSpace(string(lines[n-1]))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

var (
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	stringer      = reflect.TypeFor[fmt.Stringer]()
)

// viewTree turns template data into what encoding/json can write, as a
// template sees it: exported fields (an embedded struct's promoted into
// its parent), the results of exported methods without arguments (a
// template calls them: {{.Steady}}), maps with their keys as text, NaN and
// infinities as text, and values that print themselves (time.Time) as
// they print. Functions and channels are left out: a template cannot show
// them.
func viewTree(v reflect.Value, depth int) any {
	if depth > 40 {
		return "(too deep)"
	}
	if !v.IsValid() {
		return nil
	}
	t := v.Type()
	if t.Implements(textMarshaler) && (t.Kind() != reflect.Pointer || !v.IsNil()) {
		if b, err := v.Interface().(encoding.TextMarshaler).MarshalText(); err == nil {
			return string(b)
		}
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
			m := structTree(v.Elem(), depth)
			addMethods(m, v, depth)
			return m
		}
		return viewTree(v.Elem(), depth+1)
	case reflect.Struct:
		if t.Implements(stringer) && t.NumField() > 0 && !t.Field(0).IsExported() && exportedFields(t) == 0 {
			return v.Interface().(fmt.Stringer).String()
		}
		m := structTree(v, depth)
		addMethods(m, v, depth)
		return m
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		m := map[string]any{}
		for _, k := range v.MapKeys() {
			m[fmt.Sprint(k.Interface())] = viewTree(v.MapIndex(k), depth+1)
		}
		return m
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return string(v.Bytes())
		}
		s := make([]any, v.Len())
		for i := range s {
			s[i] = viewTree(v.Index(i), depth+1)
		}
		return s
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Sprint(f)
		}
		return f
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return nil
	default:
		return v.Interface()
	}
}

func exportedFields(t reflect.Type) int {
	n := 0
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			n++
		}
	}
	return n
}

func structTree(v reflect.Value, depth int) map[string]any {
	m := map[string]any{}
	t := v.Type()
	defer func() {
		// A chart's script is the echarts option, tens of kilobytes of
		// numbers on one line: its digest says that it changed, its Alt
		// (kept) says what it shows in words and numbers, and the
		// whole pages keep some scripts byte for byte.
		if t == reflect.TypeFor[chart]() {
			sum := sha256.Sum256([]byte(v.FieldByName("Script").String()))
			m["Script"] = fmt.Sprintf("sha256:%x (%d bytes)", sum[:8], v.FieldByName("Script").Len())
		}
	}()
	for i := range t.NumField() {
		f := t.Field(i)
		fv := v.Field(i)
		switch {
		case f.Anonymous && (f.Type.Kind() == reflect.Struct || f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct):
			if f.Type.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				fv = fv.Elem()
			}
			for k, x := range structTree(fv, depth+1) { // promoted, as a template sees them
				m[k] = x
			}
		case !f.IsExported():
		case f.Type.Kind() == reflect.Func || f.Type.Kind() == reflect.Chan:
		default:
			m[f.Name] = viewTree(fv, depth+1)
		}
	}
	return m
}

// addMethods adds the result of each exported method a template can call
// without arguments, as "Name()".
func addMethods(m map[string]any, v reflect.Value, depth int) {
	t := v.Type()
	var names []string
	for i := range t.NumMethod() {
		mt := t.Method(i)
		if mt.Type.NumIn() != 1 || mt.Type.NumOut() < 1 || mt.Type.NumOut() > 2 {
			continue
		}
		if mt.Name == "String" || mt.Name == "Error" || mt.Name == "MarshalText" || mt.Name == "MarshalJSON" {
			continue
		}
		names = append(names, mt.Name)
	}
	sort.Strings(names)
	for _, name := range names {
		out := v.MethodByName(name).Call(nil)
		m[name+"()"] = viewTree(out[0], depth+1)
	}
}
