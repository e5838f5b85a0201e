package experiments

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostile lists every file of testdata/hostile with the field its error
// must name and why the file is refused. Each is a defect of issue 15: a
// file that hung, crashed, ran out of memory or was silently accepted.
var hostile = map[string]struct{ field, why string }{
	"alias-bomb.yaml":                 {"b", "aliases fanning out to 1000^3 nodes ran out of memory in the key check"},
	"alias-bomb-in-known-key.yaml":    {"x", "the same through a known key, 10^6 request copies"},
	"huge-list.yaml":                  {"sweep.users.values", "a 5000-item list"},
	"deep-nesting.yaml":               {"notes", "200 levels of nesting"},
	"alias-loop.yaml":                 {"notes", "an alias inside its own anchor"},
	"trials-huge.yaml":                {"trials:", "trials: 1e9 died at run time with a Go fatal error"},
	"trials-zero.yaml":                {"trials:", "trials: 0 silently became 5"},
	"sweep-cells.yaml":                {"sweep:", "a 40^6-point sweep died at run time"},
	"warmup-48h.yaml":                 {"load.warmup:", "a 48 h warm-up made the run hang"},
	"start-24h.yaml":                  {"load.start:", "a 24 h start offset made the run hang"},
	"timeout-huge.yaml":               {"load.timeout:", "a 1000 h response time-out"},
	"users-1e9.yaml":                  {"load.users:", "1e9 users started a JVM before failing"},
	"rate-too-high.yaml":              {"load.rate:", "a rate the generator cannot pace"},
	"rate-nan.yaml":                   {"load.rate:", "rate: .nan ran 0 requests and said complete"},
	"rate-inf-sweep.yaml":             {"sweep.rate.values[1]:", "an infinite swept rate"},
	"weight-overflow.yaml":            {"load.requests[0].weight:", "two weights of 2^63-1 overflowed rand.IntN"},
	"ramp-mixed.yaml":                 {"load.stages:", "ramp stages mixing users and rate"},
	"users-and-rate.yaml":             {"load.users:", "users next to rate were silently ignored"},
	"pinning-reversed.yaml":           {"pinning.target:", "a reversed CPU range"},
	"empty-program.yaml":              {"variants.own.command[0]:", "an empty program in command"},
	"method-not-token.yaml":           {"load.requests[0].method:", "a method that is not an HTTP token"},
	"path-space.yaml":                 {"load.requests[0].path:", "a space in a path"},
	"path-crlf-before-template.yaml":  {"load.requests[0].path:", "CR/LF before a {random} template put headers on the wire"},
	"path-no-slash.yaml":              {"load.requests[0].path:", "a path without a leading slash"},
	"template-broken.yaml":            {"load.requests[0].path:", "{random 10..1}"},
	"template-unclosed.yaml":          {"load.requests[0].path:", "an unclosed template"},
	"template-overflow.yaml":          {"load.requests[0].path:", "a range whose size overflows int64"},
	"header-crlf.yaml":                {"load.requests[0].headers.X-A:", "a line break in a header value"},
	"header-name-bad.yaml":            {"load.requests[0].headers.X A::", "a header name that is not a token"},
	"var-crlf.yaml":                   {"variants.platform.vars.p:", "a line break reaching the wire through vars"},
	"ready-bad-escape.yaml":           {"variants.own.ready:", "/ready%zz panicked in waitReady"},
	"metrics-no-slash.yaml":           {"variants.own.metrics:", "a metrics path without a leading slash"},
	"claim-band-reversed.yaml":        {"claims[0].check.at_most:", "at_least > at_most was accepted"},
	"claim-compare-self.yaml":         {"claims[0].check.compare:", "a variant compared with itself was accepted"},
	"claim-where-unknown-value.yaml":  {"claims[0].check.where.pool[0]:", "a where value not in the sweep passed"},
	"claim-nan-threshold.yaml":        {"claims[0].check.at_least:", "a NaN threshold"},
	"decision-pick-unknown.yaml":      {"claims[0].decision.pick:", "a decision picking a variant that does not exist"},
	"sweep-duplicate-values.yaml":     {"sweep.pool.values[2]:", "duplicate sweep values silently dropped trials"},
	"sweep-semicolon.yaml":            {"sweep.pool.values[0]:", "';' and '=' in a value mislabelled points"},
	"sweep-key-equals.yaml":           {"sweep.po=ol:", "'=' in a sweep key"},
	"sweep-script-marker.yaml":        {"sweep.pool.values[0]:", "__f__ markers became JavaScript in the report"},
	"sweep-property-on-commands.yaml": {"sweep.pool.property:", "a property sweep over command variants changes nothing"},
	"sweep-users-on-burst.yaml":       {"sweep.users.load:", "a users sweep on a burst model changes nothing"},
	"multi-doc.yaml":                  {"a second YAML document", "a second document was silently ignored"},
	"not-a-mapping.yaml":              {"a YAML mapping", "a list instead of a mapping"},
	"empty.yaml":                      {"empty", "an empty file"},
	"binary.yaml":                     {"YAML syntax", "binary junk"},
	"unknown-key.yaml":                {"trails:", "a typo in a key"},
	"duplicate-key.yaml":              {"trials", "a key written twice"},
	"duplicate-property.yaml":         {"variants.virtual.properties.spring.threads.virtual.enabled: mapping key \"spring.threads.virtual.enabled\" already defined at line 9 (keep one", "a property written twice said no fix"},
	"trials-float.yaml":               {"trials:", "yaml.v3 truncated trials: 2.5 to 2"},
	"title-script-marker.yaml":        {"title: holds __f__", "issue 15: the report turned __f__ text in any chart string into script"},
	"tiny-rate.yaml":                  {"load.rate:", "a rate that sends no request in the trial said complete"},
	"tiny-duration.yaml":              {"load.duration:", "a 1 ns trial measures nothing"},
	"host-header.yaml":                {"load.requests[0].headers.Host: header Host is set by the generator", "a Host header the generator sets itself, named at its own field (one validator set in load)"},
	"seed-wrong-type.yaml":            {"claims[0].seed:", "a type error in a one-line claim names its own field"},
	"requires-not-a-list.yaml":        {"claims[0].requires", "issue 11: preconditions are a list, one condition per item"},
	"preallocate-closed.yaml":         {"load.preallocate:", "preallocated connections on a closed model, whose users hold their own, would be ignored"},
	"preallocate-users-ramp.yaml":     {"load.preallocate:", "preallocated connections on a ramp of users would be ignored"},
	"preallocate-negative.yaml":       {"load.preallocate:", "a negative number of connections"},
	"preallocate-1e9.yaml":            {"load.preallocate:", "a billion connections opened before the first send"},
	"preallocate-over-inflight.yaml":  {"load.max_in_flight:", "a cap on sends below the connections opened for them"},
}

