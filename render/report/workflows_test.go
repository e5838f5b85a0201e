package report

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/threadlab/threadlab/internal/testenv"
)

// TestWorkflowsLint runs actionlint on the repository's GitHub workflows
// (the Pages publisher and the manifest review): a broken workflow fails
// only when it runs on GitHub, so make test checks them here. actionlint
// comes from bin/ (scripts/setup.sh installs it) or PATH.
func TestWorkflowsLint(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, ".github", "workflows", "*.yml"))
	if len(files) < 2 {
		t.Fatalf("want pages.yml and manifest-review.yml under .github/workflows, found %v", files)
	}
	bin := filepath.Join(root, "bin", "actionlint")
	if _, err := os.Stat(bin); err != nil {
		bin = testenv.LookPath(t, "actionlint", "scripts/setup.sh installs it into bin/")
	}
	cmd := exec.Command(bin, files...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("actionlint: %v\n%s", err, out)
	}
}
