// Package seeds is the inventory of every claim the five seed write-ups
// make, with where each lives in threadlab: a manifest claim, a
// precondition, a design rule, or not encoded with the reason.
//
// claims.csv beside this file is its one source. METHODOLOGY.md's tables
// ("Seed claims: where each one lives") are generated from it, and a test
// fails when they disagree (go test ./experiments/seeds -update rewrites
// them); the site's reproduction table (render/report) reads it, so
// every seed claim is listed there, not only those a manifest encodes.
package seeds

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

//go:embed claims.csv
var claimsCSV []byte

// File is claims.csv's path in the repository, for messages.
const File = "experiments/seeds/claims.csv"

// Kinds of place a seed claim lives.
const (
	KindClaim        = "claim"        // a manifest claim; Claims names it (TestSeedRefsExist fails on a claim row without one)
	KindPrecondition = "precondition" // a requires: of the claims listed in Claims
	KindDesign       = "design"       // a validity rule, lint warning or pipeline stage, not a claim
	KindNotEncoded   = "not-encoded"  // not encoded; Where says why
)

// Kinds lists the kinds in the order they are documented.
var Kinds = []string{KindClaim, KindPrecondition, KindDesign, KindNotEncoded}

// Claim is one statement of a write-up.
type Claim struct {
	ID     string   // "000.1": the write-up and the statement's number in it
	Says   string   // the statement, in one line
	Figure string   // the write-up's own figure, as it gives it
	Kind   string   // one of Kinds
	Claims []string // the manifest claims it lives in, as experiment/claim-id
	Where  string   // where it lives, in prose (Markdown), as METHODOLOGY.md shows it
}

// Seed is the write-up a claim comes from: "000" for "000.1".
func (c Claim) Seed() string {
	s, _, _ := strings.Cut(c.ID, ".")
	return s
}

// Writeup is one seed write-up, the topic its section is headed with, and
// its title (the write-ups are cited by title: they are not in the
// repository).
type Writeup struct{ ID, Topic, Title string }

// Writeups are the five seeds, in order; their titles are in
// METHODOLOGY.md's table above the generated section.
var Writeups = []Writeup{
	{"000", "platform vs virtual vs WebFlux, I/O- and CPU-bound, event-loop starvation", "Virtual Threads vs WebFlux vs Platform Threads on Spring Boot 4.1: Benchmarks and a Decision Framework"},
	{"001", "one blocking service, virtual threads on and off, pool and concurrency sweeps", "Virtual Threads in Spring Boot 4"},
	{"002", "four approaches, fixed-rate and paced scenarios", "Benchmark of Java Virtual Threads vs WebFlux"},
	{"003", "1000 requests at once, and blocking on the event loop", "Virtual Threads vs WebFlux: Which to Choose in 2026"},
	{"004", "Reactor modes under CPU saturation", "Reactor and Virtual Threads: When to Parallelize in Spring Boot"},
}

