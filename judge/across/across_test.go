package across

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/store/record"
)

func head(t *testing.T, id, state, profile, cpu string, ratios ...float64) record.Head {
	t.Helper()
	fp, err := json.Marshal(env.Fingerprint{CPU: env.CPU{Model: cpu, Cores: 2}})
	if err != nil {
		t.Fatal(err)
	}
	h := record.Head{Dir: "data/x/" + id, Meta: record.Meta{ID: id, State: state, Profile: profile}, Fingerprint: fp,
		Manifest: []byte("name: x\niterations: 3\nseed: " + id + "\nclaims: [{id: " + id + "}]\n")}
	for _, r := range ratios {
		h.Verdicts = append(h.Verdicts, record.Verdict{ID: "c", Status: "supported", Ratio: r})
	}
	return h
}

// TestOf: comparable runs are combined per claim; another profile, CPU or
// an unfinished run is excluded with its reason.
func TestOf(t *testing.T) {
	heads := []record.Head{
		head(t, "r1", "complete", "default", "EPYC", math.Exp(0.5)),
		head(t, "r2", "complete", "smoke", "EPYC", 9),
		head(t, "r3", "complete", "default", "Xeon", 9),
		head(t, "r4", "complete", "default", "EPYC", math.Exp(0.7)),
		head(t, "r5", "interrupted", "default", "EPYC", 9),
		head(t, "r6", "complete", "default", "EPYC", 9),
		head(t, "r7", "complete", "default", "EPYC", math.Exp(0.7)),
	}
	// r6 measured another design; r7 differs from r4 only in seed and claims.
	heads[5].Manifest = []byte("name: x\niterations: 9\nseed: 6\n")
	res, err := Of(heads)
	if err != nil {
		t.Fatal(err)
	}
	if res.Latest != "r7" || strings.Join(res.Comparable, ",") != "r1,r4,r7" {
		t.Fatalf("latest %s comparable %v, want r7 and r1,r4,r7", res.Latest, res.Comparable)
	}
	want := map[string]string{"r2": "profile smoke", "r3": `cpu.model "Xeon"`, "r5": "state interrupted",
		"r6": "the manifest as run differs in iterations"}
	for _, e := range res.Excluded {
		if !strings.Contains(strings.Join(e.Why, "; "), want[e.Run]) {
			t.Errorf("%s excluded for %v, want %q", e.Run, e.Why, want[e.Run])
		}
		delete(want, e.Run)
	}
	if len(want) > 0 {
		t.Errorf("not excluded: %v", want)
	}
	// θ = 0.5, 0.7, 0.7 → geometric mean e^(1.9/3) (stats.TestAcrossRuns has intervals by hand).
	if len(res.Claims) != 1 || math.Abs(res.Claims[0].Across.Estimate-math.Exp(1.9/3)) > 1e-9 {
		t.Errorf("claims %+v, want one at e^(1.9/3)", res.Claims)
	}
}

// TestManifestDiffReplication: forks and iterations count as replication,
// not as what is measured, only when both runs warmed up until steady and
// no variant measured its start.
func TestManifestDiffReplication(t *testing.T) {
	const steady = "load: {burst: 600, warmup: {min: 5s, max: 1m0s, until: steady}}\n"
	const fixed = "load: {burst: 600, warmup: {min: 5s}}\n"
	const warm = "variants: {a: {target: t}, b: {target: t}}\n"
	const cold = "variants: {a: {target: t}, b: {target: t, measure: cold}}\n"
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{"until steady on both: more forks and iterations are more replicates of one measurement",
			steady + warm + "forks: 5\niterations: 136\n", steady + warm + "forks: 6\niterations: 176\n", ""},
		{"a fixed warm-up: the iteration count decides how much warm-up is in the median",
			fixed + warm + "forks: 5\niterations: 3\n", fixed + warm + "forks: 5\niterations: 9\n", "iterations"},
		{"until steady on one side only: the warm-up itself differs too",
			steady + warm + "iterations: 136\n", fixed + warm + "iterations: 176\n", "iterations, load"},
		{"a variant measures its start: its median depends on how many warm iterations follow",
			steady + cold + "iterations: 10\n", steady + cold + "iterations: 20\n", "iterations"},
		{"until steady, but the load differs: still another measurement",
			steady + warm + "iterations: 10\n", strings.Replace(steady, "600", "900", 1) + warm + "iterations: 20\n", "load"},
		{"until steady, same replication: nothing differs",
			steady + warm + "forks: 5\niterations: 10\nseed: 1\n", steady + warm + "forks: 5\niterations: 10\nseed: 2\n", ""},
	} {
		if got := strings.Join(manifestDiff([]byte(tc.a), []byte(tc.b)), ", "); got != tc.want {
			t.Errorf("%s: differs in %q, want %q", tc.name, got, tc.want)
		}
	}
}
