package markdown

import "strings"

// Hostile is claim text that would render as markup on GitHub if any of it
// got through unescaped: a link, a remote image, a mention, an issue
// reference, math, HTML, emphasis, strikethrough, an emoji, bare links, a
// code span break-out, a table break and a line break into a heading.
// Tests of every Markdown writer put it where untrusted text goes and
// check the output with Live.
const Hostile = "x [click](https://evil.example/a) ![px](https://evil.example/p.png) @octocat #123 $x^2$ " +
	"https://evil.example/b www.evil.example `code` ``a`b`` <b>bold</b> <img src=x onerror=alert(1)> " +
	"*em* _it_ ~~strike~~ :smile: | pipe &amp;\n# heading\n> quote"

// HostileFragments are the pieces of Hostile that must not reach
// GitHub's renderer as they are.
var HostileFragments = []string{"[click]", "![px]", "](https://", "@octocat", "#123", "$x^2$", "https://evil", "www.evil",
	"<b>", "<img", "*em*", "_it_", "~~strike~~", ":smile:", "&amp;", "`code`"}

// Live returns the fragments that occur in doc outside code spans and not
// behind a backslash: the ones GitHub would render as markup rather than
// show as text.
func Live(doc string, fragments []string) []string {
	var live []string
	for _, line := range strings.Split(doc, "\n") {
		line = stripCode(line)
		for _, f := range fragments {
			for i := 0; ; {
				j := strings.Index(line[i:], f)
				if j < 0 {
					break
				}
				at := i + j
				if at == 0 || line[at-1] != '\\' {
					live = append(live, f)
					break
				}
				i = at + 1
			}
		}
	}
	return live
}

// stripCode removes the code spans of one line (CommonMark: a run of n
// backticks up to the next run of exactly n), keeping backslash-escaped
// backticks as text.
func stripCode(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] == '\\' && i+1 < len(line) {
			b.WriteString(line[i : i+2])
			i += 2
			continue
		}
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := 0
		for i+n < len(line) && line[i+n] == '`' {
			n++
		}
		end := closing(line, i+n, n)
		if end < 0 {
			b.WriteString(line[i : i+n])
			i += n
			continue
		}
		b.WriteString("<code/>")
		i = end + n
	}
	return b.String()
}

// closing finds the next run of exactly n backticks from i, or -1.
func closing(line string, i, n int) int {
	for i < len(line) {
		if line[i] != '`' {
			i++
			continue
		}
		m := 0
		for i+m < len(line) && line[i+m] == '`' {
			m++
		}
		if m == n {
			return i
		}
		i += m
	}
	return -1
}
