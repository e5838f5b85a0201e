package targets

// The JDK 25 AOT cache (JEP 483, with JEP 514's one-step ergonomics): a
// training run of a target writes a cache of its loaded and linked classes
// and of profiles, and later starts map it instead of loading, parsing and
// linking the same classes again.
//
//	training:  java <jvm opts> -XX:AOTCacheOutput=<file> -jar <jar> ...
//	           (the JVM records while the app runs; at exit it forks a
//	           child JVM that assembles the cache: JEP 514)
//	start:     java <jvm opts> -XX:AOTCache=<file> -XX:AOTMode=on -jar <jar> ...
//
// Two facts shape this file. First, classes can be cached only when the
// JDK's built-in class loaders load them from the class path: a Spring Boot
// fat jar loads its application and libraries through its own nested-jar
// loader, so the cache would hold little more than the JDK. The jar is
// therefore extracted into Spring Boot's deployment layout
// (java -Djarmode=tools -jar app.jar extract: app.jar plus lib/), which
// starts the same application from plain jars, and that layout is what a
// cached start runs. Second, the cache is valid only for the same JDK, the
// same class path and compatible JVM options, so it is keyed by the jar's
// SHA-256, the JDK's release and the JVM options, and -XX:AOTMode=on makes a
// start fail loudly rather than silently run without it.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/env/supervise"
)

// AOT is a target's AOT cache and how to start the target with it.
type AOT struct {
	Target    string   `json:"target"`
	Jar       string   `json:"jar"`        // the extracted application jar to start (-jar)
	Cache     string   `json:"cache"`      // the .aot file
	JarSHA256 string   `json:"jar_sha256"` // of the fat jar it was extracted from
	Key       string   `json:"key"`        // hash of jar, JDK and JVM options: the cache's directory name
	JVMOpts   []string `json:"jvm_opts"`   // the options it was trained with
	Bytes     int64    `json:"bytes"`
	TrainedMs float64  `json:"trained_ms,omitempty"` // 0 when an existing cache was reused
}

// StartArgs are the JVM options to append to the variant's own when the
// target starts from a.Jar with the cache.
func (a AOT) StartArgs() []string {
	return []string{"-XX:AOTCache=" + a.Cache, "-XX:AOTMode=on"}
}

// Start is what the pipeline calls before starting a built-in target: it
// returns the jar to pass to Command, the JVM options to append to the
// variant's, and the cache used (nil when none), for the run's aot_cache
// setting (enabled). Disabled, the target starts as always, from its fat
// jar. Enabled, it starts from the extracted layout with the cache, trained
// now if needed for these JVM options; a variant that sets an AOT option
// itself (the aot-cache experiment's -XX:AOTMode=off arm) starts from the
// same extracted layout with its own options and nothing appended, so the
// only difference between the arms is the cache.
func Start(ctx context.Context, enabled bool, javaHome, name, jar string, jvmOpts []string, log io.Writer) (startJar string, extra []string, used *AOT, err error) {
	if !enabled {
		return jar, nil, nil, nil
	}
	own := SetsAOT(jvmOpts)
	train := jvmOpts
	if own {
		train = slices.DeleteFunc(slices.Clone(jvmOpts), isAOTOption)
	}
	a, err := PrepareAOT(ctx, javaHome, name, jar, train, log)
	if err != nil {
		return "", nil, nil, err
	}
	if own {
		return a.Jar, nil, nil, nil
	}
	return a.Jar, a.StartArgs(), &a, nil
}

func isAOTOption(o string) bool {
	return strings.HasPrefix(o, "-XX:AOTCache") || strings.HasPrefix(o, "-XX:AOTMode") || strings.HasPrefix(o, "-XX:SharedArchiveFile")
}

// SetsAOT reports whether JVM options already choose an AOT mode or cache
// (e.g. a variant's jvm: [-XX:AOTMode=off] in the aot-cache experiment):
// such a variant is left as it is, and starts from the extracted jar
// without the cache.
func SetsAOT(jvmOpts []string) bool {
	return slices.ContainsFunc(jvmOpts, isAOTOption)
}

// aotTraining is what a training run asks of each target: every endpoint
// family the experiments use, a few times each, so their classes are loaded
// and linked. Non-2xx answers are fine (the code ran).
var aotTraining = map[string][]string{
	"spring-mvc":     {"/io?ms=1", "/cpu?iterations=200", "/epoch-millis?delayInMillis=0", "/movies?directorLastName=Allen&delayInMillis=0", ReadyPath, MetricsPath},
	"spring-webflux": {"/io?ms=1", "/io-blocking?ms=1", "/cpu?iterations=200", "/cpu-offloaded?iterations=200", "/epoch-millis?delayInMillis=0", "/movies?directorLastName=Allen&delayInMillis=0", ReadyPath, MetricsPath},
}

const (
	aotRounds       = 20               // requests per training endpoint
	aotReadyTimeout = 5 * time.Minute  // a loaded 2-core box starts Spring in 5-30 s
	aotExitTimeout  = 10 * time.Minute // the forked assembly step takes about as long as a start
)

