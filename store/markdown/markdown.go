// Package markdown makes untrusted text safe in Markdown rendered by
// GitHub: report.md (pull requests, blog posts) and `threadlab diff
// --format markdown` (a pull request's job summary). Claim text, run.json
// fields, fingerprint values and paths come from a data directory or a
// manifest anyone can write; in the output they must read as the text they
// are, never as a link, an image, a mention, an issue reference, math,
// HTML or a table break.
//
// Two functions, used at every place such text meets Markdown:
// Text for prose and table cells, Code for a code span (a command line, an
// id, a path). Both return one line.
//
// Data flow: report's and diff's Markdown writers pass each untrusted
// string through Text or Code; nothing else in them escapes.
package markdown

import (
	"strings"
	"unicode"
)

// wordJoiner is U+2060, an invisible character that joins the characters
// around it, inserted where GitHub would otherwise turn plain text into a
// link after the Markdown is parsed (its mention, issue-reference, emoji
// and autolink filters run on the rendered text, where backslash escapes
// no longer show).
const wordJoiner = "\u2060"

// escaped are the ASCII characters with inline meaning in GitHub Flavored
// Markdown: code, emphasis, strikethrough, links and images, HTML and
// entities, autolinks, math, table cells, and the escape itself. Each gets
// a backslash, which CommonMark allows before any ASCII punctuation.
const escaped = "\\`*_~[]<>&|$"

// Text returns s as one line of plain Markdown text: whitespace (line
// breaks included) collapsed to single spaces, control characters dropped,
// the characters in escaped backslash-escaped, a leading character that
// would start a block (heading, quote, list, rule) escaped, and a word
// joiner after '@', '#', ':' and "www" where they could start a mention,
// an issue reference, an emoji or a bare link. user@host stays whole: a
// destination such as bench@10.0.0.2 must read as typed.
func Text(s string) string {
	s = oneLine(s)
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	rs := []rune(s)
	for i, r := range rs {
		next := rune(0)
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		prev := rune(0)
		if i > 0 {
			prev = rs[i-1]
		}
		switch {
		case r == '_' && isAlnum(prev) && isAlnum(next):
			// Inside a word (p99_ms) an underscore can neither open nor
			// close emphasis: left as it is, for readable source.
			b.WriteRune(r)
		case r < 0x80 && strings.ContainsRune(escaped, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case i == 0 && strings.ContainsRune("#+-=", r) && (next == ' ' || next == 0 || next == r):
			// A heading, a list item, a rule or a setext underline.
			b.WriteByte('\\')
			b.WriteRune(r)
		case (r == '.' || r == ')') && (next == ' ' || next == 0) && leadingDigits(rs[:i]):
			// "1. x" or "1) x" at the start would be a list.
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		switch {
		case r == '@' && !isWord(prev) && (isWord(next) || next == '-'):
			// A mention starts after a non-word character; user@host is
			// left whole (an e-mail autolink at worst, a mailto: link).
			b.WriteString(wordJoiner)
		case r == '#' && (isWord(next) || next == '-'):
			b.WriteString(wordJoiner)
		case r == ':' && (isWord(next) || next == '/' || next == '+' || next == '-'):
			b.WriteString(wordJoiner)
		case (r == 'w' || r == 'W') && next == '.' && i >= 2 && strings.EqualFold(string(rs[i-2:i+1]), "www"):
			b.WriteString(wordJoiner)
		}
	}
	return b.String()
}

// Code returns s as an inline code span, one line: fenced by one more
// backtick than the longest run of backticks in s (so no backtick in s can
// close it), with a space inside each fence when s starts or ends with a
// backtick or a space (CommonMark strips one on each side). '|' becomes
// "\|", which GitHub's tables need even inside code; use Code only in
// table cells or where a literal "\|" is acceptable, else CodeLine.
func Code(s string) string {
	return code(strings.ReplaceAll(oneLine(s), "|", `\|`))
}

// CodeLine is Code outside a table: '|' stays as it is.
func CodeLine(s string) string { return code(oneLine(s)) }

func code(s string) string {
	if s == "" {
		return "` `"
	}
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if s[0] == '`' || s[len(s)-1] == '`' || s[0] == ' ' || s[len(s)-1] == ' ' {
		s = " " + s + " "
	}
	return fence + s + fence
}

// oneLine collapses whitespace runs (including line and paragraph
// separators) to one space and drops other control and format characters
// (escape sequences, bidirectional overrides).
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// leadingDigits reports whether rs is one to nine ASCII digits: the
// number of an ordered list item at the start of a line.
func leadingDigits(rs []rune) bool {
	if len(rs) == 0 || len(rs) > 9 {
		return false
	}
	for _, r := range rs {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
