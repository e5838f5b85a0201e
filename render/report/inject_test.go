package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// hostile strings put where a manifest author controls text: go-echarts'
// own function marker around code (issue 15, item 1), plus markup.
const (
	evilSweep   = `__f__(window.pwned=1)__f__`
	evilVariant = `__f__(window.pwned=2)__f__</script>`
	evilClaim   = `__f__(window.pwned=3)__f__`
)

// hostileRun copies the pool-sweep fixture and puts the hostile strings in
// a sweep value, a variant name and a claim's text in every file.
func hostileRun(t *testing.T) (dataDir, runDir string) {
	t.Helper()
	dataDir, runDir = copyRun(t, "pool-sweep/"+poolRun)
	entries, err := os.ReadDir(runDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		p := filepath.Join(runDir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte("pool=800"), []byte("pool="+evilSweep))
		b = bytes.ReplaceAll(b, []byte(`"800"`), []byte(`"`+evilSweep+`"`))
		quoted := evilVariant
		if strings.HasSuffix(e.Name(), ".json") {
			q, _ := json.Marshal(evilVariant)
			quoted = string(q[1 : len(q)-1])
		}
		b = bytes.ReplaceAll(b, []byte("virtual"), []byte(quoted))
		b = bytes.ReplaceAll(b, []byte("gain nothing"), []byte(evilClaim))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dataDir, runDir
}

var setOption = regexp.MustCompile(`c\.setOption\((.*)\);\n`)

// TestHostileStringsStayText: a sweep value, variant name or claim text
// shaped like go-echarts' function marker reaches the page as an escaped
// JSON string, never as code. Each chart option, with our own function
// literals (and only those) replaced by null, must parse as plain JSON:
// then nothing else in it can run.
func TestHostileStringsStayText(t *testing.T) {
	dataDir, runDir := hostileRun(t)
	r, err := record.Read(runDir)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	path, err := Run(r, out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Index(dataDir, out); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(path)
	opts := setOption.FindAllSubmatch(page, -1)
	if len(opts) < 3 {
		t.Fatalf("only %d charts in the hostile page", len(opts))
	}
	var codes []string
	ourFuncs.Range(func(_, v any) bool { codes = append(codes, v.(string)); return true })
	sawSweep, sawVariant := false, false
	for i, m := range opts {
		js := string(m[1])
		sawSweep = sawSweep || strings.Contains(js, `"`+evilSweep) || strings.Contains(js, evilSweep+`"`)
		sawVariant = sawVariant || strings.Contains(js, `__f__(window.pwned=2)__f__\u003c/script\u003e`)
		for _, c := range codes {
			js = strings.ReplaceAll(js, c, "null")
		}
		var v any
		if err := json.Unmarshal([]byte(js), &v); err != nil {
			t.Errorf("chart %d: the option is not data once our functions are removed (%v): a string became code", i, err)
		}
	}
	if !sawSweep || !sawVariant {
		t.Errorf("hostile sweep value (seen %v) or variant name (seen %v) missing from the chart data as strings", sawSweep, sawVariant)
	}
	for name, b := range map[string][]byte{"run page": page} {
		if bytes.Contains(b, []byte("(window.pwned=3)")) && !bytes.Contains(b, []byte("__f__(window.pwned=3)__f__")) {
			t.Errorf("%s: the claim text lost its markers", name)
		}
		if o, c := bytes.Count(b, []byte("<script")), bytes.Count(b, []byte("</script>")); o != c {
			t.Errorf("%s opens %d script elements and closes %d", name, o, c)
		}
	}
}

func readRun(dir string) (*record.Run, error) { return record.Read(dir) }
