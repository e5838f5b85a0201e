package report

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"

	"github.com/threadlab/threadlab/judge/diff"
	"github.com/threadlab/threadlab/store/record"
)

// CompareFile is the comparison page of a run against the previous run of
// its experiment, written next to the run's page.
const CompareFile = "compare.html"

// compareLink is what a run page says about its comparison page.
type compareLink struct {
	Href, OldID string
	SameHost    bool // the fingerprints agree on everything that can move the numbers
}

// previousRun finds the run a run is compared with: the latest earlier run
// of the same experiment on the same fingerprint (nothing that can move
// the numbers differs), else the latest earlier run, flagged as from
// another host. Runs without trials are skipped.
func previousRun(r *record.Run) (*record.Run, *diff.Result, bool) {
	if r.Dir == "" {
		return nil, nil, false
	}
	parent := filepath.Dir(filepath.Clean(r.Dir))
	dirs, err := record.Runs(filepath.Dir(parent), filepath.Base(parent))
	if err != nil {
		return nil, nil, false
	}
	self := filepath.Base(filepath.Clean(r.Dir))
	var fallback *record.Run
	var fallbackRes *diff.Result
	for i := len(dirs) - 1; i >= 0; i-- {
		if filepath.Base(dirs[i]) >= self {
			continue
		}
		old, err := record.Read(dirs[i])
		if err != nil || len(old.Trials) == 0 {
			continue
		}
		res, err := diff.Runs(old, r, diff.Options{})
		if err != nil {
			continue
		}
		if len(res.Mismatch()) == 0 && len(res.NoFingerprint) == 0 {
			return old, res, true
		}
		if fallback == nil {
			fallback, fallbackRes = old, res
		}
	}
	return fallback, fallbackRes, false
}

// writeCompare renders dir/compare.html for r against its previous run,
// or removes a stale one when there is none.
func writeCompare(r *record.Run, dir string) (*compareLink, error) {
	path := filepath.Join(dir, CompareFile)
	old, res, same := previousRun(r)
	if old == nil {
		os.Remove(path)
		return nil, nil
	}
	oldID := runID(old)
	var b bytes.Buffer
	links := diff.Links{Up: "../../index.html", Old: "../" + url.PathEscape(oldID) + "/index.html", New: "index.html"}
	if rendered != nil {
		rendered(path, "compare", res)
	}
	if err := res.HTML(&b, links); err != nil {
		return nil, err
	}
	if err := writeFile(path, b.Bytes()); err != nil {
		return nil, err
	}
	return &compareLink{Href: CompareFile, OldID: oldID, SameHost: same}, nil
}
