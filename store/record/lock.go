package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// LockFile is the advisory lock of a run directory: a run or a resume holds
// flock(LOCK_EX) on it from the directory's creation (or the resume's
// start) to its end, so two writers never mix their trials in one
// directory. The kernel drops the lock when the process dies, so a killed
// run never leaves a stale lock. The file is never removed: unlinking a
// lock file another process has open would let a third lock a new inode
// beside it. It holds the holder's pid and start time for the message.
const LockFile = ".lock"

// Lock takes the run directory's lock without waiting, and returns the
// function that releases it. A directory locked by another process is an
// error saying who holds it.
func Lock(dir string) (release func(), err error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock run directory %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := strings.TrimSpace(string(holder))
			if who == "" {
				who = "another process"
			}
			return nil, fmt.Errorf("run directory %s is in use by another threadlab (%s): one writer per run directory; wait for it to end, then resume with --resume %s if it stopped early", dir, who, dir)
		}
		return nil, fmt.Errorf("lock run directory %s: %w", dir, err)
	}
	// Say who holds it; a failure here costs only the message.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte("pid "+strconv.Itoa(os.Getpid())+", since "+time.Now().UTC().Format(time.RFC3339)+"\n"), 0)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

var runIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// CheckRunID refuses a run id that is not a plain directory name: no path
// separators, no "..", no leading dot or dash, at most 100 characters.
// `--run-id a/../../escaped` would otherwise write outside data/<exp>/.
func CheckRunID(id string) error {
	if len(id) > 100 || !runIDRE.MatchString(id) || strings.Contains(id, "..") {
		return fmt.Errorf("run id %q is not a plain name: use letters, digits, '.', '_' and '-' (no '/', no '..', not starting with '.' or '-'), e.g. 20260301T101500Z or pool-try2", id)
	}
	return nil
}
