package seeds

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
)

// catalogClaim is one claim of one profile of a catalog manifest.
type catalogClaim struct {
	Exp, Profile string
	Source       string // the manifest's source: (empty: not from a seed)
	Claim        experiments.Claim
}

func (c catalogClaim) ref() string { return c.Exp + "/" + c.Claim.ID }

func (c catalogClaim) where() string {
	p := c.Profile
	if p == "" {
		p = "default"
	}
	return fmt.Sprintf("experiments/%s.yaml (%s) claim %s", c.Exp, p, c.Claim.ID)
}

// catalog loads every manifest of the catalog in its default and every
// profile, and returns each profile's claims.
func catalog(t *testing.T) []catalogClaim {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests beside the inventory: %v", err)
	}
	var out []catalogClaim
	for _, f := range files {
		exp := strings.TrimSuffix(filepath.Base(f), ".yaml")
		base, err := experiments.Load(f, "")
		if base == nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, p := range append([]string{""}, experiments.ProfileNames(base)...) {
			m, err := experiments.Load(f, p)
			if m == nil {
				t.Fatalf("%s profile %q: %v", f, p, err)
			}
			for _, c := range m.Claims {
				out = append(out, catalogClaim{Exp: exp, Profile: p, Source: m.Source, Claim: c})
			}
		}
	}
	return out
}

// TestThresholdRules lists every claim's threshold beside the rule that
// produced it, and fails where the threshold does not follow its rule
// (experiments/rules.go, METHODOLOGY.md "From a seed's sentence to a
// claim's threshold"). go test -v shows the table.
func TestThresholdRules(t *testing.T) {
	for _, c := range catalog(t) {
		t.Logf("%-28s %-8s %-40s %-16s %s", c.Exp, orDefault(c.Profile), c.Claim.ID, c.Claim.Rule, experiments.Threshold(c.Claim.Check))
		if p := experiments.RuleProblem(c.Claim); p != "" {
			t.Errorf("%s: %s (set rule: to the kind of statement the seed makes and the threshold the rule gives; rules: %s)", c.where(), p, strings.Join(experiments.RuleNames(), ", "))
		}
	}
}

func orDefault(p string) string {
	if p == "" {
		return "default"
	}
	return p
}

// TestClaimRowsBothWays: every claim of a manifest drawn from a seed names
// its statement's row of claims.csv (seed.row), the row lists it, and
// every claim a claim row lists names that row back.
func TestClaimRowsBothWays(t *testing.T) {
	inv, err := All()
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]Claim{}
	for _, r := range inv {
		rows[r.ID] = r
	}
	named := map[string]map[string]bool{} // exp/claim -> rows its manifests name
	for _, c := range catalog(t) {
		if c.Source == "" {
			continue // not drawn from a seed (aot-cache)
		}
		if c.Claim.Seed == nil || strings.TrimSpace(c.Claim.Seed.Row) == "" {
			t.Errorf("%s: no seed.row (name the statement's id in %s, like row: \"000.1\")", c.where(), File)
			continue
		}
		for _, id := range strings.Fields(c.Claim.Seed.Row) {
			r, ok := rows[id]
			switch {
			case !ok:
				t.Errorf("%s: seed.row %s is no row of %s", c.where(), id, File)
			case r.Kind != KindClaim:
				t.Errorf("%s: seed.row %s is a %s row (a manifest claim names a claim row)", c.where(), id, r.Kind)
			case !slices.Contains(r.Claims, c.ref()):
				t.Errorf("%s %s does not list %s, which names it (add the ref to its claims column)", File, id, c.ref())
			}
			if named[c.ref()] == nil {
				named[c.ref()] = map[string]bool{}
			}
			named[c.ref()][id] = true
		}
	}
	for _, r := range inv {
		if r.Kind != KindClaim {
			continue
		}
		for _, ref := range r.Claims {
			if !named[ref][r.ID] {
				t.Errorf("%s %s lists %s, but that claim names no seed.row %s (in any profile)", File, r.ID, ref, r.ID)
			}
		}
	}
}

