package markdown

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	const wj = "\u2060"
	for _, c := range []struct{ in, want, why string }{
		{"a | b", `a \| b`, "a pipe would split a table cell"},
		{"two\nlines\r\n\u2028three", "two lines three", "line breaks would end a row or start a block"},
		{"[link](http://x)", `\[link\](http:` + wj + `//x)`, "a link, and its URL would be autolinked"},
		{"![img](y)", `!\[img\](y)`, "an image"},
		{"<script>&amp;", `\<script\>\&amp;`, "HTML and entities"},
		{"*bold* _it_ ~s~", `\*bold\* \_it\_ \~s\~`, "emphasis and strikethrough"},
		{"p99_ms and flags_hash", "p99_ms and flags_hash", "an underscore inside a word cannot emphasize: kept readable"},
		{"$x$ and $$y$$", `\$x\$ and \$\$y\$\$`, "math"},
		{"`code`", "\\`code\\`", "a code span"},
		{"@octocat (@team)", "@" + wj + "octocat (@" + wj + "team)", "mentions"},
		{"bench@10.0.0.2", "bench@10.0.0.2", "user@host reads as typed (not a mention)"},
		{"#123 and org/repo#4", "#" + wj + "123 and org/repo#" + wj + "4", "issue references"},
		{"visit www.evil.example", "visit www" + wj + ".evil.example", "a bare www link"},
		{":smile: 12:30", ":" + wj + "smile: 12:" + wj + "30", "an emoji"},
		{"# title", `\# title`, "a heading at the start"},
		{"- item", `\- item`, "a list item at the start"},
		{"-2% to +2%", "-2% to +2%", "a minus sign is not a list item"},
		{"1. first", `1\. first`, "an ordered list at the start"},
		{"702.7 ms", "702.7 ms", "a number is not a list"},
		{"> quote", `\> quote`, "a block quote"},
		{"CPU @ 2.90GHz", "CPU @ 2.90GHz", "an at sign before a space mentions no one"},
		{"a\x1b[31mred\u202e", `a\[31mred`, "escape sequences and bidi overrides are dropped"},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("%s: Text(%q) = %q, want %q", c.why, c.in, got, c.want)
		}
	}
}

func TestCode(t *testing.T) {
	for _, c := range []struct{ in, want, why string }{
		{"threadlab run x.yaml", "`threadlab run x.yaml`", "plain"},
		{"a`b", "``a`b``", "a backtick inside needs a longer fence"},
		{"a``b`", "``` a``b` ```", "ends with a backtick: padded"},
		{"`", "`` ` ``", "a lone backtick"},
		{"a|b", "`a\\|b`", "a pipe in a table cell"},
		{"x\ny", "`x y`", "one line"},
		{"", "` `", "empty"},
	} {
		if got := Code(c.in); got != c.want {
			t.Errorf("%s: Code(%q) = %q, want %q", c.why, c.in, got, c.want)
		}
	}
	if got := CodeLine("a|b"); got != "`a|b`" {
		t.Errorf("CodeLine keeps a pipe: %q", got)
	}
}

// TestHostile: the hostile corpus through Text, and through a code span
// that it tries to close, leaves no fragment live.
func TestHostile(t *testing.T) {
	for _, doc := range []string{
		Text(Hostile),
		"profile " + CodeLine(Hostile) + " and " + Text(Hostile),
		"| " + Text(Hostile) + " " + Code(Hostile) + " |",
	} {
		if strings.Contains(doc, "\n") {
			t.Errorf("a line break got through: %q", doc)
		}
		if live := Live(doc, HostileFragments); len(live) > 0 {
			t.Errorf("live markup %q in %q", live, doc)
		}
	}
	// Live itself sees what is not escaped.
	if live := Live("see [click](https://evil.example/a) `[click]`", []string{"[click]"}); len(live) != 1 {
		t.Errorf("Live missed a raw link: %v", live)
	}
}
