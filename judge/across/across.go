// Package across reads the runs of one experiment together and estimates
// each claim's quantity across them, with the run-to-run variance as a
// random effect (Kalibera & Jones 2013's third level: runs, forks,
// iterations; stats.AcrossRuns holds the arithmetic).
//
// Only comparable runs are combined. Two runs are comparable when nothing
// that can move the numbers on its own differs: the same profile and the
// same manifest as run (but for its seed, claims and prose, and, when both
// runs warmed up until steady, their forks and iterations), the same
// topology (one machine, or the same roles on separate hosts), a complete
// state, and no fingerprint difference that env.Compare marks as mattering
// (CPU model and flags, cores, kernel, JDK, JVM flags, cgroup limits,
// library versions). For a multi-host run the target host's fingerprint is
// the one compared, and a field only one side recorded is unknown rather
// than different. A run that is not comparable is listed with its
// reasons instead: the recorded difference is then the explanation for a
// disagreement, not noise.
//
// Data flow: record.ReadHeads (run.json, fingerprint.json, verdicts.json of
// each run) → Of (comparability against the latest run, then one
// stats.AcrossRuns per claim and point that at least two comparable runs
// decided with an estimate) → Result, which render/report renders beside
// the latest run.
package across

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// Result is the across-runs view of an experiment, relative to its latest
// complete run.
type Result struct {
	Latest     string     // the latest complete run's ID
	Comparable []string   // IDs of the runs combined (the latest included), oldest first
	Excluded   []Excluded // runs left out, with why
	Claims     []Claim    // one per claim (and point) estimated in ≥ 2 comparable runs
}

// Excluded is a run left out of the combination.
type Excluded struct {
	Run string
	Why []string
}

// Claim is one claim's quantity across the comparable runs.
type Claim struct {
	ID, Point string
	Runs      []stats.RunEstimate // per run, oldest first
	Across    stats.Across
}

// Read reads the runs of experiment under dataDir and combines them.
func Read(dataDir, experiment string) (*Result, error) {
	heads, err := record.ReadHeads(dataDir, experiment)
	if err != nil {
		return nil, err
	}
	return Of(heads)
}

// Of combines heads (oldest first). With no complete run it returns nil.
func Of(heads []record.Head) (*Result, error) {
	var latest *record.Head
	for i := len(heads) - 1; i >= 0; i-- {
		if heads[i].Meta.State == "complete" {
			latest = &heads[i]
			break
		}
	}
	if latest == nil {
		return nil, nil
	}
	res := &Result{Latest: id(*latest)}
	var kept []record.Head
	for _, h := range heads {
		why, err := Differences(*latest, h)
		if err != nil {
			return nil, err
		}
		if len(why) > 0 {
			res.Excluded = append(res.Excluded, Excluded{Run: id(h), Why: why})
			continue
		}
		kept = append(kept, h)
		res.Comparable = append(res.Comparable, id(h))
	}
	type key struct{ id, point string }
	per := map[key][]stats.RunEstimate{}
	var order []key
	for _, h := range kept {
		for _, v := range h.Verdicts {
			if !(v.Ratio > 0) || v.Status == stats.NotApplicable {
				continue
			}
			k := key{v.ID, v.Point}
			if per[k] == nil {
				order = append(order, k)
			}
			low, high := v.Low, v.High
			if !(low > 0 && high > 0) {
				low, high = math.NaN(), math.NaN()
			}
			per[k] = append(per[k], stats.RunEstimate{Run: id(h), Estimate: v.Ratio, Low: low, High: high, Level: v.Level})
		}
	}
	for _, k := range order {
		if len(per[k]) < 2 {
			continue
		}
		a, err := stats.AcrossRuns(per[k], stats.Alpha)
		if err != nil {
			continue // a non-positive estimate has no log scale; the run's own page shows it
		}
		res.Claims = append(res.Claims, Claim{ID: k.id, Point: k.point, Runs: per[k], Across: a})
	}
	sort.SliceStable(res.Claims, func(i, j int) bool { return res.Claims[i].ID < res.Claims[j].ID })
	return res, nil
}

