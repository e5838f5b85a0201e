package report

import (
	"strings"
	"testing"
)

// TestParseJSONHostile: the run page reads fingerprint.json and
// hostcheck.json generically; a file no threadlab wrote gets an error, in
// bounded time and stack, never a crash. A 12 MB file of "[" (under
// record.MaxMetaBytes) overflowed the goroutine stack, a fatal error that
// took threadlab site down with every other run.
func TestParseJSONHostile(t *testing.T) {
	for _, c := range []struct {
		why, in, err string
	}{
		{"nested 6 million deep: refused at the depth bound", strings.Repeat("[", 6<<20) + strings.Repeat("]", 6<<20), "nested deeper than 64"},
		{"objects nested past the bound", strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65), "nested deeper than 64"},
		{"two documents", `{"a":1} {"b":2}`, "more than one JSON value"},
		{"truncated", `{"a": [1, 2`, "EOF"},
	} {
		_, err := parseJSON([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: err %v, want one containing %q", c.why, err, c.err)
		}
	}
	n, err := parseJSON([]byte(strings.Repeat(`{"a":`, 64) + "1" + strings.Repeat("}", 64)))
	if err != nil {
		t.Fatalf("64 levels, the bound: %v", err)
	}
	if kv := flatten(n, "", nil); len(kv) != 1 || kv[0].Value != "1" || strings.Count(kv[0].Key, "a") != 64 {
		t.Errorf("flatten of 64 levels: %v", kv)
	}
}
