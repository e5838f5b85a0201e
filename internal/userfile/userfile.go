// Package userfile opens and reads files a user names on the command line
// (a fingerprint to compare with, a host inventory, a manifest to hash)
// without the two ways such a file can take threadlab down: a device that
// never ends (/dev/zero read whole ran a machine out of memory at 24 GB),
// and a named pipe nobody writes to (the open blocks past every signal).
// Links are followed: the user named the file. It imports nothing of
// ours.
package userfile

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// Open opens path for reading without waiting on a named pipe, and
// refuses anything but a regular file, saying what it is.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
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
		return nil, fmt.Errorf("%s is %s, not a regular file (pass the file itself)", path, kind)
	}
	return f, nil
}

// Read reads a regular file of at most limit bytes (Open), naming the
// limit when the file is larger.
func Read(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes: not the kind of file asked for", path, limit)
	}
	return b, nil
}
