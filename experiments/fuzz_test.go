package experiments

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// FuzzParse feeds the loader arbitrary bytes. Its seed corpus is every
// catalog manifest, testdata/hostile (alias bombs, huge lists, NaN, broken
// templates, CR/LF, multi-document files), testdata/odd (merge keys,
// anchors, CRLF) and testdata/fuzz/FuzzParse. It calls the loader without
// its panic guard, so a panic is a failure, and checks that every refusal
// is Problems naming the file, that every accepted manifest survives its
// own normalized form, and that no input allocates without bound.
//
//	go test ./experiments -run '^$' -fuzz FuzzParse -fuzztime 60s
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"*.yaml", "testdata/hostile/*.yaml", "testdata/odd/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b, "")
			f.Add(b, "smoke")
		}
	}
	f.Add([]byte(valid), "smoke")
	f.Add([]byte("name: [\n"), "")
	f.Fuzz(func(t *testing.T, data []byte, profile string) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := parse("fuzz.yaml", data, profile)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
			t.Fatalf("%d bytes of input allocated %d MB", len(data), alloc>>20)
		}
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("error is not Problems: %T %v", err, err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if m == nil {
			t.Fatal("nil manifest without error")
		}
		out, err := Marshal(m)
		if err != nil {
			t.Fatalf("accepted manifest does not marshal: %v", err)
		}
		if _, err := parse("again.yaml", out, ""); err != nil && !HostOnly(err) {
			t.Fatalf("accepted manifest's normalized form is refused: %v\n%s", err, out)
		}
	})
}

// BenchmarkParse measures the loader on the largest catalog manifest and
// on the alias bomb, whose refusal must stay in milliseconds (it is
// bounded by MaxNodes, not by the 10^9 nodes it fans out to).
func BenchmarkParse(b *testing.B) {
	for _, f := range []string{"event-loop-starvation.yaml", "testdata/hostile/alias-bomb.yaml", "testdata/hostile/alias-bomb-in-known-key.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(filepath.Base(f), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				Parse(f, data, "")
			}
		})
	}
}
