package targets

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Boot is one Spring Boot line the targets build on: the line a manifest
// names (spring_boot: 4.1) and the version of it that is built (4.1.2, the
// newest the Maven registry here serves whole).
type Boot struct {
	Line    string // "4.1"
	Version string // "4.1.2"
	// Jackson2 marks a line before Boot 4: Jackson 3 (tools.jackson) is not
	// on its classpath, so the generated copy imports the same classes from
	// Jackson 2's packages (com.fasterxml.jackson); see BootDir.
	Jackson2 bool
	// Seeds says which seeds ran on this line (for the README and lint).
	Seeds string
}

// DefaultBoot is the Spring Boot version of the poms in env/targets (their
// parent), built in place; every other line is built from a generated copy.
const DefaultBoot = "4.0.7"

// bootLines are the supported lines, oldest first. Seeds ran 3.5.16 (004),
// 4.1.0 (002), 4.1.1 (000) and 4.1.2 (003); the registry serves 3.5.7,
// 4.0.7 and 4.1.2 with every starter the targets use.
var bootLines = []Boot{
	{Line: "3.5", Version: "3.5.7", Jackson2: true, Seeds: "004 (3.5.16)"},
	{Line: "4.0", Version: DefaultBoot, Seeds: "001"},
	{Line: "4.1", Version: "4.1.2", Seeds: "000 (4.1.1), 002 (4.1.0), 003 (4.1.2)"},
}

// BootLines lists the supported Spring Boot lines, oldest first.
func BootLines() []Boot { return append([]Boot(nil), bootLines...) }

// SupportedBoot names the supported lines for error messages:
// "3.5 (3.5.7), 4.0 (4.0.7) or 4.1 (4.1.2)".
func SupportedBoot() string {
	var parts []string
	for _, b := range bootLines {
		parts = append(parts, b.Line+" ("+b.Version+")")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// ResolveBoot turns what a manifest wrote (a line like "4.1", or the exact
// version built for it, "4.1.2") into its line. Any other version, even
// of a supported line, is an error: the fingerprint must record the Boot
// that ran, not the one asked for.
func ResolveBoot(s string) (Boot, error) {
	for _, b := range bootLines {
		if s == b.Line || s == b.Version {
			return b, nil
		}
	}
	for _, b := range bootLines {
		if strings.HasPrefix(s, b.Line+".") {
			return Boot{}, fmt.Errorf("Spring Boot %s is not built here: the %s line builds %s (write %s or %s)", s, b.Line, b.Version, b.Line, b.Version)
		}
	}
	return Boot{}, fmt.Errorf("Spring Boot %q is not a supported line (use %s)", s, SupportedBoot())
}

// BootDir is where the targets of Spring Boot version are built: root
// itself for DefaultBoot, else the generated copy root/.boot/<version>
// (hidden, so SourceHash and git leave it alone).
func BootDir(root, version string) string {
	if version == DefaultBoot || version == "" {
		return root
	}
	return filepath.Join(root, ".boot", version)
}

// JarPathBoot is where BuildBoot leaves the jar of target name on Spring
// Boot version.
func JarPathBoot(root, name, version string) string {
	return JarPath(BootDir(root, version), name)
}

// BuildKey is what a jar's stamp holds: the source hash and the Spring
// Boot version, so that a jar is reused only for the sources and the Boot
// it was built from.
func BuildKey(sourceHash, version string) string {
	return sourceHash + " spring-boot=" + version
}

// parentVersion finds the <version> of the root pom's <parent>.
var parentVersion = regexp.MustCompile(`(?s)(<parent>.*?<version>)([^<]*)(</version>.*?</parent>)`)

// writeCopy lays out the Maven project of line b in dir: every file
// SourceHash reads (poms, src/**), with two changes and no others: the
// root pom's parent version is b.Version, and on a Jackson2 line the Java
// imports of tools.jackson.* name com.fasterxml.jackson.* (Jackson 3 moved
// the same classes there, and the sources use only classes both have).
// Everything else a line needs is a Maven profile in the poms, activated
// by -Dthreadlab.boot=<line>, where it can be read. dir is emptied first
// except for the modules' target/ directories (mvn clean removes those).
func writeCopy(root, dir string, b Boot) error {
	files, err := sourceFiles(root)
	if err != nil {
		return err
	}
	if err := clearCopy(dir); err != nil {
		return err
	}
	for _, rel := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return fmt.Errorf("copy targets for Spring Boot %s: %w", b.Version, err)
		}
		switch {
		case rel == "pom.xml":
			if !parentVersion.Match(data) {
				return fmt.Errorf("copy targets for Spring Boot %s: %s/pom.xml has no <parent> with a <version> (it must inherit spring-boot-starter-parent)", b.Version, root)
			}
			data = parentVersion.ReplaceAll(data, []byte("${1}"+b.Version+"${3}"))
		case b.Jackson2 && strings.HasSuffix(rel, ".java"):
			data = bytes.ReplaceAll(data, []byte("import tools.jackson."), []byte("import com.fasterxml.jackson."))
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("copy targets for Spring Boot %s: %w", b.Version, err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return fmt.Errorf("copy targets for Spring Boot %s: %w", b.Version, err)
		}
	}
	return nil
}

// clearCopy removes what a previous copy left in dir, so that a source
// file deleted in root does not survive in the copy; target/ directories
// stay for mvn clean.
func clearCopy(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clear the generated copy %s: %w", dir, err)
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !e.IsDir() {
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("clear the generated copy %s: %w", dir, err)
			}
			continue
		}
		sub, err := os.ReadDir(p)
		if err != nil {
			return fmt.Errorf("clear the generated copy %s: %w", dir, err)
		}
		for _, s := range sub {
			if s.Name() == "target" {
				continue
			}
			if err := os.RemoveAll(filepath.Join(p, s.Name())); err != nil {
				return fmt.Errorf("clear the generated copy %s: %w", dir, err)
			}
		}
	}
	return nil
}