// TestHostileManifests loads every file of testdata/hostile: each must be
// refused with Problems naming the file and the field, without a panic,
// quickly and within a bounded amount of allocation.
func TestHostileManifests(t *testing.T) {
	files, err := filepath.Glob("testdata/hostile/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no hostile corpus: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		want, ok := hostile[name]
		if !ok {
			t.Errorf("%s has no row in the hostile table (add the field its error must name)", f)
			continue
		}
		t.Run(name, func(t *testing.T) {
			err, alloc := loadBounded(t, f)
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("%s: want Problems, got %T: %v", want.why, err, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, f+":") || !strings.Contains(msg, want.field) {
				t.Errorf("%s: the error must start with %q and name %q:\n%s", want.why, f+":", want.field, msg)
			}
			// Allocation, not time, is the deterministic measure of a bomb.
			if alloc > 200<<20 {
				t.Errorf("%s: loading allocated %d MB", want.why, alloc>>20)
			}
		})
	}
	for name := range hostile {
		if _, err := os.Stat(filepath.Join("testdata/hostile", name)); err != nil {
			t.Errorf("table row %s has no file", name)
		}
	}
}

// loadBounded loads f and returns its error and the bytes allocated; it
// fails the test if loading takes more than 2 s (generous: it takes
// milliseconds) so that a bomb shows as a failure, not a hung test.
func loadBounded(t *testing.T, f string) (error, uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	done := make(chan error, 1)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	go func() {
		_, err := Load(f, "")
		done <- err
	}()
	select {
	case err := <-done:
		runtime.ReadMemStats(&after)
		return err, after.TotalAlloc - before.TotalAlloc
	case <-ctx.Done():
		t.Fatalf("%s: no answer within 2 s", f)
		return nil, 0
	}
}

