package seeds

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
)

var update = flag.Bool("update", false, "rewrite METHODOLOGY.md's seed tables from claims.csv")

const methodology = "../../METHODOLOGY.md"

// TestSeedTablesInMethodology: METHODOLOGY.md's seed tables are claims.csv,
// rendered; -update rewrites them.
func TestSeedTablesInMethodology(t *testing.T) {
	claims, err := All()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(methodology)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Replace(string(doc), Markdown(claims))
	if err != nil {
		t.Fatal(err)
	}
	if want == string(doc) {
		return
	}
	if *update {
		if err := os.WriteFile(methodology, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("METHODOLOGY.md's seed tables differ from %s: edit the CSV (the one source), then run go test ./experiments/seeds -update", File)
}

// TestSeedRefsExist: every experiment/claim-id in the inventory is a claim of
// that manifest, in its base or one of its profiles, and every claim row
// names one (issue 11: each statement is a manifest claim, a precondition,
// a design rule or not encoded with the reason; none is left to write).
func TestSeedRefsExist(t *testing.T) {
	claims, err := All()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]map[string]bool{}
	known := func(exp string) map[string]bool {
		if m, ok := ids[exp]; ok {
			return m
		}
		set := map[string]bool{}
		ids[exp] = set
		path := filepath.Join("..", exp+".yaml")
		base, err := experiments.Load(path, "")
		if base == nil {
			t.Errorf("%s: %v", path, err)
			return set
		}
		for _, p := range experiments.ProfileNames(base) {
			m, _ := experiments.Load(path, p)
			if m == nil {
				continue // the profile's own problems are TestCatalog's
			}
			for _, c := range m.Claims {
				set[c.ID] = true
			}
		}
		return set
	}
	var pending []string
	for _, c := range claims {
		for _, ref := range c.Claims {
			exp, id, _ := strings.Cut(ref, "/")
			if !known(exp)[id] {
				t.Errorf("%s %s: %s names no claim of experiments/%s.yaml (fix the ref in %s)", File, c.ID, ref, exp, File)
			}
		}
		if c.Kind == KindClaim && len(c.Claims) == 0 {
			pending = append(pending, c.ID)
		}
	}
	if len(pending) > 0 {
		t.Errorf("%s: claim rows without a manifest claim: %s (write the claim and name it, or make the row a precondition, a design rule or not-encoded with the reason)",
			File, strings.Join(pending, ", "))
	}
}

// TestSeedParse: what a broken inventory says, a row per mistake.
func TestSeedParse(t *testing.T) {
	const head = "id,says,figure,kind,claims,where\n"
	tests := []struct {
		name, why, csv string
		want           []string // fragments of the error; none: valid
	}{
		{"valid", "a claim, a precondition, a design rule and a not-encoded row",
			head + "000.1,virtual wins,1.27x,claim,io-bound/virtual-beats-platform,io-bound/virtual-beats-platform\n" +
				"001.6,CPU is the limit,~80%,precondition,concurrency-sweep/virtual-not-thread-capped,precondition of it\n" +
				"001.5a,\"users / 0.1 s, below the limit\",\"5,000 rps\",claim,,still to be written\n" +
				"000.5,one trial swings,795 to 1247 ms,design,,the noise flags\n002.10,GC counts,1.5x,not-encoded,,not encoded: no column\n", nil},
		{"header", "the columns are fixed", "id,says,figure,kind,refs,where\n000.1,a,b,claim,,w\n", []string{"claims.csv:1: the header must be id,says,figure,kind,claims,where"}},
		{"field count", "an unquoted comma splits a field", head + "000.1,a, b,c,claim,,w\n", []string{"claims.csv", "quoted where they hold commas"}},
		{"bad id", "ids are write-up.number", head + "0.1,a,b,claim,,w\n", []string{"claims.csv:2: id: \"0.1\" is not a seed claim id"}},
		{"unknown write-up", "there are five seeds", head + "007.1,a,b,claim,,w\n", []string{"claims.csv:2: id: 007.1 names no write-up (the seeds are 000, 001, 002, 003, 004)"}},
		{"duplicate", "each statement once", head + "000.1,a,b,claim,,w\n000.1,c,d,claim,,w\n", []string{"claims.csv:3: id: 000.1 is listed on line 2 already"}},
		{"bad kind", "kinds are a closed set", head + "000.1,a,b,manifest,,w\n", []string{`claims.csv:2: kind: "manifest" is not a kind (use claim, precondition, design, not-encoded)`}},
		{"bad ref", "a ref is experiment/claim-id", head + "000.1,a,b,claim,virtual-beats-platform,w\n", []string{`claims.csv:2: claims: "virtual-beats-platform" is not experiment/claim-id`}},
		{"precondition without claims", "a precondition lives on some claim", head + "004.5,a,b,precondition,,w\n", []string{"claims.csv:2: claims: a precondition names the claims"}},
		{"empty fields", "every row says something, has a figure and a place", head + "000.1, , ,claim,, \n", []string{"says: empty", "figure: empty", "where: empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse("claims.csv", []byte(tt.csv))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("%s: %v", tt.why, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("%s: no error", tt.why)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s:\n got: %v\nwant: %s", tt.why, err, w)
				}
			}
		})
	}
}

// TestSeedMarkdownCells: a value with a pipe or a line break stays in its cell.
func TestSeedMarkdownCells(t *testing.T) {
	md := Markdown([]Claim{{ID: "000.1", Says: "a | b", Figure: "two\nlines", Kind: KindClaim, Where: "w"}})
	if !strings.Contains(md, `| 000.1 | a \| b | two lines | w |`) {
		t.Errorf("row not kept on one line with its pipe escaped:\n%s", md)
	}
	if _, err := Replace("no markers here", md); err == nil {
		t.Error("a METHODOLOGY.md without the markers must be an error, not a silent no-op")
	}
}

// TestSeedNotEncodedList: the generated section counts the kinds and lists
// every not-encoded statement, and only those, with its reason.
func TestSeedNotEncodedList(t *testing.T) {
	claims := []Claim{
		{ID: "000.1", Says: "virtual wins", Figure: "1.27x", Kind: KindClaim, Claims: []string{"io-bound/virtual-beats-platform"}, Where: "io-bound/virtual-beats-platform"},
		{ID: "000.5", Says: "one trial swings", Figure: "795 to 1247 ms", Kind: KindDesign, Where: "the noise flags"},
		{ID: "000.17", Says: "range honours backpressure", Figure: "StepVerifier", Kind: KindNotEncoded, Where: "not encoded: a functional property"},
		{ID: "004.5", Says: "the CPUs saturated", Figure: "366%", Kind: KindPrecondition, Claims: []string{"reactor-parallel/x"}, Where: "precondition of x"},
	}
	md := Markdown(claims)
	if !strings.Contains(md, "4 statements: 1 manifest claims, 1 preconditions, 1 design rules, 1 not encoded.") {
		t.Errorf("no count by kind:\n%s", md)
	}
	_, list, ok := strings.Cut(md, "### Not encoded, and why\n")
	if !ok {
		t.Fatalf("no not-encoded list:\n%s", md)
	}
	if !strings.Contains(list, "| 000.17 | range honours backpressure | StepVerifier | not encoded: a functional property |") {
		t.Errorf("the not-encoded row is missing or lacks its reason:\n%s", list)
	}
	for _, id := range []string{"000.1", "000.5", "004.5"} {
		if strings.Contains(list, "| "+id+" |") {
			t.Errorf("%s is not a not-encoded row, yet the list holds it:\n%s", id, list)
		}
	}
}
