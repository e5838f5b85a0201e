package record

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadHeader: the header as ReadCSV sees it, and nil (unknown) when
// there is none to read.
func TestReadHeader(t *testing.T) {
	tests := []struct {
		name    string
		content *string // nil: no file
		want    []string
		err     string // fragment; "" for none
	}{
		{name: "absent", content: nil, want: nil},
		{name: "empty", content: ptr(""), want: nil},
		{name: "torn header", content: ptr("variant,poi"), want: nil},
		{name: "blank first line", content: ptr("\n"), want: nil},
		{name: "header alone", content: ptr("variant,point,rps\n"), want: []string{"variant", "point", "rps"}},
		{name: "rows follow", content: ptr("variant,rps\nv,1\nv,2\n"), want: []string{"variant", "rps"}},
		{name: "BOM and spaces", content: ptr("\ufeffvariant, rps\r\n"), want: []string{"variant", "rps"}},
		{name: "bad quote", content: ptr("variant,\"rps\n"), err: "the header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.content != nil {
				if err := os.WriteFile(filepath.Join(dir, TrialsFile), []byte(*tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ReadHeader(dir, TrialsFile)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), TrialsFile) {
					t.Fatalf("error %v, want one naming %s and %q", err, TrialsFile, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) || (tt.want == nil) != (got == nil) {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }
