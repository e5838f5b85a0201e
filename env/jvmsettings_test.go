package env

import (
	"strings"
	"testing"
)

const flagsFinal = `[Global flags]
    ccstr AOTCache                                 =                                           {product} {default}
      int ActiveProcessorCount                     = -1                                        {product} {default}
   size_t MaxHeapSize                              = 2147483648                                {product} {command line}
     bool TieredCompilation                        = true                                   {pd product} {default}
     bool UseCompressedOops                        = true                           {product lp64_product} {ergonomic}
     bool UseG1GC                                  = true                                      {product} {ergonomic}
openjdk version "25.0.3" 2026-04-21 LTS
`

func TestParseFlagsFinal(t *testing.T) {
	m := ParseFlagsFinal(strings.NewReader(flagsFinal))
	tests := []struct {
		name string
		want Flag
		why  string
	}{
		{"MaxHeapSize", Flag{"size_t", "2147483648", "command line"}, "a value set on the command line"},
		{"AOTCache", Flag{"ccstr", "", "default"}, "an empty string value"},
		{"TieredCompilation", Flag{"bool", "true", "default"}, "a kind of two words ({pd product})"},
		{"UseCompressedOops", Flag{"bool", "true", "ergonomic"}, "an origin chosen by ergonomics"},
		{"ActiveProcessorCount", Flag{"int", "-1", "default"}, "a negative value"},
	}
	for _, tt := range tests {
		if got := m[tt.name]; got != tt.want {
			t.Errorf("%s: %s = %+v, want %+v", tt.why, tt.name, got, tt.want)
		}
	}
	if _, ok := m["openjdk"]; ok || len(m) != 6 {
		t.Errorf("parsed %d flags (%v), want the 6 flag lines only", len(m), m)
	}
}

func FuzzParseFlagsFinal(f *testing.F) {
	f.Add(flagsFinal)
	f.Add("x = {")
	f.Fuzz(func(t *testing.T, s string) {
		ParseFlagsFinal(strings.NewReader(s))
	})
}
