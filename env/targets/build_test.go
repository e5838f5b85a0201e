package targets

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTree writes a minimal targets tree: poms, sources, and files Maven
// does not read.
func fakeTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"pom.xml":                             "<project>parent</project>",
		"spring-mvc/pom.xml":                  "<project>mvc</project>",
		"spring-mvc/src/main/java/A.java":     "class A {}",
		"spring-webflux/pom.xml":              "<project>webflux</project>",
		"spring-webflux/src/main/java/B.java": "class B {}",
		"targets.go":                          "package targets",
		"README.md":                           "notes",
	}
	for rel, content := range files {
		write(t, filepath.Join(root, rel), content)
	}
	return root
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSourceHash(t *testing.T) {
	base := func(t *testing.T) string {
		h, err := SourceHash(fakeTree(t))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	want := base(t)
	if again := base(t); again != want {
		t.Fatalf("hash of identical trees differs: %s vs %s", want, again)
	}
	tests := []struct {
		name    string
		change  func(t *testing.T, root string)
		changes bool
	}{
		{"editing a java source rebuilds", func(t *testing.T, root string) {
			write(t, filepath.Join(root, "spring-mvc/src/main/java/A.java"), "class A { int x; }")
		}, true},
		{"editing a module pom rebuilds", func(t *testing.T, root string) {
			write(t, filepath.Join(root, "spring-webflux/pom.xml"), "<project>webflux 2</project>")
		}, true},
		{"adding a resource rebuilds", func(t *testing.T, root string) {
			write(t, filepath.Join(root, "spring-mvc/src/main/resources/application.properties"), "a=b")
		}, true},
		{"renaming a source rebuilds even with the same bytes", func(t *testing.T, root string) {
			os.Rename(filepath.Join(root, "spring-mvc/src/main/java/A.java"), filepath.Join(root, "spring-mvc/src/main/java/C.java"))
		}, true},
		{"build output in target/ is ignored", func(t *testing.T, root string) {
			write(t, filepath.Join(root, "spring-mvc/target/spring-mvc.jar"), "jar")
			write(t, filepath.Join(root, "spring-mvc/target/src/x"), "generated")
		}, false},
		{"the Go package beside the poms is ignored", func(t *testing.T, root string) {
			write(t, filepath.Join(root, "targets.go"), "package targets // edited")
			write(t, filepath.Join(root, "targets_test.go"), "package targets")
		}, false},
		{"hidden directories are ignored", func(t *testing.T, root string) {
			write(t, filepath.Join(root, ".idea/src/x.xml"), "ide")
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fakeTree(t)
			tt.change(t, root)
			got, err := SourceHash(root)
			if err != nil {
				t.Fatal(err)
			}
			if changed := got != want; changed != tt.changes {
				t.Fatalf("hash changed = %v, want %v", changed, tt.changes)
			}
		})
	}
	if _, err := SourceHash(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no pom.xml") {
		t.Fatalf("hash of a dir without pom.xml: err = %v, want 'no pom.xml'", err)
	}
}

// A tree whose jars carry the current hash must come back without Maven:
// PATH is emptied so running mvn would fail the test.
func TestBuildSkipsMavenWhenStampsMatch(t *testing.T) {
	root := fakeTree(t)
	hash, err := SourceHash(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range Names() {
		write(t, JarPath(root, n), "jar")
		write(t, filepath.Join(root, n, "target", StampFile), BuildKey(hash, DefaultBoot)+"\n")
	}
	t.Setenv("PATH", "")
	jars, err := Build(context.Background(), root, nil)
	if err != nil {
		t.Fatalf("Build with fresh stamps ran maven or failed: %v", err)
	}
	for _, n := range Names() {
		if jars[n] != JarPath(root, n) || !filepath.IsAbs(jars[n]) {
			t.Errorf("jars[%q] = %q, want absolute %q", n, jars[n], JarPath(root, n))
		}
	}

	// A changed source makes the stamp stale: now Build must try Maven, and
	// with no mvn on PATH it says how to fix that.
	write(t, filepath.Join(root, "spring-mvc/src/main/java/A.java"), "class A { int y; }")
	_, err = Build(context.Background(), root, nil)
	if err == nil || !(strings.Contains(err.Error(), "apt-get install maven") || strings.Contains(err.Error(), "JDK")) {
		t.Fatalf("Build with a stale stamp and no mvn: err = %v, want a how-to-install error", err)
	}
}

func TestBuildRejectsNonTargetsDir(t *testing.T) {
	_, err := Build(context.Background(), t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "pass the path to env/targets") {
		t.Fatalf("err = %v, want a hint to pass env/targets", err)
	}
}

func TestTail(t *testing.T) {
	if got := tail("a\nb\nc\nd\n", 2); got != "c\nd" {
		t.Fatalf("tail = %q, want %q", got, "c\nd")
	}
	if got := tail("only", 5); got != "only" {
		t.Fatalf("tail = %q, want %q", got, "only")
	}
}
