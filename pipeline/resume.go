package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/threadlab/threadlab/env"
	"github.com/threadlab/threadlab/store/record"
)

// A resumed run must go on measuring what it started measuring: its
// trials all come from one threadlab version (run.json records one) and
// from a machine whose fingerprint matches the start's in every field
// that can move the numbers (env.Compare's Matters). Otherwise the run
// would publish one version and one fingerprint for trials that came from
// two. Each resume is recorded (run.json's resumes) and named in the
// page's Method.

// resumeVersion refuses to continue a run that another threadlab version
// started.
func resumeVersion(dir, have, started string) error {
	if have == started {
		return nil
	}
	commit := strings.TrimSuffix(started, "-dirty")
	fix := fmt.Sprintf("build threadlab %s (git worktree add /tmp/threadlab-%s %s && make -C /tmp/threadlab-%s build) and resume with its bin/threadlab, run from that worktree so its targets are built from the same commit", started, commit, commit, commit)
	if strings.HasSuffix(started, "-dirty") {
		fix = "a -dirty version cannot be rebuilt exactly: start a new run from a committed tree"
	}
	return fmt.Errorf("resume %s: this is threadlab %s, but the run was started by threadlab %s; every trial of a run must come from the version run.json names: %s", dir, have, started, fix)
}

// noteResume records a continuation in run.json.
func (s *State) noteResume(host string) {
	s.Meta.Resumes = append(s.Meta.Resumes, record.Resume{
		At: time.Now().UTC().Format(time.RFC3339), Done: len(s.Done), Of: len(s.Jobs), Host: host,
	})
}

// resumedFingerprint compares the fingerprint taken on resume with the
// one the run started on. It returns the differences that matter as an
// error; the start's fingerprint.json stays as it is either way (it
// describes the trials already taken, and a match describes the rest).
// keep reports whether there was a start fingerprint to keep.
func (s *State) resumedFingerprint(now *env.Fingerprint) (keep bool, err error) {
	var start env.Fingerprint
	if err := record.ReadJSON(s.Dir, record.FingerprintFile, &start); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil // interrupted before its fingerprint: take this one
		}
		return true, fmt.Errorf("resume: %s: %w", record.FingerprintFile, err)
	}
	var major []string
	for _, d := range env.Compare(&start, now) {
		if d.Matters {
			major = append(major, fmt.Sprintf("%s %q at the start, %q now", d.Field, d.A, d.B))
		}
	}
	if len(major) > 0 {
		if n := len(s.Meta.Resumes); n > 0 {
			s.Meta.Resumes = s.Meta.Resumes[:n-1] // refused: not a continuation
		}
		return true, fmt.Errorf("resume %s: this machine is not the one the run started on: %s; trials from two machines are not one run: resume it where it started, or start a new run here", s.Dir, strings.Join(major, "; "))
	}
	return true, nil
}
