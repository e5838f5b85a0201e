package report

import (
	"cmp"
	"math"
	"regexp"
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

// hexCommit matches a bare abbreviated or full commit (git describe
// --always); describeCommit the commit git describe appends to a tag
// ("v1.2-3-gabc1234").
var (
	hexCommit      = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
	describeCommit = regexp.MustCompile(`-g([0-9a-f]{7,40})$`)
	// pseudoCommit: a Go pseudo-version, v0.0.0-20261201123456-7c692d2abcde.
	pseudoCommit = regexp.MustCompile(`-\d{14}-([0-9a-f]{12})$`)
	// parenCommit: a release with its commit, 0.1.0 (ad141ed).
	parenCommit = regexp.MustCompile(`\(([0-9a-f]{7,40})\)$`)
	// exactTag: git describe on a tagged commit, v1.2 or v1.2.3.
	exactTag = regexp.MustCompile(`^v\d+(\.\d+)*$`)
)

// versionCommit is the commit a threadlab version names, and whether the
// tree it was built from was clean: make build stamps git describe
// --always --dirty, a plain go build the module's pseudo-version. "" for a
// build that names none ("dev", "(devel)").
func versionCommit(version string) (commit string, clean bool) {
	base, dirty := strings.CutSuffix(version, "-dirty")
	if !dirty {
		base, dirty = strings.CutSuffix(base, "+dirty")
	}
	if hexCommit.MatchString(base) {
		return base, !dirty
	}
	for _, re := range []*regexp.Regexp{describeCommit, pseudoCommit, parenCommit} {
		if m := re.FindStringSubmatch(base); m != nil {
			return m[1], !dirty
		}
	}
	if exactTag.MatchString(base) {
		return base, !dirty
	}
	return "", false
}

// reproduce is the command that runs the experiment again as the run
// did: on the commit that made it (git checkout), with its profile, and
// through threadlab run --hosts when it ran on several hosts (make
// experiment runs on one). The note says what the command cannot pin.
func reproduce(exp string, m record.Meta) (cmd, note string) {
	var parts []string
	commit, clean := versionCommit(m.Version)
	if commit != "" {
		parts = append(parts, "git checkout "+commit)
	}
	profile := m.Profile != "" && m.Profile != "default"
	if m.Hosts != nil {
		run := "make build && bin/threadlab run --hosts " + shellQuote(cmp.Or(m.Hosts.Inventory, "hosts.yaml"))
		if profile {
			run += " --profile " + shellQuote(m.Profile)
		}
		parts = append(parts, run+" "+shellQuote("experiments/"+exp+".yaml"))
	} else {
		run := "make experiment EXP=" + shellQuote(exp)
		if profile {
			run += " PROFILE=" + shellQuote(m.Profile)
		}
		parts = append(parts, run)
	}
	var notes []string
	switch {
	case commit == "":
		notes = append(notes, "The run's threadlab build named no commit ("+strconv.Quote(m.Version)+"), so this runs today's code.")
	case !clean:
		notes = append(notes, "The run's threadlab was built from "+commit+" with uncommitted changes; the checkout has the commit without them.")
	}
	if m.Hosts != nil {
		notes = append(notes, "It ran on "+strconv.Itoa(len(m.Hosts.Hosts))+" hosts: --hosts names the inventory it used; write one for your machines (README.md, section “Several hosts over SSH”).")
	}
	return strings.Join(parts, " && "), strings.Join(notes, " ")
}
