package load

import (
	"errors"
	"strings"
	"testing"
)

type parseWant struct {
	status    int
	keepAlive bool
	value     string // captured X-Thread
	rest      int    // bytes left unconsumed after the response (the next response's)
	err       bool
	needEOF   bool // close-delimited: complete only at EOF
}

var parseCases = []struct {
	name string
	why  string
	in   string
	head bool
	want parseWant
}{
	{"content-length", "the common case: fixed body, keep-alive by default in 1.1",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Thread: exec-1\r\n\r\nhello", false,
		parseWant{status: 200, keepAlive: true, value: "exec-1"}},
	{"header case", "header names are case-insensitive, values are kept as sent",
		"HTTP/1.1 200 OK\r\ncontent-LENGTH: 2\r\nx-thread:  Exec-2 \r\n\r\nhi", false,
		parseWant{status: 200, keepAlive: true, value: "Exec-2"}},
	{"bare LF", "some servers end lines with \\n only; RFC 9112 lets clients accept it",
		"HTTP/1.1 200 OK\nContent-Length: 1\n\nx", false,
		parseWant{status: 200, keepAlive: true}},
	{"chunked", "chunk extensions and trailers must be skipped, not taken for the next response",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n", false,
		parseWant{status: 200, keepAlive: true}},
	{"chunked wins", "with both, Transfer-Encoding overrides Content-Length (RFC 9112 6.3)",
		"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false,
		parseWant{status: 200, keepAlive: true}},
	{"close-delimited", "no length and no chunking: the body runs until the server closes",
		"HTTP/1.1 200 OK\r\n\r\nsome body", false,
		parseWant{status: 200, needEOF: true}},
	{"204", "204 has no body even without Content-Length",
		"HTTP/1.1 204 No Content\r\n\r\n", false,
		parseWant{status: 204, keepAlive: true}},
	{"304", "304 has no body even with Content-Length",
		"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", false,
		parseWant{status: 304, keepAlive: true}},
	{"HEAD", "a HEAD answer's Content-Length describes a body that is not sent",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", true,
		parseWant{status: 200, keepAlive: true}},
	{"100 continue", "interim 1xx responses are skipped; the final one counts",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", false,
		parseWant{status: 201, keepAlive: true}},
	{"http/1.0", "1.0 closes after the response unless it says keep-alive",
		"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false,
		parseWant{status: 200}},
	{"http/1.0 keep-alive", "1.0 with Connection: keep-alive stays open",
		"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", false,
		parseWant{status: 200, keepAlive: true}},
	{"connection close", "Connection: close ends keep-alive",
		"HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", false,
		parseWant{status: 503}},
	{"pipelined rest", "bytes after the body belong to the next response and must stay",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1", false,
		parseWant{status: 200, keepAlive: true, rest: 8}},
	{"bad status", "anything but HTTP/1.x is an error, not a hang",
		"SMTP ready\r\n\r\n", false, parseWant{err: true}},
	{"bad code", "the status code is three digits",
		"HTTP/1.1 2x0 OK\r\n\r\n", false, parseWant{err: true}},
	{"conflicting length", "two different lengths make the framing unknowable (request smuggling)",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", false, parseWant{err: true}},
	{"bad chunk", "a chunk size must be hex",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false, parseWant{err: true}},
	{"chunk overrun", "chunk data must end exactly at its size",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc\r\n0\r\n\r\n", false, parseWant{err: true}},
}

// parseAll feeds in as the connection would, split into pieces of at most
// step bytes, keeping unconsumed tails as the worker's buffer does.
func parseAll(in string, step int, head bool) (p *respParser, rest int, done bool, err error) {
	p = &respParser{countHeader: []byte("x-thread")}
	p.reset(head)
	var buf []byte
	for off := 0; off < len(in) || len(buf) > 0; {
		k := min(step, len(in)-off)
		buf = append(buf, in[off:off+k]...)
		off += k
		n, d, e := p.feed(buf)
		buf = buf[n:]
		if e != nil {
			return p, 0, false, e
		}
		if d {
			return p, len(buf) + len(in) - off, true, nil
		}
		if k == 0 {
			break
		}
	}
	return p, 0, p.eof(), nil
}

func TestParse(t *testing.T) {
	for _, tc := range parseCases {
		for _, step := range []int{len(tc.in), 1, 3, 7} {
			p, rest, done, err := parseAll(tc.in, max(step, 1), tc.head)
			if tc.want.err {
				if err == nil || !errors.Is(err, errParse) {
					t.Errorf("%s (step %d): err = %v, want a parse error (%s)", tc.name, step, err, tc.why)
				}
				continue
			}
			if err != nil || !done {
				t.Errorf("%s (step %d): done=%v err=%v, want a complete response (%s)", tc.name, step, done, err, tc.why)
				continue
			}
			got := parseWant{status: p.status, keepAlive: p.keepAlive, value: string(p.value), rest: rest, needEOF: tc.want.needEOF}
			if got != tc.want {
				t.Errorf("%s (step %d): got %+v, want %+v (%s)", tc.name, step, got, tc.want, tc.why)
			}
		}
	}
}

func TestParseLongLine(t *testing.T) {
	// A header line that never ends must fail rather than grow the buffer forever.
	p := &respParser{}
	p.reset(false)
	in := "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", maxLine+10)
	n, _, err := p.feed([]byte(in))
	if !errors.Is(err, errParse) {
		t.Fatalf("feed(%d bytes) = %d, %v; want a parse error", len(in), n, err)
	}
}

func TestParseNoAllocs(t *testing.T) {
	in := []byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Thread: exec-1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
	p := &respParser{countHeader: []byte("x-thread")}
	allocs := testing.AllocsPerRun(100, func() {
		p.reset(false)
		if _, done, err := p.feed(in); !done || err != nil {
			t.Fatalf("done=%v err=%v", done, err)
		}
	})
	if allocs != 0 {
		t.Errorf("parsing a response allocated %v times, want 0 (hot path)", allocs)
	}
}

// FuzzParse checks that the parser never panics and that how the input is
// split across reads never changes the outcome.
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add([]byte(tc.in), uint8(3), tc.head)
	}
	f.Fuzz(func(t *testing.T, in []byte, step uint8, head bool) {
		s := string(in)
		p1, rest1, done1, err1 := parseAll(s, len(s)+1, head)
		p2, rest2, done2, err2 := parseAll(s, int(step%16)+1, head)
		if (err1 == nil) != (err2 == nil) || done1 != done2 {
			t.Fatalf("whole: done=%v err=%v; split by %d: done=%v err=%v", done1, err1, step%16+1, done2, err2)
		}
		if err1 == nil && done1 && (p1.status != p2.status || p1.keepAlive != p2.keepAlive || rest1 != rest2 || string(p1.value) != string(p2.value)) {
			t.Fatalf("whole and split disagree: %d/%v/%d vs %d/%v/%d", p1.status, p1.keepAlive, rest1, p2.status, p2.keepAlive, rest2)
		}
		if done1 && (p1.status < 200 || p1.status > 999) {
			t.Fatalf("completed with status %d", p1.status)
		}
	})
}
