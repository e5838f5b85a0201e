package record

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
)

// Secrets in target logs: a Spring start-up log echoes its properties, the
// log's first line is the target's command (the throw-away PostgreSQL
// password is a -D property of it), and a failed start's last lines are
// kept in run.json's error. The logs in data/ are committed and the error
// is shown on the page, so the same values are redacted everywhere: in the
// logs as the pipeline leaves them (RedactFile), in the error tail, and in
// the published copies.

// secretRE finds values that look like credentials in a log line:
// key=value or key: value for password-like keys, and user:password@ in
// URLs (JDBC and HTTP).
var secretRE = []*regexp.Regexp{
	regexp.MustCompile(`(?i)((?:password|passwd|pwd|secret|token|api[_-]?key|credentials?)["']?\s*[=:]\s*["']?)[^\s"'&;,]+`),
	regexp.MustCompile(`(?i)(://[^/\s:@]+:)[^@\s/]+(@)`),
}

// Redact replaces credential values with [redacted].
func Redact(b []byte) []byte {
	b = secretRE[0].ReplaceAll(b, []byte("${1}[redacted]"))
	return secretRE[1].ReplaceAll(b, []byte("${1}[redacted]${2}"))
}

// RedactFile rewrites a log file with its secrets redacted, line by line
// (a long line in pieces of 1 MiB), atomically. A missing file is no error.
func RedactFile(path string) error {
	f, err := OpenRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(f, 1<<20)
		for {
			line, err := br.ReadSlice('\n')
			if len(line) > 0 {
				if _, werr := pw.Write(Redact(line)); werr != nil {
					return
				}
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				pw.CloseWithError(err)
				return
			}
		}
	}()
	if err := WriteAtomic(path, pr); err != nil {
		pr.CloseWithError(err)
		return fmt.Errorf("redact %s: %w", path, err)
	}
	return nil
}
