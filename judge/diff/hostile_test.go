package diff

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/markdown"
	"github.com/threadlab/threadlab/store/record"
)

// hostileRun is a fixture run whose claim text, profile, state, directory
// and a fingerprint value are store/markdown's hostile corpus: what a
// pull request's data directory can hold.
func hostileRun(t *testing.T, name string) *record.Run {
	t.Helper()
	r := readRun(t, name)
	var vs []map[string]any
	if err := json.Unmarshal(r.Verdicts, &vs); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		v["says"] = "says " + markdown.Hostile
		v["id"] = v["id"].(string) + "`x"
	}
	r.Verdicts, _ = json.Marshal(vs)
	r.Meta.Profile = "profile " + markdown.Hostile
	r.Meta.State = "state " + markdown.Hostile
	r.Dir = r.Dir + "/`x` " + markdown.Hostile
	r.Fingerprint = bytes.Replace(r.Fingerprint, []byte(`"AMD EPYC 7B13"`), []byte(strings.ReplaceAll(string(mustJSON(t, "cpu "+markdown.Hostile)), `\u0026`, "&")), 1)
	return r
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMarkdownHostileGolden: in the pull request's job summary the hostile
// text renders as plain text: no fragment is live outside a code span, no
// line break from the data starts a block. The golden pins the escaping.
func TestMarkdownHostileGolden(t *testing.T) {
	res, err := Runs(hostileRun(t, "base"), hostileRun(t, "elsewhere"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := res.Markdown(&got); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.String(), "octocat") {
		t.Fatal("the hostile text is not in the output at all: the test would prove nothing")
	}
	if live := markdown.Live(got.String(), markdown.HostileFragments); len(live) > 0 {
		t.Errorf("the Markdown diff renders hostile text as markup: %q", live)
	}
	for _, line := range strings.Split(got.String(), "\n") {
		if strings.HasPrefix(line, "# heading") || strings.HasPrefix(line, "> quote") {
			t.Errorf("a line break in data started a block: %q", line)
		}
	}
	path := filepath.Join("testdata", "golden", "hostile.md")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no golden (run go test ./judge/diff -run TestMarkdownHostileGolden -update): %v", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("output differs from %s (inspect, then -update):\n%s", path, got.String())
	}
}
