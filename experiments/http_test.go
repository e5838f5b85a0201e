package experiments

import (
	"strings"
	"testing"

	"github.com/threadlab/threadlab/measure/load"
)

// TestHTTPChecks is the table of the generator's exported request checks
// the loader relies on (measure/load/check.go): RFC 9110 tokens, paths
// with no space or control character anywhere, well-formed templates.
func TestHTTPChecks(t *testing.T) {
	tests := []struct {
		name, why string
		err       error
		want      string // "" means valid
	}{
		{"plain path", "the common case", load.CheckPath("/io?ms=300"), ""},
		{"template", "{random A..B} is the one template", load.CheckPath("/order/{random 1..100000}?hold=true"), ""},
		{"two templates", "several are fine", load.CheckPath("/a/{random 1..2}/b/{random 3..4}"), ""},
		{"encoded space", "%20 is how a space is written", load.CheckPath("/q?x=a%20b"), ""},
		{"no slash", "the base URL is put in front", load.CheckPath("io"), "must start with /"},
		{"space", "a space ends the request target on the wire", load.CheckPath("/a b"), "holds a space at byte 2"},
		{"CR before a template", "issue 15: only the text after the last template was checked", load.CheckPath("/a\r\nX: 1\r\n/{random 1..2}"), `holds control character '\r' at byte 2`},
		{"LF after a template", "the same at the end", load.CheckPath("/{random 1..2}\n"), `holds control character '\n'`},
		{"NUL", "any control character", load.CheckPath("/a\x00"), "control character"},
		{"reversed range", "{random 10..1} has no values", load.CheckPath("/{random 10..1}"), "0 <= A <= B"},
		{"unclosed", "a { without }", load.CheckPath("/{random 1..2"), "unclosed {"},
		{"unknown template", "only random exists", load.CheckPath("/{uuid}"), "the only template is {random A..B}"},
		{"stray brace", "a } outside a template", load.CheckPath("/a}b"), "'}'"},
		{"huge range", "hi-lo+1 would overflow int64 in the generator", load.CheckPath("/{random 0..9223372036854775807}"), "A and B must be integers"},
		{"bad escape", "the path must parse", load.CheckPath("/a%zz"), "% must start an escape"},
		{"method ok", "a token", load.CheckMethod("PATCH"), ""},
		{"method with space", "a space would split the request line", load.CheckMethod("GET /x"), "not an HTTP token"},
		{"method empty", "no method at all", load.CheckMethod(""), "not an HTTP token"},
		{"header ok", "a tab is allowed in a field value", load.CheckHeader("X-Trace", "a\tb"), ""},
		{"header name colon", "a colon would end the name early", load.CheckHeader("X-A:", "1"), "not an HTTP token"},
		{"header value LF", "a line break starts a new header", load.CheckHeader("X-A", "1\nX-Evil: 2"), `control character '\n'`},
		{"ready ok", "the actuator's health path", load.CheckURLPath("/actuator/health"), ""},
		{"ready bad escape", "issue 15: /ready%zz panicked in waitReady", load.CheckURLPath("/ready%zz"), "not a valid URL path"},
		{"ready other host", "//host would name another host", load.CheckURLPath("//evil/x"), "would name another host"},
		{"ready fragment", "a fragment is never sent", load.CheckURLPath("/x#y"), "fragment"},
		{"metrics no slash", "issue 15: accepted before", load.CheckURLPath("metrics"), "must start with /"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			switch {
			case tt.want == "" && tt.err != nil:
				t.Errorf("%s: want valid, got %v", tt.why, tt.err)
			case tt.want != "" && (tt.err == nil || !strings.Contains(tt.err.Error(), tt.want)):
				t.Errorf("%s: want an error with %q, got %v", tt.why, tt.want, tt.err)
			}
		})
	}
}
