package report

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/threadlab/threadlab/pipeline/record"
)

// logCap bounds a published target log: a run can log megabytes (a stack
// trace per failed request), and the page's reader needs the start-up and
// the end. The head and the tail are kept around a marker line.
const (
	logCap  = 256 << 10
	logHead = 64 << 10
)

// secretRE finds values that look like credentials in a log line:
// key=value or key: value for password-like keys, and user:password@ in
// URLs (JDBC and HTTP). The throw-away PostgreSQL password of a run is
// exactly the kind of thing a Spring start-up log echoes.
var secretRE = []*regexp.Regexp{
	regexp.MustCompile(`(?i)((?:password|passwd|pwd|secret|token|api[_-]?key|credentials?)["']?\s*[=:]\s*["']?)[^\s"'&;,]+`),
	regexp.MustCompile(`(?i)(://[^/\s:@]+:)[^@\s/]+(@)`),
}

// redact replaces credential values with [redacted].
func redact(b []byte) []byte {
	b = secretRE[0].ReplaceAll(b, []byte("${1}[redacted]"))
	return secretRE[1].ReplaceAll(b, []byte("${1}[redacted]${2}"))
}

// capLog keeps the first logHead and the last logCap-logHead bytes of a
// log, cut at line ends, with a line saying how much was left out.
func capLog(b []byte) []byte {
	if len(b) <= logCap {
		return b
	}
	head := b[:logHead]
	if i := bytes.LastIndexByte(head, '\n'); i > 0 {
		head = head[:i+1]
	}
	tail := b[len(b)-(logCap-logHead):]
	if i := bytes.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
		tail = tail[i+1:]
	}
	cut := len(b) - len(head) - len(tail)
	var out bytes.Buffer
	out.Write(head)
	fmt.Fprintf(&out, "\n[threadlab: %d bytes left out here; the whole log is in the run directory]\n\n", cut)
	out.Write(tail)
	return out.Bytes()
}

// copyDir publishes the files of one subdirectory of the run (histograms/
// or logs/) next to the page, passing each through edit, and removes
// stale copies. It returns the names copied, sorted.
func copyDir(runDir, dst, sub string, edit func([]byte) []byte) ([]string, error) {
	out := filepath.Join(dst, sub)
	var names []string
	if runDir != "" {
		entries, err := os.ReadDir(filepath.Join(runDir, sub))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("publish %s: %w", sub, err)
		}
		for _, e := range entries {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
				names = append(names, e.Name())
			}
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		os.RemoveAll(out)
		return nil, nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("publish %s: %w", sub, err)
	}
	keep := map[string]bool{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(runDir, sub, n))
		if err != nil {
			return nil, fmt.Errorf("publish %s: %w", sub, err)
		}
		if edit != nil {
			b = edit(b)
		}
		if err := writeFile(filepath.Join(out, n), b); err != nil {
			return nil, fmt.Errorf("publish %s: %w", sub, err)
		}
		keep[n] = true
	}
	old, _ := os.ReadDir(out)
	for _, e := range old {
		if !keep[e.Name()] {
			os.Remove(filepath.Join(out, e.Name()))
		}
	}
	return names, nil
}

// publishExtras copies the trials' histogram logs as they are and the
// target logs capped and redacted, and returns links to them.
func publishExtras(runDir, dst string) (hists, logs []rawLink, err error) {
	hn, err := copyDir(runDir, dst, record.HistogramsDir, nil)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range hn {
		hists = append(hists, rawLink{Name: n, Href: record.HistogramsDir + "/" + url.PathEscape(n)})
	}
	ln, err := copyDir(runDir, dst, record.LogsDir, func(b []byte) []byte { return capLog(redact(b)) })
	if err != nil {
		return nil, nil, err
	}
	for _, n := range ln {
		logs = append(logs, rawLink{Name: n, Href: record.LogsDir + "/" + url.PathEscape(n)})
	}
	return hists, logs, nil
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
