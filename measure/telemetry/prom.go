package telemetry

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ParseError reports lines of Prometheus text that were skipped. ParseProm
// returns it together with the sums of every line it could read, so one bad
// line (a label with a stray quote, a truncated response) costs one series,
// not the whole scrape.
type ParseError struct {
	Skipped   int    // malformed lines
	FirstLine int    // 1-based line number of the first one
	First     string // its text, shortened
	Reason    string // why the first one was rejected
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("prometheus text: skipped %d malformed lines (first: line %d %q: %s); the endpoint may not serve text format 0.0.4",
		e.Skipped, e.FirstLine, e.First, e.Reason)
}

// ParseProm reads the Prometheus text exposition format (what Spring Boot's
// /actuator/prometheus serves) and sums the samples of every series by
// metric name, and also by metric name plus each single label, so that
//
//	m["jvm_memory_used_bytes"]                 is all memory pools together,
//	m[`jvm_memory_used_bytes{area="heap"}`]    only the heap pools,
//	m["jvm_gc_pause_seconds_count"]            every collector's pauses.
//
// Summing is what a per-process number needs: Micrometer splits one counter
// into many series (per GC cause, per pool). NaN samples are left out of the
// sums. Malformed lines are skipped and reported as a *ParseError alongside
// the map; a read error is returned with what was read before it.
func ParseProm(r io.Reader) (map[string]float64, error) {
	m := map[string]float64{}
	var perr *ParseError
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, labels, value, err := parsePromLine(line)
		if err != nil {
			if perr == nil {
				perr = &ParseError{FirstLine: n, First: shorten(line), Reason: err.Error()}
			}
			perr.Skipped++
			continue
		}
		if math.IsNaN(value) {
			continue
		}
		m[name] += value
		for _, l := range labels {
			m[name+"{"+l[0]+"="+strconv.Quote(l[1])+"}"] += value
		}
	}
	if err := sc.Err(); err != nil {
		return m, fmt.Errorf("read prometheus text after line %d: %w", n, err)
	}
	if perr != nil {
		return m, perr
	}
	return m, nil
}

// parsePromLine reads `name{label="value",...} value [timestamp]`.
// Micrometer writes a trailing comma inside the braces; that is accepted.
func parsePromLine(line string) (name string, labels [][2]string, value float64, err error) {
	i := 0
	for i < len(line) && isNameChar(line[i], i == 0) {
		i++
	}
	if i == 0 {
		return "", nil, 0, fmt.Errorf("no metric name")
	}
	name = line[:i]
	if i < len(line) && line[i] == '{' {
		labels, i, err = parseLabels(line, i+1)
		if err != nil {
			return "", nil, 0, err
		}
	}
	rest := strings.Fields(line[i:])
	if len(rest) == 0 || len(rest) > 2 {
		return "", nil, 0, fmt.Errorf("want a value and an optional timestamp after the series, got %d fields", len(rest))
	}
	if i < len(line) && line[i] != ' ' && line[i] != '\t' {
		return "", nil, 0, fmt.Errorf("no space between series and value")
	}
	value, err = strconv.ParseFloat(rest[0], 64)
	if err != nil {
		return "", nil, 0, fmt.Errorf("value %q is not a number", rest[0])
	}
	if len(rest) == 2 {
		if _, err := strconv.ParseInt(rest[1], 10, 64); err != nil {
			return "", nil, 0, fmt.Errorf("timestamp %q is not an integer", rest[1])
		}
	}
	return name, labels, value, nil
}

func isNameChar(c byte, first bool) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
}

// parseLabels reads `a="x",b="y"}` starting after the '{' and returns the
// index after the closing '}'.
func parseLabels(line string, i int) ([][2]string, int, error) {
	var out [][2]string
	for {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if i < len(line) && line[i] == '}' {
			return out, i + 1, nil
		}
		start := i
		for i < len(line) && isNameChar(line[i], i == start) {
			i++
		}
		if i == start {
			return nil, 0, fmt.Errorf("bad label name at column %d", i+1)
		}
		key := line[start:i]
		if i+1 >= len(line) || line[i] != '=' || line[i+1] != '"' {
			return nil, 0, fmt.Errorf("label %s: want =\"value\"", key)
		}
		i += 2
		var val strings.Builder
		closed := false
		for i < len(line) {
			c := line[i]
			if c == '\\' && i+1 < len(line) {
				switch line[i+1] {
				case 'n':
					val.WriteByte('\n')
				case '\\', '"':
					val.WriteByte(line[i+1])
				default:
					return nil, 0, fmt.Errorf("label %s: bad escape \\%c", key, line[i+1])
				}
				i += 2
				continue
			}
			i++
			if c == '"' {
				closed = true
				break
			}
			val.WriteByte(c)
		}
		if !closed {
			return nil, 0, fmt.Errorf("label %s: unterminated value", key)
		}
		out = append(out, [2]string{key, val.String()})
		for i < len(line) && line[i] == ' ' {
			i++
		}
		switch {
		case i < len(line) && line[i] == ',':
			i++
		case i < len(line) && line[i] == '}':
		default:
			return nil, 0, fmt.Errorf("label %s: want ',' or '}' after the value", key)
		}
	}
}

func shorten(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
