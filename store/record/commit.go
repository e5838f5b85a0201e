package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// CommitsFile is the commit journal of a run: one line per trial, appended
// (and synced) right after the trial's rows reach trials.csv. A trial
// exists only once its commit line does: its series, latency and warm-up
// rows are written before it, so a crash anywhere in between leaves rows
// that no commit line claims, and Repair (on resume) and Read drop them.
//
// A run directory without this file predates the journal; every complete
// trials.csv row of it counts as committed.
const CommitsFile = "commits.csv"

// Commit is one line of commits.csv.
type Commit struct {
	Variant string `csv:"variant"`
	Point   string `csv:"point"`
	Trial   int    `csv:"trial"`
	Seq     int    `csv:"seq"`
	Rows    int    `csv:"rows"` // trials.csv rows the trial wrote, one per request group
}

const commitsHeader = "variant,point,trial,seq,rows\n"

// trialKey names one trial of one cell, the unit a resume redoes.
type trialKey struct {
	variant, point string
	trial          int
}

// commitTrials is the second half of AppendCSV(dir, TrialsFile, rows): one
// commit line per trial in rows, after the rows themselves are synced.
func commitTrials(dir string, rows []Trial) error {
	var commits []Commit
	at := map[trialKey]int{}
	for _, r := range rows {
		k := trialKey{r.Variant, r.Point, r.Trial}
		if i, ok := at[k]; ok {
			commits[i].Rows++
			continue
		}
		at[k] = len(commits)
		commits = append(commits, Commit{Variant: r.Variant, Point: r.Point, Trial: r.Trial, Seq: r.Seq, Rows: 1})
	}
	return appendRows(dir, CommitsFile, commits)
}

// startJournal creates commits.csv (header only) before the first trial
// row is written, so that from then on an absent journal always means a
// run from before journals, never a crash before the first commit.
func startJournal(dir string) error {
	path := filepath.Join(dir, CommitsFile)
	if _, err := os.Stat(path); err == nil || !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return WriteFile(dir, CommitsFile, []byte(commitsHeader))
}

// cutTorn truncates an append-only file to its last complete line, so the
// next append starts on a line of its own instead of being glued onto a
// partial one (a crash, power loss or full disk mid-append). It reports
// how many bytes it cut.
func cutTorn(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return 0, err
	}
	size := st.Size()
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return 0, err
	}
	if last[0] == '\n' {
		return 0, nil // the common case: one byte read
	}
	// Scan back in blocks for the last newline.
	keep := int64(0)
	buf := make([]byte, 64<<10)
	for end := size; end > 0 && keep == 0; {
		start := max(0, end-int64(len(buf)))
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			keep = start + int64(i) + 1
		}
		end = start
	}
	if err := f.Truncate(keep); err != nil {
		return 0, fmt.Errorf("cut the torn last line of %s: %w", f.Name(), err)
	}
	return size - keep, nil
}

// Repaired says what Repair did to a run directory.
type Repaired struct {
	TornBytes map[string]int64 // file -> bytes of a torn last line cut
	Dropped   map[string]int   // file -> rows of uncommitted trials removed
	Legacy    bool             // no journal yet: one was made from trials.csv
}

// String is one line for the run log; empty when nothing was repaired.
func (r Repaired) String() string {
	var parts []string
	for _, name := range appendOnly {
		if n := r.TornBytes[name]; n > 0 {
			parts = append(parts, fmt.Sprintf("cut a torn last line of %d bytes from %s", n, name))
		}
		if n := r.Dropped[name]; n > 0 {
			parts = append(parts, fmt.Sprintf("dropped %d rows of unfinished trials from %s", n, name))
		}
	}
	return strings.Join(parts, "; ")
}

// appendOnly are the files trials append to, in the order they are written.
var appendOnly = []string{WarmupFile, SeriesFile, LatencyFile, TrialsFile, CommitsFile}

// Repair makes a run directory safe to resume after any crash: it cuts
// torn last lines, then keeps in trials.csv, series.csv, latency.csv and
// warmup.csv only the rows of committed trials, so the trials a resume
// redoes leave no duplicate or partial rows behind. Files are rewritten
// atomically and only when something changes.
func Repair(dir string) (Repaired, error) {
	rep := Repaired{TornBytes: map[string]int64{}, Dropped: map[string]int{}}
	for _, name := range appendOnly {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return rep, fmt.Errorf("repair %s: %w", name, err)
		}
		n, err := cutTorn(f)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return rep, fmt.Errorf("repair %s: %w", filepath.Join(dir, name), err)
		}
		rep.TornBytes[name] = n
	}
	done, journal, err := committed(dir)
	if err != nil {
		return rep, err
	}
	if !journal {
		// A run from before the journal: its complete trials.csv rows are
		// its trials. Journal them, so that later appends commit as usual.
		trials, err := ReadCSV[Trial](dir, TrialsFile)
		if err != nil {
			return rep, err
		}
		if err := startJournal(dir); err != nil {
			return rep, err
		}
		if err := commitTrials(dir, trials); err != nil {
			return rep, err
		}
		rep.Legacy = len(trials) > 0
		if done, _, err = committed(dir); err != nil {
			return rep, err
		}
	}
	if err := keepCommitted[Trial](dir, TrialsFile, done, func(r Trial) trialKey { return trialKey{r.Variant, r.Point, r.Trial} }, &rep); err != nil {
		return rep, err
	}
	if err := keepCommitted[Trial](dir, WarmupFile, done, func(r Trial) trialKey { return trialKey{r.Variant, r.Point, r.Trial} }, &rep); err != nil {
		return rep, err
	}
	if err := keepCommitted[Sample](dir, SeriesFile, done, func(r Sample) trialKey { return trialKey{r.Variant, r.Point, r.Trial} }, &rep); err != nil {
		return rep, err
	}
	return rep, keepCommitted[Quantile](dir, LatencyFile, done, func(r Quantile) trialKey { return trialKey{r.Variant, r.Point, r.Trial} }, &rep)
}

// committed reads the journal: the committed trials, and whether there is
// a journal at all.
func committed(dir string) (map[trialKey]bool, bool, error) {
	if _, err := os.Stat(filepath.Join(dir, CommitsFile)); errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	commits, err := ReadCSV[Commit](dir, CommitsFile)
	if err != nil {
		return nil, true, err
	}
	done := make(map[trialKey]bool, len(commits))
	for _, c := range commits {
		done[trialKey{c.Variant, c.Point, c.Trial}] = true
	}
	return done, true, nil
}

// keepCommitted rewrites dir/name without the rows of uncommitted trials.
func keepCommitted[T any](dir, name string, done map[trialKey]bool, key func(T) trialKey, rep *Repaired) error {
	rows, err := ReadCSV[T](dir, name)
	if err != nil || len(rows) == 0 {
		return err
	}
	kept := filterCommitted(rows, done, key)
	if len(kept) == len(rows) {
		return nil
	}
	rep.Dropped[name] = len(rows) - len(kept)
	return WriteCSV(dir, name, kept)
}

func filterCommitted[T any](rows []T, done map[trialKey]bool, key func(T) trialKey) []T {
	kept := rows[:0:0]
	for _, r := range rows {
		if done[key(r)] {
			kept = append(kept, r)
		}
	}
	return kept
}
