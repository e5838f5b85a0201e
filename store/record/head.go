package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// Head is what a run says about itself without its measurements: its
// run.json, its manifest as run, its fingerprint and its verdicts. Reading the runs of an
// experiment together (judge/across: run-to-run variance) needs only
// these, so it does not load every run's trials and series.
type Head struct {
	Dir         string
	Meta        Meta
	Manifest    []byte          // manifest.yaml as run; nil when absent
	Fingerprint json.RawMessage // fingerprint.json; nil when absent
	Verdicts    []Verdict       // verdicts.json; nil when absent
}

// ReadHead reads a run directory's head.
func ReadHead(dir string) (Head, error) {
	h := Head{Dir: dir}
	if err := ReadJSON(dir, RunFile, &h.Meta); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Head{}, fmt.Errorf("%s is not a threadlab run directory (no %s): pass data/<experiment>/<run-id>", dir, RunFile)
		}
		return Head{}, err
	}
	var err error
	if h.Manifest, err = readOptional(dir, ManifestFile); err != nil {
		return Head{}, err
	}
	fp, err := readOptional(dir, FingerprintFile)
	if err != nil {
		return Head{}, err
	}
	if len(fp) > 0 {
		h.Fingerprint = fp
	}
	if err := ReadJSON(dir, VerdictsFile, &h.Verdicts); err != nil && !errors.Is(err, os.ErrNotExist) {
		return Head{}, err
	}
	return h, nil
}

// ReadHeads reads the heads of every run of an experiment under dataDir,
// oldest first (see Runs).
func ReadHeads(dataDir, experiment string) ([]Head, error) {
	dirs, err := Runs(dataDir, experiment)
	if err != nil {
		return nil, err
	}
	var out []Head
	for _, d := range dirs {
		h, err := ReadHead(d)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}
