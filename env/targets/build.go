package targets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/threadlab/threadlab/env/supervise"
)

// StampFile sits next to each jar and holds the source hash it was built from.
const StampFile = ".threadlab-source-hash"

// Build makes sure every target jar under root (the env/targets directory) is
// built on the default Spring Boot (DefaultBoot, the poms' parent) from the
// current sources and returns name -> absolute jar path: BuildBoot with
// DefaultBoot.
func Build(ctx context.Context, root string, log io.Writer) (map[string]string, error) {
	return BuildBoot(ctx, root, DefaultBoot, log)
}

// BuildBoot builds every target on Spring Boot version (a Version of
// BootLines) and returns name -> absolute jar path. DefaultBoot builds in
// root; any other version in a generated copy of the project (BootDir,
// writeCopy) with -Dthreadlab.boot=<line>, which turns on that line's
// Maven profiles. Maven runs only when the key (BuildKey: the source hash
// of every pom.xml and src/** file under root, and the version) differs
// from the stamp next to a jar, or a jar is missing; a file lock keeps
// concurrent threadlab processes from building the same tree at once.
// Maven's output goes to log; on failure the error quotes its tail. A jar
// that does not ship the asked-for spring-boot is an error.
func BuildBoot(ctx context.Context, root, version string, log io.Writer) (map[string]string, error) {
	if log == nil {
		log = io.Discard
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("build targets: %w", err)
	}
	if _, err := os.Stat(filepath.Join(root, "pom.xml")); err != nil {
		return nil, fmt.Errorf("build targets: %s is not the targets directory (no pom.xml): %w; pass the path to env/targets", root, err)
	}
	b, err := ResolveBoot(version)
	if err != nil {
		return nil, fmt.Errorf("build targets: %w", err)
	}
	dir := BootDir(root, b.Version)
	jars := map[string]string{}
	for _, n := range names {
		jars[n] = JarPath(dir, n)
	}
	hash, err := SourceHash(root)
	if err != nil {
		return nil, fmt.Errorf("build targets: %w", err)
	}
	key := BuildKey(hash, b.Version)
	if upToDate(dir, key) {
		return jars, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("build targets: %w", err)
	}
	lock, err := lockBuild(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("build targets: %w", err)
	}
	defer lock.Close()      // closing the last copy releases the flock
	if upToDate(dir, key) { // another process built it while we waited
		return jars, nil
	}

	javaHome, _, err := FindJDK()
	if err != nil {
		return nil, fmt.Errorf("build targets: %w", err)
	}
	if _, err := os.Stat(filepath.Join(javaHome, "bin", "javac")); err != nil {
		return nil, fmt.Errorf("build targets: %s has no javac (a JRE, not a JDK): install a full JDK >= %d or point JAVA_HOME at one: %w", javaHome, MinJDK, err)
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return nil, fmt.Errorf("build targets: maven not found: install it (apt-get install maven) or put mvn on PATH: %w", err)
	}
	// clean: a source file deleted since the last build must not survive as a
	// stale class in target/classes.
	argv := []string{mvn, "-q", "-B", "-DskipTests"}
	if dir != root {
		if err := writeCopy(root, dir, b); err != nil {
			return nil, fmt.Errorf("build targets: %w", err)
		}
		argv = append(argv, "-Dthreadlab.boot="+b.Line)
	}
	argv = append(argv, "clean", "package")
	mvnLine := strings.Join(argv[1:], " ")
	var out supervise.Buffer
	w := io.MultiWriter(&out, log)
	fmt.Fprintf(log, "building targets on Spring Boot %s in %s with %s (JAVA_HOME=%s)\n", b.Version, dir, mvn, javaHome)
	start := time.Now()
	// Maven runs under a supervisor (env/supervise): Ctrl-C stops it and
	// its forked JVMs, and so does threadlab's death, even by kill -9. The
	// supervisor holds the lock too, so the lock is free exactly when no
	// process of this build is left: a second run cannot start a second
	// build in the same tree while an orphan of the first still writes it.
	err = supervise.Run(ctx, supervise.Spec{Argv: argv, Dir: dir, Env: append(os.Environ(), "JAVA_HOME="+javaHome),
		Stdout: w, Stderr: w, Grace: 3 * time.Second, Hold: []*os.File{lock}})
	if err != nil {
		return nil, fmt.Errorf("build targets: mvn %s in %s failed (%w); run it there to see the full log; last lines:\n%s",
			mvnLine, dir, err, tail(out.String(), 30))
	}
	for n, jar := range jars {
		if _, err := os.Stat(jar); err != nil {
			return nil, fmt.Errorf("build targets: maven succeeded but %s is missing (is <finalName>%s</finalName> still in %s/pom.xml?): %w", jar, n, n, err)
		}
		if vs, err := Versions(jar); err == nil && vs["spring-boot"] != b.Version {
			return nil, fmt.Errorf("build targets: %s ships spring-boot %s, not the %s asked for (is the parent of %s/pom.xml spring-boot-starter-parent?)", jar, vs["spring-boot"], b.Version, root)
		}
		if err := writeStamp(filepath.Join(filepath.Dir(jar), StampFile), key); err != nil {
			return nil, fmt.Errorf("build targets: %w", err)
		}
	}
	fmt.Fprintf(log, "built %d targets on Spring Boot %s in %s\n", len(jars), b.Version, time.Since(start).Round(time.Millisecond))
	return jars, nil
}