var (
	header = []string{"id", "says", "figure", "kind", "claims", "where"}
	idRE   = regexp.MustCompile(`^\d{3}\.\d+[a-z]?$`)
	refRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*/[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*$`)
)

// All returns the inventory in file order.
func All() ([]Claim, error) { return parse(File, claimsCSV) }

// parse reads an inventory, reporting every problem with its line and
// field and how to fix it.
func parse(file string, data []byte) ([]Claim, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = len(header)
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w (every line needs the %d fields %s, quoted where they hold commas)", file, err, len(header), strings.Join(header, ","))
	}
	if len(rows) == 0 || !slices.Equal(rows[0], header) {
		return nil, fmt.Errorf("%s:1: the header must be %s", file, strings.Join(header, ","))
	}
	var out []Claim
	var errs []error
	seen := map[string]int{}
	for i, f := range rows[1:] {
		line := i + 2
		bad := func(field, format string, a ...any) {
			errs = append(errs, fmt.Errorf("%s:%d: %s: %s", file, line, field, fmt.Sprintf(format, a...)))
		}
		c := Claim{ID: f[0], Says: strings.TrimSpace(f[1]), Figure: strings.TrimSpace(f[2]), Kind: f[3], Claims: strings.Fields(f[4]), Where: strings.TrimSpace(f[5])}
		switch {
		case !idRE.MatchString(c.ID):
			bad("id", "%q is not a seed claim id (write the write-up and a number, like 000.1 or 001.5a)", c.ID)
		case seen[c.ID] > 0:
			bad("id", "%s is listed on line %d already (give each statement its own id)", c.ID, seen[c.ID])
		case !slices.ContainsFunc(Writeups, func(w Writeup) bool { return w.ID == c.Seed() }):
			bad("id", "%s names no write-up (the seeds are %s)", c.ID, writeupIDs())
		}
		seen[c.ID] = line
		if c.Says == "" {
			bad("says", "empty (the statement, in one line)")
		}
		if c.Figure == "" {
			bad("figure", "empty (the write-up's figure, or \"no figure\")")
		}
		if !slices.Contains(Kinds, c.Kind) {
			bad("kind", "%q is not a kind (use %s)", c.Kind, strings.Join(Kinds, ", "))
		}
		for _, ref := range c.Claims {
			if !refRE.MatchString(ref) {
				bad("claims", "%q is not experiment/claim-id (like io-bound/virtual-beats-platform; separate several with spaces)", ref)
			}
		}
		if c.Kind == KindPrecondition && len(c.Claims) == 0 {
			bad("claims", "a precondition names the claims whose requires: carry it")
		}
		if c.Where == "" {
			bad("where", "empty (say where it lives, or why it is not encoded)")
		}
		out = append(out, c)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func writeupIDs() string {
	ids := make([]string, len(Writeups))
	for i, w := range Writeups {
		ids[i] = w.ID
	}
	return strings.Join(ids, ", ")
}

// Markers bound the section of METHODOLOGY.md that Markdown generates.
const (
	BeginMarker = "<!-- seed-claims: generated from experiments/seeds/claims.csv; edit that file, then run go test ./experiments/seeds -update -->"
	EndMarker   = "<!-- end seed-claims -->"
)

// Markdown is METHODOLOGY.md's inventory, between the markers: a count by
// kind, one table per write-up, then the statements not encoded, each with
// why, in one list a reviewer can check.
func Markdown(claims []Claim) string {
	var b strings.Builder
	b.WriteString(BeginMarker + "\n")
	count := map[string]int{}
	for _, c := range claims {
		count[c.Kind]++
	}
	fmt.Fprintf(&b, "%d statements: %d manifest claims, %d preconditions, %d design rules, %d not encoded.\n\n",
		len(claims), count[KindClaim], count[KindPrecondition], count[KindDesign], count[KindNotEncoded])
	for i, w := range Writeups {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "### %s: %s\n| # | the write-up says | seed figure | where |\n|---|---|---|---|\n", w.ID, w.Topic)
		for _, c := range claims {
			if c.Seed() == w.ID {
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.ID, cell(c.Says), cell(c.Figure), cell(c.Where))
			}
		}
	}
	b.WriteString("\n### Not encoded, and why\n| # | the write-up says | seed figure | why not |\n|---|---|---|---|\n")
	for _, c := range claims {
		if c.Kind == KindNotEncoded {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.ID, cell(c.Says), cell(c.Figure), cell(c.Where))
		}
	}
	b.WriteString(EndMarker + "\n")
	return b.String()
}

// cell keeps a value on one table row: no line breaks, pipes escaped.
func cell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

// Replace puts the generated section into a METHODOLOGY.md text, between
// its markers.
func Replace(doc, section string) (string, error) {
	i := strings.Index(doc, BeginMarker)
	j := strings.Index(doc, EndMarker)
	if i < 0 || j < i {
		return "", fmt.Errorf("METHODOLOGY.md has no %q ... %q section (put both markers back where the seed tables belong)", BeginMarker, EndMarker)
	}
	return doc[:i] + section + strings.TrimPrefix(doc[j+len(EndMarker):], "\n"), nil
}