// PrepareAOT returns the AOT cache of target name (its fat jar at jar),
// training it first when no cache exists for this jar, JDK and jvmOpts. The
// cache lives beside the jar, in <target>/target/aot/<key>/, with the
// extracted layout and the training log; caches of older keys are removed.
// Concurrent threadlab processes wait for one another on a lock.
func PrepareAOT(ctx context.Context, javaHome, name, jar string, jvmOpts []string, log io.Writer) (AOT, error) {
	if log == nil {
		log = io.Discard
	}
	a := AOT{Target: name, JVMOpts: slices.Clone(jvmOpts)}
	if SetsAOT(jvmOpts) {
		return a, fmt.Errorf("aot cache of %s: the JVM options %q already choose an AOT mode; train without them", name, jvmOpts)
	}
	sum, err := env.FileSHA256(jar)
	if err != nil {
		return a, fmt.Errorf("aot cache of %s: %w (build the targets first: threadlab targets)", name, err)
	}
	a.JarSHA256 = sum
	release, err := os.ReadFile(filepath.Join(javaHome, "release"))
	if err != nil {
		return a, fmt.Errorf("aot cache of %s: %s is not a JDK: %w", name, javaHome, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "jar %s\x00jdk %s\x00%s\x00", sum, javaHome, release)
	for _, o := range jvmOpts {
		fmt.Fprintf(h, "%s\x00", o)
	}
	// The key starts with the jar's hash, so that caches of the same jar
	// for other JVM options survive and only those of older jars go.
	a.Key = sum[:12] + "-" + hex.EncodeToString(h.Sum(nil))[:8]
	aotDir := filepath.Join(filepath.Dir(jar), "aot")
	dir := filepath.Join(aotDir, a.Key)
	a.Jar = filepath.Join(dir, filepath.Base(jar))
	a.Cache = filepath.Join(dir, name+".aot")

	unlock, err := lockFile(ctx, filepath.Join(os.TempDir(), "threadlab-aot-"+a.Key+".lock"))
	if err != nil {
		return a, fmt.Errorf("aot cache of %s: %w", name, err)
	}
	defer unlock()
	if st, err := os.Stat(a.Cache); err == nil {
		a.Bytes = st.Size()
		return a, nil
	}
	start := time.Now()
	if err := train(ctx, javaHome, jar, dir, a, log); err != nil {
		return a, fmt.Errorf("aot cache of %s: %w", name, err)
	}
	a.TrainedMs = float64(time.Since(start)) / float64(time.Millisecond)
	st, err := os.Stat(a.Cache)
	if err != nil {
		return a, fmt.Errorf("aot cache of %s: training ended but wrote no cache: %w; see %s", name, err, filepath.Join(dir, "training.log"))
	}
	a.Bytes = st.Size()
	// Caches of older jars are stale; each is ~80 MB.
	if entries, err := os.ReadDir(aotDir); err == nil {
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), sum[:12]) && !strings.Contains(e.Name(), ".tmp-") {
				os.RemoveAll(filepath.Join(aotDir, e.Name()))
			}
		}
	}
	fmt.Fprintf(log, "trained the AOT cache of %s in %s: %s (%d MB)\n", name, time.Since(start).Round(time.Second), a.Cache, a.Bytes>>20)
	return a, nil
}

// train extracts jar into dir and runs the training workload there. The
// cache is written under a temporary name and renamed, so a cache file that
// exists is always complete.
func train(ctx context.Context, javaHome, jar, dir string, a AOT, log io.Writer) error {
	java := filepath.Join(javaHome, "bin", "java")
	os.RemoveAll(dir)
	tmp := dir + ".tmp-" + strconv.Itoa(os.Getpid())
	os.RemoveAll(tmp)
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		return err
	}
	ex := exec.CommandContext(ctx, java, "-Djarmode=tools", "-jar", jar, "extract", "--destination", tmp)
	if out, err := ex.CombinedOutput(); err != nil {
		return fmt.Errorf("extract %s (java -Djarmode=tools -jar %s extract) failed: %w: %s", jar, jar, err, tail(string(out), 10))
	}
	// The class path recorded in the cache must be the one later starts
	// use, so the layout moves to its final place before training.
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	logPath := filepath.Join(dir, "training.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	port, err := aotPort()
	if err != nil {
		return err
	}
	partial := a.Cache + ".partial"
	argv := Command(javaHome, a.Jar, port, nil, append(slices.Clone(a.JVMOpts), "-XX:AOTCacheOutput="+partial))
	fmt.Fprintf(log, "training the AOT cache of %s: %s\n", a.Target, strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the training run: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	kill := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done }

	base := "http://127.0.0.1:" + strconv.Itoa(port)
	if err := waitReady(ctx, base+ReadyPath, done); err != nil {
		kill()
		return fmt.Errorf("training run of %s never became ready: %w; see %s", a.Target, err, logPath)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	for range aotRounds {
		for _, p := range aotTraining[a.Target] {
			if res, err := client.Get(base + p); err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		}
	}
	// SIGTERM: Spring shuts down gracefully, the JVM exits normally, and
	// exit is when JEP 514 assembles the cache (in a child JVM, which the
	// process group keeps in reach of a kill on cancel).
	syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-ctx.Done():
		kill()
		return ctx.Err()
	case <-time.After(aotExitTimeout):
		kill()
		return fmt.Errorf("training run of %s did not exit within %s of SIGTERM; see %s", a.Target, aotExitTimeout, logPath)
	}
	if _, err := os.Stat(partial); err != nil {
		return fmt.Errorf("the training run of %s wrote no cache (%w); the last lines of %s:\n%s", a.Target, err, logPath, tailFile(logPath, 15))
	}
	return os.Rename(partial, a.Cache)
}

func waitReady(ctx context.Context, url string, exited <-chan error) error {
	deadline := time.Now().Add(aotReadyTimeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		if res, err := client.Get(url); err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode/100 == 2 {
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("it exited (%v)", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("no 2xx from %s within %s", url, aotReadyTimeout)
}

func aotPort() (int, error) {
	p, err := supervise.FreePort("127.0.0.1")
	if err != nil {
		return 0, fmt.Errorf("the training run: %w", err)
	}
	return p, nil
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return tail(string(bytes.TrimSpace(b)), n)
}

// lockFile takes an exclusive flock on path, waiting while another process
// holds it (a second threadlab must reuse the cache, not train it twice).
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another threadlab training the AOT cache (lock %s): %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
