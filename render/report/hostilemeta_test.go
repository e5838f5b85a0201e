package report

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

// TestHostileRunMetadata: a run.json primary metric or measured group the
// run cannot have, and an unreadable steady.json, are said on the page,
// which reads the manifest's and the data's instead, not rendered as if
// measured ("Primary metric: nonexistent") or dropped without a word.
func TestHostileRunMetadata(t *testing.T) {
	_, runDir := copyRun(t, "io-bound/"+ioRun)
	var meta record.Meta
	if err := record.ReadJSON(runDir, record.RunFile, &meta); err != nil {
		t.Fatal(err)
	}
	meta.Primary, meta.Measured = "nonexistent", "nope"
	if err := record.WriteJSON(runDir, record.RunFile, meta); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, record.SteadyFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := record.Read(runDir)
	if err != nil {
		t.Fatal(err)
	}
	path, err := Run(r, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(b))
	for _, want := range []string{
		`primary_metric "nonexistent" is no metric threadlab records: the page uses wall_ms`,
		`measured_group "nope" is not one of the run's groups`,
		"steady.json is unreadable",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "Primary metric: nonexistent") {
		t.Error("the page shows the edited primary metric as the run's")
	}
}