// Differences lists why run b cannot be combined with run a (empty when it
// can): see the package doc for the rule.
func Differences(a, b record.Head) ([]string, error) {
	var why []string
	if b.Meta.State != "complete" {
		why = append(why, fmt.Sprintf("state %s (only complete runs are combined)", b.Meta.State))
	}
	if a.Meta.Profile != b.Meta.Profile {
		why = append(why, fmt.Sprintf("profile %s, not %s", orDash(b.Meta.Profile), orDash(a.Meta.Profile)))
	}
	if keys := manifestDiff(a.Manifest, b.Manifest); len(keys) > 0 {
		why = append(why, fmt.Sprintf("the manifest as run differs in %s", strings.Join(keys, ", ")))
	}
	if ta, tb := topology(a.Meta), topology(b.Meta); ta != tb {
		why = append(why, fmt.Sprintf("topology %s, not %s", tb, ta))
	}
	fa, err := target(a)
	if err != nil {
		return nil, err
	}
	fb, err := target(b)
	if err != nil {
		return nil, err
	}
	if fa == nil || fb == nil {
		if fa != fb {
			why = append(why, "a fingerprint is missing, so the hosts cannot be compared")
		}
		return why, nil
	}
	for _, d := range env.Compare(fa, fb) {
		// A field one side did not record (a remote host's fingerprint has no
		// target components) is unknown, not different.
		if d.Matters && d.A != "" && d.B != "" {
			why = append(why, fmt.Sprintf("%s %q, not %q", d.Field, d.B, d.A))
		}
	}
	return why, nil
}

// notMeasured are the manifest keys that do not change what a run
// measures: its shuffling seed, its claims (re-judged on the same data) and
// its prose.
var notMeasured = []string{"seed", "claims", "title", "question", "source", "notes", "profiles"}

// replication are the manifest keys that, when both runs warmed up until
// steady, change only how many replicates a run has (Kalibera & Jones'
// lower levels), not what each replicate estimates: a steady fork's later
// iterations measure the same state as its earlier ones, and the run's own
// interval already carries its precision. Under a fixed warm-up the number
// of iterations decides how much warm-up leaks into the median, so there
// they stay measured.
var replication = []string{"forks", "iterations"}

// manifestDiff lists the top-level manifest keys whose values differ
// between two manifests as run, apart from notMeasured, and apart from
// replication when both runs warmed up until steady. A manifest that is
// missing or does not parse is "manifest.yaml" itself.
func manifestDiff(a, b []byte) []string {
	// A field of an older schema that no longer decodes is no reason to
	// call the manifest unreadable: its keys still compare.
	ia, _ := record.ParseManifestInfo(a)
	ib, _ := record.ParseManifestInfo(b)
	ma, mb := ia.Keys, ib.Keys
	if len(ma) == 0 || len(mb) == 0 {
		if bytes.Equal(a, b) {
			return nil
		}
		return []string{record.ManifestFile + " (missing or unreadable)"}
	}
	ignore := notMeasured
	if ia.SteadyOnly() && ib.SteadyOnly() {
		ignore = append(append([]string(nil), notMeasured...), replication...)
	}
	for _, k := range ignore {
		delete(ma, k)
		delete(mb, k)
	}
	keys := map[string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		if !reflect.DeepEqual(ma[k], mb[k]) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// topology names where a run's roles ran: "one machine", or the roles on
// their own hosts.
func topology(m record.Meta) string {
	if m.Hosts == nil || len(m.Hosts.Hosts) == 0 {
		return "one machine"
	}
	var roles []string
	for _, h := range m.Hosts.Hosts {
		roles = append(roles, h.Role)
	}
	sort.Strings(roles)
	return fmt.Sprintf("separate hosts %v", roles)
}

// target returns the fingerprint of the host that ran the target: the
// inventory's target host in a multi-host run, fingerprint.json otherwise.
func target(h record.Head) (*env.Fingerprint, error) {
	raw, name := h.Fingerprint, filepath.Join(h.Dir, record.FingerprintFile)
	if h.Meta.Hosts != nil {
		for _, rh := range h.Meta.Hosts.Hosts {
			if rh.Role == "target" && len(rh.Fingerprint) > 0 {
				raw, name = rh.Fingerprint, filepath.Join(h.Dir, record.RunFile)+" (hosts: target)"
			}
		}
	}
	if len(raw) == 0 {
		return nil, nil
	}
	fp := &env.Fingerprint{}
	if err := json.Unmarshal(raw, fp); err != nil {
		return nil, fmt.Errorf("%s: not a fingerprint: %w (rewrite it with threadlab fingerprint --json, or delete it)", name, err)
	}
	return fp, nil
}

func id(h record.Head) string {
	if h.Meta.ID != "" {
		return h.Meta.ID
	}
	return filepath.Base(h.Dir)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
