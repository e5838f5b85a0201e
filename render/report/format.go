package report

import (
	"math"
	"strconv"
	"strings"

	"github.com/threadlab/threadlab/store/digits"
	"github.com/threadlab/threadlab/store/record"
)

// num formats a statistic for the pages this package renders itself (the
// run page, the index, the seed tables, the charts' words): digits.Page,
// about 3 significant figures. The comparison page prints with
// digits.Diff (diff's num); digits' doc says why they differ.
func num(x float64) string { return digits.Format(x, digits.Page) }

// pct formats a percentage; NaN (a single trial has no spread) is "–".
func pct(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "–"
	}
	return num(x) + "%"
}

// hasCI tells whether a summary row carries an interval of the median:
// the statistics stage writes NaN bounds and level 0 when there are too
// few trials for one.
func hasCI(s *record.Summary) bool {
	return s.Confidence > 0 && !math.IsNaN(s.Low) && !math.IsNaN(s.High) && (s.Low != 0 || s.High != 0)
}

func signed(x float64) string {
	if x > 0 {
		return "+" + num(x)
	}
	return num(x)
}

func signedPct(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "–"
	}
	return signed(x) + "%"
}

func pval(p float64) string {
	switch {
	case math.IsNaN(p):
		return "–"
	case p < 0.001 && p > 0:
		return "<0.001"
	default:
		return strconv.FormatFloat(p, 'f', 3, 64)
	}
}

func confidence(c float64) string {
	if c <= 1 {
		c *= 100
	}
	return strconv.FormatFloat(c, 'f', -1, 64) + "%"
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ";") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// shellQuote quotes s for a POSIX shell when it needs it, so a reproduce
// line can be pasted as is.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}
