package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/threadlab/threadlab/store/record"
)

// logCap bounds a published target log: a run can log megabytes (a stack
// trace per failed request), and the page's reader needs the start-up and
// the end. The head and the tail are kept around a marker line.
const (
	logCap  = 256 << 10
	logHead = 64 << 10
)

// redact replaces credential values with [redacted] (record.Redact: the
// same rules as the logs in data/ and run.json's error).
func redact(b []byte) []byte { return record.Redact(b) }

// capLog keeps the first logHead and the last logCap-logHead bytes of a
// log, cut at line ends, with a line saying how much was left out.
func capLog(b []byte) []byte {
	if len(b) <= logCap {
		return b
	}
	return capParts(b[:logHead], b[len(b)-(logCap-logHead):], len(b))
}

// capParts joins a log's head and tail, cut at line ends, around a line
// saying how many of its total bytes were left out.
func capParts(head, tail []byte, total int) []byte {
	if i := bytes.LastIndexByte(head, '\n'); i > 0 {
		head = head[:i+1]
	}
	if i := bytes.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
		tail = tail[i+1:]
	}
	cut := total - len(head) - len(tail)
	var out bytes.Buffer
	out.Write(head)
	fmt.Fprintf(&out, "\n[threadlab: %d bytes left out here; the whole log is in the run directory]\n\n", cut)
	out.Write(tail)
	return out.Bytes()
}

// readLog reads what capLog keeps of a log file, without reading the
// rest: a target log can be gigabytes.
func readLog(f *os.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size <= logCap {
		return io.ReadAll(io.LimitReader(f, logCap))
	}
	head := make([]byte, logHead)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, err
	}
	tail := make([]byte, logCap-logHead)
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil {
		return nil, err
	}
	return capParts(head, tail, int(size)), nil
}

// copyDir publishes the files of one subdirectory of the run (histograms/
// or logs/) next to the page and removes stale copies. It returns the
// names copied, sorted, and a warning per file left out. Only regular files
// with a name threadlab writes there are published (record.OwnName): any
// other file would be served from the site as content of its own. A
// subdirectory that is a link is refused. Logs are capped and redacted;
// histogram logs are copied as they are, streamed.
func copyDir(runDir, dst, sub string) (names, skipped []string, err error) {
	out := filepath.Join(dst, sub)
	src := filepath.Join(runDir, sub)
	if runDir != "" {
		err := record.CheckDir(src)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("publish %s: %w", sub, err)
		}
		entries, err := os.ReadDir(src)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("publish %s: %w", sub, err)
		}
		for _, e := range entries {
			switch {
			case strings.HasPrefix(e.Name(), "."):
			case !e.Type().IsRegular():
				skipped = append(skipped, fmt.Sprintf("%s not published: not a regular file (%s)", filepath.Join(src, e.Name()), e.Type()))
			case !record.OwnName(sub, e.Name()):
				skipped = append(skipped, fmt.Sprintf("%s not published: threadlab does not write that name in %s/", filepath.Join(src, e.Name()), sub))
			default:
				names = append(names, e.Name())
			}
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		os.RemoveAll(out)
		return nil, skipped, nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, nil, fmt.Errorf("publish %s: %w", sub, err)
	}
	keep := map[string]bool{}
	for _, n := range names {
		if err := publishFile(filepath.Join(src, n), filepath.Join(out, n), sub == record.LogsDir); err != nil {
			return nil, nil, fmt.Errorf("publish %s: %w", sub, err)
		}
		keep[n] = true
	}
	old, _ := os.ReadDir(out)
	for _, e := range old {
		if !keep[e.Name()] {
			os.Remove(filepath.Join(out, e.Name()))
		}
	}
	return names, skipped, nil
}

// publishFile copies one regular file (never a link) to dst; a log capped
// and redacted.
func publishFile(src, dst string, log bool) error {
	f, err := record.OpenRegular(src)
	if err != nil {
		return err
	}
	defer f.Close()
	if !log {
		return record.WriteAtomic(dst, f)
	}
	b, err := readLog(f)
	if err != nil {
		return fmt.Errorf("read %s: %w", src, err)
	}
	return writeFile(dst, redact(b))
}

// publishExtras copies the trials' histogram logs as they are and the
// target logs capped and redacted, and returns links to them and a warning
// per file it left out.
func publishExtras(runDir, dst string) (hists, logs []rawLink, skipped []string, err error) {
	hn, hs, err := copyDir(runDir, dst, record.HistogramsDir)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, n := range hn {
		hists = append(hists, rawLink{Name: n, Href: record.HistogramsDir + "/" + url.PathEscape(n)})
	}
	ln, ls, err := copyDir(runDir, dst, record.LogsDir)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, n := range ln {
		logs = append(logs, rawLink{Name: n, Href: record.LogsDir + "/" + url.PathEscape(n)})
	}
	return hists, logs, append(hs, ls...), nil
}

// publishedLinks lists what a rendered run directory already holds (for
// the experiment's latest copy, which links one level down).
func publishedLinks(dir, prefix string) (hists, logs []rawLink) {
	for _, s := range []struct {
		sub string
		dst *[]rawLink
	}{{record.HistogramsDir, &hists}, {record.LogsDir, &logs}} {
		entries, _ := os.ReadDir(filepath.Join(dir, s.sub))
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".") {
				*s.dst = append(*s.dst, rawLink{Name: e.Name(), Href: prefix + s.sub + "/" + url.PathEscape(e.Name())})
			}
		}
	}
	return hists, logs
}
