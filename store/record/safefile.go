package record

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
)

// A run directory can come from anyone: a pull request commits one, and git
// stores symbolic links. Everything threadlab reads from a run directory to
// render or publish it is therefore opened here, without following a link
// and only when it is a regular file, so `warmup.csv -> ~/.ssh/id_ed25519`
// or `logs -> /etc` never reaches reports/. The run directory itself and
// its logs/ and histograms/ must not be links either (CheckDir).

// MaxMetaBytes bounds a JSON or YAML file of a run read whole (run.json,
// manifest.yaml, fingerprint.json, hostcheck.json, verdicts.json): ours are
// kilobytes, so a larger one is not ours.
const MaxMetaBytes = 16 << 20

// ErrLink is returned for a path that is a symbolic link.
var ErrLink = errors.New("is a symbolic link")

// OpenRegular opens path for reading without following a symbolic link in
// its last element, and only if it is a regular file (not a link, device,
// FIFO or directory). A missing file is an error wrapping os.ErrNotExist.
func OpenRegular(path string) (*os.File, error) {
	// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	// writer; it has no effect on a regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s %w: threadlab reads only regular files in a run directory (replace the link with the file, or delete it)", path, ErrLink)
		}
		return nil, err
	}
	return regular(f, path, "threadlab reads only regular files in a run directory")
}

// regular returns f if it is a regular file, else closes it and says what
// it is, then why (the caller's rule).
func regular(f *os.File, path, why string) (*os.File, error) {
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		kind := "a " + st.Mode().Type().String()
		switch {
		case st.IsDir():
			kind = "a directory"
		case st.Mode()&os.ModeNamedPipe != 0:
			kind = "a named pipe"
		case st.Mode()&os.ModeDevice != 0:
			kind = "a device"
		}
		return nil, fmt.Errorf("%s is %s, not a regular file: %s", path, kind, why)
	}
	return f, nil
}

// ReadRegular reads a regular file through OpenRegular, refusing one larger
// than limit bytes.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	return readCapped(f, path, limit, "far more than threadlab writes: not a file of this run")
}

// readCapped reads f whole, closing it, refusing more than limit bytes;
// tooBig ends the message.
func readCapped(f *os.File, path string, limit int64, tooBig string) ([]byte, error) {
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes, %s", path, limit, tooBig)
	}
	return b, nil
}

// OpenUserFile opens a file a user names on the command line (a
// fingerprint to compare with, a host inventory, a manifest to hash)
// without the two ways such a file took threadlab down: a device that
// never ends (/dev/zero read whole ran a machine out of memory at 24 GB)
// and a named pipe nobody writes to (the open blocked past every signal).
// It must be a regular file; unlike OpenRegular, a link is followed: the
// user named it.
func OpenUserFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return regular(f, path, "pass the file itself")
}

// ReadUserFile reads a regular file a user named (OpenUserFile) of at most
// limit bytes.
func ReadUserFile(path string, limit int64) ([]byte, error) {
	f, err := OpenUserFile(path)
	if err != nil {
		return nil, err
	}
	return readCapped(f, path, limit, "not the kind of file asked for")
}

// CheckDir refuses a directory of a run (the run directory, its logs/ or
// histograms/) that is a symbolic link or not a directory, naming it. A
// missing directory is returned as an error wrapping os.ErrNotExist.
func CheckDir(path string) error {
	path = filepath.Clean(path)
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s %w: threadlab refuses a linked run directory or logs/ or histograms/ (copy the files into place instead)", path, ErrLink)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", path)
	}
	return nil
}

// The names threadlab itself writes under logs/ and histograms/ (the
// target logs of pipeline's logName, the service logs, and
// HistogramLogName). Only these are published: anything else in those
// directories (logs/evil.html, histograms/x.svg) would be served from the
// site's origin as a page of its own, past every escaping of the renderer.
var (
	logNameRE       = regexp.MustCompile(`^([0-9]{3,}-[A-Za-z0-9._-]+\.log|postgres\.log|downstream\.log)$`)
	histogramNameRE = regexp.MustCompile(`^[0-9]{3,}-[A-Za-z0-9._-]+\.hlog$`)
)

// OwnName reports whether name, in the run's subdirectory sub (LogsDir or
// HistogramsDir), is a file name threadlab writes there.
func OwnName(sub, name string) bool {
	switch sub {
	case LogsDir:
		return logNameRE.MatchString(name)
	case HistogramsDir:
		return histogramNameRE.MatchString(name)
	}
	return false
}