// SourceHash is the SHA-256 over every pom.xml and every file under a src
// directory below root (paths and contents, in path order); target/ and
// hidden directories are skipped. It changes exactly when Maven's inputs do.
func SourceHash(root string) (string, error) {
	files, err := sourceFiles(root)
	if err != nil {
		return "", fmt.Errorf("hash sources: %w", err)
	}
	h := sha256.New()
	for _, rel := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return "", fmt.Errorf("hash sources: %w", err)
		}
		// path and length prefix: moving bytes between files changes the hash
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sourceFiles lists, slash-separated and sorted, the files Maven reads
// under root: every pom.xml and every file under a src directory;
// target/ and hidden directories (such as the copies in .boot/) are
// skipped.
func sourceFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel != "." && (d.Name() == "target" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if d.Name() == "pom.xml" || slices.Contains(parts[:len(parts)-1], "src") {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list sources under %s: %w", root, err)
	}
	if !slices.Contains(files, "pom.xml") {
		return nil, fmt.Errorf("no pom.xml in %s; pass the path to env/targets", root)
	}
	slices.Sort(files)
	return files, nil
}

// upToDate reports whether every jar exists and was built for key.
func upToDate(root, key string) bool {
	for _, n := range names {
		jar := JarPath(root, n)
		if _, err := os.Stat(jar); err != nil {
			return false
		}
		stamp, err := os.ReadFile(filepath.Join(filepath.Dir(jar), StampFile))
		if err != nil || strings.TrimSpace(string(stamp)) != key {
			return false
		}
	}
	return true
}

func writeStamp(path, hash string) error {
	tmp := path + ".tmp-" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, []byte(hash+"\n"), 0o644); err != nil {
		return fmt.Errorf("write build stamp: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write build stamp: %w", err)
	}
	return nil
}

// lockBuild takes an exclusive flock on a file keyed by root and returns
// the open file; closing it (and every copy, such as the one the Maven
// supervisor holds) releases the lock, and so does the death of every
// holder, so a killed build never leaves a stale lock. The file lives in the
// temp dir, not in target/, because mvn clean deletes target/ and a lock on
// a deleted file excludes nobody.
func lockBuild(ctx context.Context, root string) (*os.File, error) {
	f, err := os.OpenFile(lockPath(root), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("open build lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another threadlab build of %s (lock %s): %w", root, f.Name(), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// lockPath is the build lock of the targets tree at root.
func lockPath(root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(os.TempDir(), "threadlab-build-"+hex.EncodeToString(sum[:6])+".lock")
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// BuildAOT trains (or reuses) the AOT cache of every built target for the
// JVM options jvmOpts: the build-time half of aot_cache (see aot.go). jars
// is Build's result. It runs the targets, so it takes about one start and
// one shut-down of each per new cache.
func BuildAOT(ctx context.Context, javaHome string, jars map[string]string, jvmOpts []string, log io.Writer) (map[string]AOT, error) {
	out := map[string]AOT{}
	for _, n := range names {
		jar, ok := jars[n]
		if !ok {
			continue
		}
		a, err := PrepareAOT(ctx, javaHome, n, jar, jvmOpts, log)
		if err != nil {
			return nil, err
		}
		out[n] = a
	}
	return out, nil
}