// SeedsDir is where the seed write-ups are: $THREADLAB_SEEDS, else
// ../shared/seeds beside the repository (the CI checkout has shared/
// beside the clone).
func seedsDir() string {
	if d := os.Getenv("THREADLAB_SEEDS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "shared", "seeds")
}

// seedTexts reads the write-ups by id ("000"), normalized for matching;
// nil when they are not present.
func seedTexts(t *testing.T) map[string]string {
	dir := seedsDir()
	files, _ := filepath.Glob(filepath.Join(dir, "[0-9][0-9][0-9]_*.txt"))
	if len(files) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no seed write-ups under %s: CI has shared/seeds beside the clone (set THREADLAB_SEEDS to their folder)", dir)
		}
		t.Skipf("no seed write-ups under %s (set THREADLAB_SEEDS to their folder to check the quoted passages)", dir)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)[:3]] = normalize(string(b))
	}
	return out
}

var (
	quoteRE   = regexp.MustCompile(`"([^"]+)"`)
	numberRE  = regexp.MustCompile(`\d+(?:[.,]\d+)*`)
	segmentRE = regexp.MustCompile(`(?:^|; )(\d{3}): `)
	spaceRE   = regexp.MustCompile(`\s+`)
)

// normalize folds the typography that differs between a write-up and a
// YAML string: curly quotes, dashes, the multiplication sign, spacing.
func normalize(s string) string {
	r := strings.NewReplacer("\u2018", "'", "\u2019", "'", "\u201c", `"`, "\u201d", `"`, "\u2013", "-", "\u2014", "-", "\u00d7", "x", "\u00a0", " ")
	return spaceRE.ReplaceAllString(r.Replace(s), " ")
}

// numbers are the figures of a text with thousands separators dropped
// (1,042 and 1042 are one figure; the write-ups' decimal commas stay as
// written: 451,62 is compared as 45162 on both sides).
func numbers(s string) []string {
	var out []string
	for _, n := range numberRE.FindAllString(s, -1) {
		out = append(out, strings.ReplaceAll(n, ",", ""))
	}
	return out
}

// TestSeedPassages: every claim drawn from a seed carries seed.from, and
// each figure and each quoted passage in it appears in the write-up it
// names ("000: ...; 003: ..."), when the write-ups are present.
func TestSeedPassages(t *testing.T) {
	claims := catalog(t)
	for _, c := range claims {
		if c.Source != "" && (c.Claim.Seed == nil || strings.TrimSpace(c.Claim.Seed.From) == "") {
			t.Errorf("%s: no seed.from (the write-up's passage the claim states)", c.where())
		}
	}
	texts := seedTexts(t)
	for _, c := range claims {
		if c.Claim.Seed == nil {
			continue
		}
		from := normalize(c.Claim.Seed.From)
		idx := segmentRE.FindAllStringSubmatchIndex(from, -1)
		if len(idx) == 0 || idx[0][0] != 0 {
			t.Errorf("%s: seed.from %q does not start with the write-up's id (\"000: ...\")", c.where(), c.Claim.Seed.From)
			continue
		}
		for i, m := range idx {
			id := from[m[2]:m[3]]
			end := len(from)
			if i+1 < len(idx) {
				end = idx[i+1][0]
			}
			seg := from[m[1]:end]
			text, ok := texts[id]
			if !ok {
				t.Errorf("%s: seed.from names write-up %s, which is not under %s", c.where(), id, seedsDir())
				continue
			}
			for _, q := range quoteRE.FindAllStringSubmatch(seg, -1) {
				if !strings.Contains(text, q[1]) {
					t.Errorf("%s: the passage %q is not in write-up %s (quote it as the seed writes it)", c.where(), q[1], id)
				}
			}
			have := map[string]bool{}
			for _, n := range numbers(text) {
				have[n] = true
			}
			for _, n := range numbers(quoteRE.ReplaceAllString(seg, "")) {
				if !have[n] {
					t.Errorf("%s: the figure %s is not in write-up %s (seed.from: %q)", c.where(), n, id, c.Claim.Seed.From)
				}
			}
		}
	}
}
