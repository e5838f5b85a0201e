package env

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestBuildDirty: the commit's dirty flag comes from the source, not from
// what runs write under data/ and reports/ (a run's own directory exists
// before its fingerprint is taken; every published fingerprint said dirty).
func TestBuildDirty(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	tests := []struct {
		name  string
		write map[string]string // files written after the commit
		dirty bool
	}{
		{"clean checkout", nil, false},
		{"a run's directory under data/ is its output", map[string]string{"data/io-bound/20261203T000000Z/run.json": "{}"}, false},
		{"a rendered site under reports/ is output", map[string]string{"reports/index.html": "<html>"}, false},
		{"a changed source file", map[string]string{"main.go": "package main // edited\n"}, true},
		{"an untracked source file counts, as in go build's vcs.modified", map[string]string{"extra.go": "package main\n"}, true},
		{"a changed committed manifest", map[string]string{"experiments/x.yaml": "name: y\n"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			run := func(args ...string) {
				t.Helper()
				cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			write := func(files map[string]string) {
				for p, body := range files {
					full := filepath.Join(dir, p)
					if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			run("init", "-q")
			write(map[string]string{"main.go": "package main\n", "experiments/x.yaml": "name: x\n"})
			run("add", ".")
			run("commit", "-q", "-m", "init")
			write(tc.write)
			b := build(context.Background(), dir)
			if b.Source == "build info" {
				t.Skip("this binary carries VCS build info; the git fallback is not used")
			}
			if b.Commit == "" {
				t.Fatalf("no commit read from %s: %+v", dir, b)
			}
			if b.Dirty != tc.dirty {
				t.Errorf("dirty = %v, want %v (%s)", b.Dirty, tc.dirty, tc.name)
			}
		})
	}
}