// TestOddButValid loads testdata/odd: valid YAML that means a manifest
// (merge keys, anchors, CRLF line ends, flow style, document markers, a
// trailing empty document) must be accepted.
func TestOddButValid(t *testing.T) {
	files, _ := filepath.Glob("testdata/odd/*.yaml")
	if len(files) == 0 {
		t.Fatal("no odd corpus")
	}
	for _, f := range files {
		m, err := Load(f, "")
		if err != nil {
			t.Errorf("%s: valid manifest refused: %v", f, err)
			continue
		}
		for _, p := range ProfileNames(m)[1:] {
			if _, err := Load(f, p); err != nil {
				t.Errorf("%s --profile %s: %v", f, p, err)
			}
		}
	}
}

// TestMergeKey checks what a merge key means: written keys win over merged
// ones, and among merged mappings the first wins.
func TestMergeKey(t *testing.T) {
	m, err := Load("testdata/odd/merge-key.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	v := m.Variants[1]
	if v.Target != "spring-mvc" || v.Properties["spring.threads.virtual.enabled"] != "true" || v.Properties["server.tomcat.threads.max"] != "10" {
		t.Errorf("merged variant: %+v", v)
	}
	m, err = Load("testdata/odd/merge-list.yaml", "smoke")
	if err != nil {
		t.Fatal(err)
	}
	if v := m.Variants[1]; v.Target != "spring-mvc" || v.Properties["spring.threads.virtual.enabled"] != "true" {
		t.Errorf("merge of a list: %+v", v)
	}
	if g := m.Measured(); g.Users != 2 || g.Duration != 2*time.Second {
		t.Errorf("profile merging the base load: users %d duration %s", g.Users, g.Duration)
	}
}

// TestFileTooBig: a file over MaxFileBytes is refused by size before it
// is parsed (a 50 MB list reached 2.2 GB parsed).
func TestFileTooBig(t *testing.T) {
	f := filepath.Join(t.TempDir(), "big.yaml")
	data := []byte("name: big\nnotes: [" + strings.Repeat("0,", MaxFileBytes) + "0]\n")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	err, alloc := loadBounded(t, f)
	if err == nil || !strings.Contains(err.Error(), "more than the 131072 a manifest may have") {
		t.Errorf("big file: %v", err)
	}
	if alloc > 4*MaxFileBytes {
		t.Errorf("refusing a big file allocated %d bytes: it was read whole", alloc)
	}
}

// TestNamedPipe: a manifest that is a named pipe nobody writes to is read
// as empty at once, not waited on forever (the open blocked past SIGTERM).
func TestNamedPipe(t *testing.T) {
	f := filepath.Join(t.TempDir(), "fifo.yaml")
	if err := syscall.Mkfifo(f, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := Load(f, ""); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "the file is empty") {
			t.Errorf("named pipe: %v, want the empty-file error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Load blocked on a named pipe nobody writes to")
	}
}

// TestGuard: an unexpected panic in the loader becomes an error naming the
// file, never a crash.
func TestGuard(t *testing.T) {
	m, err := guard("x.yaml", func() (*Manifest, error) {
		var g *Group
		return nil, errors.New(g.Name) // nil dereference
	})
	if m != nil || err == nil || !strings.HasPrefix(err.Error(), "x.yaml: internal error while reading this manifest: runtime error") {
		t.Errorf("guard: %v, %v", m, err)
	}
}
