package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestBootVersionsFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
		why  string
	}{
		{"4.0.7", []string{"4.0.7"}, "", "the default: the poms' own Boot"},
		{"all", []string{"3.5.7", "4.0.7", "4.1.2"}, "", "every line, oldest first (CI builds these before make test)"},
		{"4.1, 3.5,4.1.2", []string{"4.1.2", "3.5.7"}, "", "lines or versions, spaces allowed, each built once"},
		{"4.2", nil, "use 3.5 (3.5.7), 4.0 (4.0.7) or 4.1 (4.1.2)", "an unknown line names the supported ones"},
		{"", nil, "not a supported line", "an empty list is a mistake, not the default"},
	} {
		got, err := bootVersions(tc.in)
		switch {
		case tc.err != "":
			var u usageError
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &u) {
				t.Errorf("-boot %q: err = %v, want a usage error containing %q (%s)", tc.in, err, tc.err, tc.why)
			}
		case err != nil || !slices.Equal(got, tc.want):
			t.Errorf("-boot %q = %v, %v; want %v (%s)", tc.in, got, err, tc.want, tc.why)
		}
	}
}
