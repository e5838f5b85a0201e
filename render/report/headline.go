package report

import (
	"os"
	"path/filepath"

	"github.com/threadlab/threadlab/store/record"
)

// This file picks the run an experiment's pages headline: the run its
// newest manifest names (headline: <run-id>), else the newest complete
// single-host run with verdicts, else the newest complete run with
// verdicts, else the newest with verdicts. A multi-host run (run.json's
// hosts) is not the headline by default: its hosts may be network
// namespaces on one machine, and its noise checks differ; it stays listed
// beside the headline with its fingerprint.

// headlineRun is what the choice needs of a run.
type headlineRun struct {
	id        string
	complete  bool
	verdicts  bool
	multiHost bool
	named     string // the headline its manifest names, "" for none
}

// pickHeadline returns the index of the headline run (runs in time
// order), -1 when none has verdicts.
func pickHeadline(runs []headlineRun) int {
	if len(runs) == 0 {
		return -1
	}
	if named := runs[len(runs)-1].named; named != "" {
		for i, r := range runs {
			if r.id == named && r.verdicts {
				return i
			}
		}
	}
	for _, ok := range []func(headlineRun) bool{
		func(r headlineRun) bool { return r.verdicts && r.complete && !r.multiHost },
		func(r headlineRun) bool { return r.verdicts && r.complete },
		func(r headlineRun) bool { return r.verdicts },
	} {
		for i := len(runs) - 1; i >= 0; i-- {
			if ok(runs[i]) {
				return i
			}
		}
	}
	return -1
}

// headlineOf reads what pickHeadline needs from a run directory: run.json,
// whether verdicts.json has content, and the manifest's headline.
func headlineOf(dir string) headlineRun {
	h := headlineRun{id: filepath.Base(filepath.Clean(dir))}
	var meta record.Meta
	if record.ReadJSON(dir, record.RunFile, &meta) != nil {
		return h
	}
	if meta.ID != "" {
		h.id = meta.ID
	}
	h.complete, h.multiHost = meta.State == "complete", meta.Hosts != nil
	if st, err := os.Lstat(filepath.Join(dir, record.VerdictsFile)); err == nil && st.Mode().IsRegular() && st.Size() > 2 {
		h.verdicts = true
	}
	if b, err := record.ReadRegular(filepath.Join(dir, record.ManifestFile), record.MaxMetaBytes); err == nil {
		if m, err := record.ParseManifestInfo(b); err == nil {
			h.named = m.Headline
		}
	}
	return h
}
