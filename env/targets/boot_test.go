package targets

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveBoot(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
		why           string
	}{
		{"4.1", "4.1.2", "", "a line resolves to the version built for it"},
		{"4.1.2", "4.1.2", "", "the exact version built is accepted as written"},
		{"3.5", "3.5.7", "", "seed 004's line"},
		{"4.0.7", "4.0.7", "", "the default"},
		{"4.1.1", "", "the 4.1 line builds 4.1.2 (write 4.1 or 4.1.2)", "a seed's own patch version is not served: say which one is"},
		{"3.5.16", "", "the 3.5 line builds 3.5.7", "seed 004's 3.5.16 is not served here"},
		{"4.2", "", "use 3.5 (3.5.7), 4.0 (4.0.7) or 4.1 (4.1.2)", "an unknown line names every supported one"},
		{"", "", "not a supported line", "empty is not a line (Normalize fills the default before)"},
		{"4", "", "not a supported line", "a major alone is ambiguous"},
	} {
		b, err := ResolveBoot(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ResolveBoot(%q): err = %v, want it to contain %q (%s)", tc.in, err, tc.err, tc.why)
		case tc.err == "" && err != nil:
			t.Errorf("ResolveBoot(%q): %v (%s)", tc.in, err, tc.why)
		case tc.err == "" && b.Version != tc.want:
			t.Errorf("ResolveBoot(%q) = %s, want %s (%s)", tc.in, b.Version, tc.want, tc.why)
		}
	}
}

func TestBootDir(t *testing.T) {
	root := "/x/env/targets"
	if got := BootDir(root, DefaultBoot); got != root {
		t.Errorf("BootDir(default) = %s, want the tree itself", got)
	}
	if got, want := JarPathBoot(root, "spring-mvc", "4.1.2"), "/x/env/targets/.boot/4.1.2/spring-mvc/target/spring-mvc.jar"; got != want {
		t.Errorf("JarPathBoot = %s, want %s", got, want)
	}
}

// bootTree is fakeTree with a real-looking parent and a Jackson 3 import.
func bootTree(t *testing.T) string {
	t.Helper()
	root := fakeTree(t)
	write(t, filepath.Join(root, "pom.xml"), `<project>
  <parent>
    <groupId>org.springframework.boot</groupId>
    <artifactId>spring-boot-starter-parent</artifactId>
    <version>4.0.7</version>
  </parent>
  <version>1.0.0</version>
</project>`)
	write(t, filepath.Join(root, "spring-mvc/src/main/java/A.java"),
		"import tools.jackson.databind.ObjectMapper;\nimport java.util.List;\nclass A { String s = \"tools.jackson.x\"; }\n")
	write(t, filepath.Join(root, "movies/src/movies.json"), "[]")
	return root
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteCopy(t *testing.T) {
	root := bootTree(t)
	b, _ := ResolveBoot("3.5")
	dir := BootDir(root, b.Version)
	// Left by an earlier copy: a deleted source must go, a module's target/ stay.
	write(t, filepath.Join(dir, "spring-mvc/src/main/java/Gone.java"), "class Gone {}")
	write(t, filepath.Join(dir, "spring-mvc/target/keep"), "x")
	if err := writeCopy(root, dir, b); err != nil {
		t.Fatal(err)
	}
	pom := read(t, filepath.Join(dir, "pom.xml"))
	if !strings.Contains(pom, "<version>3.5.7</version>\n  </parent>") || !strings.Contains(pom, "<version>1.0.0</version>") {
		t.Errorf("copied pom: the parent must be 3.5.7 and the project's own version untouched:\n%s", pom)
	}
	java := read(t, filepath.Join(dir, "spring-mvc/src/main/java/A.java"))
	if want := "import com.fasterxml.jackson.databind.ObjectMapper;\nimport java.util.List;\nclass A { String s = \"tools.jackson.x\"; }\n"; java != want {
		t.Errorf("3.5 copy of A.java = %q, want only the import renamed: %q", java, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "spring-mvc/src/main/java/Gone.java")); !os.IsNotExist(err) {
		t.Errorf("a source deleted from the tree survived in the copy (stat err %v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "spring-mvc/target/keep")); err != nil {
		t.Errorf("the copy's target/ was removed (mvn clean owns it): %v", err)
	}
	for _, f := range []string{"movies/src/movies.json", "spring-webflux/pom.xml", "spring-webflux/src/main/java/B.java"} {
		if read(t, filepath.Join(dir, f)) != read(t, filepath.Join(root, f)) {
			t.Errorf("%s differs in the copy; only the root pom and Jackson imports may", f)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); !os.IsNotExist(err) {
		t.Errorf("a file Maven does not read was copied")
	}

	// The copy itself is hidden: it changes no source hash of the tree.
	h1, _ := SourceHash(root)
	os.RemoveAll(filepath.Join(root, ".boot"))
	h2, _ := SourceHash(root)
	if h1 != h2 {
		t.Errorf("the generated copy under .boot/ changed the tree's source hash")
	}

	// 4.1 keeps Jackson 3's imports.
	b41, _ := ResolveBoot("4.1")
	if err := writeCopy(root, BootDir(root, b41.Version), b41); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(BootDir(root, b41.Version), "spring-mvc/src/main/java/A.java")); !strings.HasPrefix(got, "import tools.jackson.") {
		t.Errorf("4.1 copy rewrote the Jackson 3 imports: %q", got)
	}

	write(t, filepath.Join(root, "pom.xml"), "<project><version>1</version></project>")
	if err := writeCopy(root, dir, b); err == nil || !strings.Contains(err.Error(), "no <parent>") {
		t.Errorf("a root pom without a parent: err = %v, want 'no <parent>'", err)
	}
}

// A stamp is per Spring Boot version: jars built on 4.1.2 do not stand for
// 4.0.7 (or the reverse), and a built copy is reused without Maven.
func TestBuildKeyIsPerVersion(t *testing.T) {
	root := bootTree(t)
	hash, err := SourceHash(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range Names() {
		write(t, JarPathBoot(root, n, "4.1.2"), "jar")
		write(t, filepath.Join(BootDir(root, "4.1.2"), n, "target", StampFile), BuildKey(hash, "4.1.2")+"\n")
		write(t, JarPath(root, n), "jar")
		write(t, filepath.Join(root, n, "target", StampFile), BuildKey(hash, "4.1.2")+"\n") // wrong version in place
	}
	t.Setenv("PATH", "")
	jars, err := BuildBoot(context.Background(), root, "4.1", nil)
	if err != nil {
		t.Fatalf("BuildBoot(4.1) with fresh stamps ran maven or failed: %v", err)
	}
	if jars["spring-mvc"] != JarPathBoot(root, "spring-mvc", "4.1.2") {
		t.Errorf("jars = %v, want the copy's", jars)
	}
	if _, err := Build(context.Background(), root, nil); err == nil {
		t.Errorf("Build (4.0.7) accepted jars stamped for 4.1.2")
	}
	if _, err := BuildBoot(context.Background(), root, "4.2", nil); err == nil || !strings.Contains(err.Error(), "4.1 (4.1.2)") {
		t.Errorf("BuildBoot(4.2): err = %v, want the supported lines", err)
	}
}
