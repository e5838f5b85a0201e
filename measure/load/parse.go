package load

import (
	"bytes"
	"errors"
	"fmt"
)

// respParser reads one HTTP/1.1 response incrementally from whatever bytes
// the connection has delivered so far. It keeps no copy of the body: the
// generator only needs the status, the framing (so the next response on a
// keep-alive connection starts at the right byte) and one header value, so
// body bytes are counted and dropped. It never allocates.
type respParser struct {
	countHeader []byte // lower-case header name whose value is captured; nil = none
	head        bool   // the request was HEAD: no body whatever the headers say

	status    int
	keepAlive bool   // the connection may carry another request after this response
	value     []byte // captured countHeader value (aliases valueBuf)
	hasValue  bool

	state     parseState
	remaining int64 // body bytes left (fixed length) or chunk bytes left
	length    int64 // Content-Length, -1 when absent
	chunked   bool
	closeHdr  bool // Connection: close
	keepHdr   bool // Connection: keep-alive (HTTP/1.0)
	http10    bool
	valueBuf  [maxValue]byte
}

type parseState uint8

const (
	stStatus parseState = iota
	stHeader
	stBody      // fixed-length body, remaining bytes left
	stBodyClose // body delimited by the server closing the connection
	stChunkSize
	stChunkData
	stChunkEnd // the CRLF after a chunk's data
	stTrailer
	stDone
)

const (
	maxLine  = 64 << 10 // longest status, header or chunk-size line accepted
	maxValue = 128      // captured header values are truncated to this
)

// errParse marks responses that are not valid HTTP/1.1; they are counted in
// the "other" error class.
var errParse = errors.New("malformed http response")

func parseErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errParse}, a...)...)
}

// reset prepares the parser for the next response.
func (p *respParser) reset(head bool) {
	p.head = head
	p.status = 0
	p.keepAlive = false
	p.value = nil
	p.hasValue = false
	p.state = stStatus
	p.remaining = 0
	p.length = -1
	p.chunked = false
	p.closeHdr = false
	p.keepHdr = false
	p.http10 = false
}

// feed consumes a prefix of b and reports how many bytes it used and whether
// the response is complete. When it needs more input, the unconsumed tail
// (an incomplete line) must be presented again, followed by new bytes.
func (p *respParser) feed(b []byte) (n int, done bool, err error) {
	for n < len(b) || p.state == stDone {
		switch p.state {
		case stDone:
			return n, true, nil
		case stBody:
			k := int64(len(b) - n)
			if k > p.remaining {
				k = p.remaining
			}
			n += int(k)
			p.remaining -= k
			if p.remaining == 0 {
				p.state = stDone
			}
			continue
		case stBodyClose:
			return len(b), false, nil
		case stChunkData:
			k := int64(len(b) - n)
			if k > p.remaining {
				k = p.remaining
			}
			n += int(k)
			p.remaining -= k
			if p.remaining == 0 {
				p.state = stChunkEnd
			}
			continue
		}
		// Line-oriented states.
		i := bytes.IndexByte(b[n:], '\n')
		if i < 0 {
			if len(b)-n > maxLine {
				return n, false, parseErr("line longer than %d bytes", maxLine)
			}
			return n, false, nil
		}
		if i > maxLine {
			// The same limit whether the line came in one read or many:
			// otherwise how the kernel split the bytes decides validity.
			return n, false, parseErr("line longer than %d bytes", maxLine)
		}
		line := b[n : n+i]
		n += i + 1
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if err := p.line(line); err != nil {
			return n, false, err
		}
	}
	return n, p.state == stDone, nil
}

// eof tells the parser the server closed the connection; it completes a
// close-delimited body and is an error anywhere else.
func (p *respParser) eof() (done bool) {
	if p.state == stBodyClose {
		p.state = stDone
		p.keepAlive = false
		return true
	}
	return p.state == stDone
}

// started reports whether any byte of the response has been parsed.
func (p *respParser) started() bool { return p.state != stStatus }

func (p *respParser) line(line []byte) error {
	switch p.state {
	case stStatus:
		return p.statusLine(line)
	case stHeader:
		if len(line) == 0 {
			return p.endHeaders()
		}
		return p.header(line)
	case stChunkSize:
		size, err := chunkSize(line)
		if err != nil {
			return err
		}
		if size == 0 {
			p.state = stTrailer
		} else {
			p.remaining = size
			p.state = stChunkData
		}
	case stChunkEnd:
		if len(line) != 0 {
			return parseErr("chunk data longer than its size")
		}
		p.state = stChunkSize
	case stTrailer:
		if len(line) == 0 {
			p.state = stDone
		}
	}
	return nil
}

// statusLine parses "HTTP/1.x 200 Reason".
func (p *respParser) statusLine(line []byte) error {
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return parseErr("bad status line %.40q", line)
	}
	switch line[7] {
	case '1':
	case '0':
		p.http10 = true
	default:
		return parseErr("unsupported version %.12q", line)
	}
	c0, c1, c2 := line[9]-'0', line[10]-'0', line[11]-'0'
	if c0 > 9 || c1 > 9 || c2 > 9 || c0 == 0 || (len(line) > 12 && line[12] != ' ') {
		return parseErr("bad status code %.40q", line)
	}
	p.status = int(c0)*100 + int(c1)*10 + int(c2)
	p.state = stHeader
	return nil
}

func (p *respParser) header(line []byte) error {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		if line[0] == ' ' || line[0] == '\t' {
			return nil // obsolete line folding: a continuation, ignored
		}
		return parseErr("header line without colon %.40q", line)
	}
	name := line[:colon]
	value := trimSpace(line[colon+1:])
	switch {
	case equalFold(name, "content-length"):
		v, ok := parseDec(value)
		if !ok {
			return parseErr("bad content-length %.40q", value)
		}
		if p.length >= 0 && p.length != v {
			return parseErr("conflicting content-length headers")
		}
		p.length = v
	case equalFold(name, "transfer-encoding"):
		// chunked must be the final coding (RFC 9112 6.3); anything else is
		// close-delimited.
		p.chunked = hasSuffixFold(value, "chunked")
		if !p.chunked {
			p.closeHdr = true
		}
	case equalFold(name, "connection"):
		if containsTokenFold(value, "close") {
			p.closeHdr = true
		}
		if containsTokenFold(value, "keep-alive") {
			p.keepHdr = true
		}
	}
	if p.countHeader != nil && !p.hasValue && equalFoldBytes(name, p.countHeader) {
		k := copy(p.valueBuf[:], value)
		p.value = p.valueBuf[:k]
		p.hasValue = true
	}
	return nil
}

// endHeaders picks the body framing, following RFC 9112 section 6.3.
func (p *respParser) endHeaders() error {
	if p.status >= 100 && p.status < 200 {
		// Interim response (100 Continue, 103 Early Hints): the real one follows.
		head := p.head
		ch := p.countHeader
		p.reset(head)
		p.countHeader = ch
		return nil
	}
	p.keepAlive = !p.closeHdr && (!p.http10 || p.keepHdr)
	switch {
	case p.head || p.status == 204 || p.status == 304:
		p.state = stDone
	case p.chunked:
		p.state = stChunkSize
	case p.length >= 0:
		p.remaining = p.length
		p.state = stBody
		if p.length == 0 {
			p.state = stDone
		}
	default:
		p.state = stBodyClose
		p.keepAlive = false
	}
	return nil
}

func chunkSize(line []byte) (int64, error) {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i] // chunk extensions are ignored
	}
	line = trimSpace(line)
	if len(line) == 0 || len(line) > 15 {
		return 0, parseErr("bad chunk size %.20q", line)
	}
	var v int64
	for _, c := range line {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, parseErr("bad chunk size %.20q", line)
		}
		v = v<<4 | int64(c)
	}
	return v, nil
}

func parseDec(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// equalFold compares b with the lower-case ASCII string s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if lower(b[i]) != s[i] {
			return false
		}
	}
	return true
}

func equalFoldBytes(b, lowerName []byte) bool {
	if len(b) != len(lowerName) {
		return false
	}
	for i := range b {
		if lower(b[i]) != lowerName[i] {
			return false
		}
	}
	return true
}

func hasSuffixFold(b []byte, s string) bool {
	return len(b) >= len(s) && equalFold(b[len(b)-len(s):], s)
}

// containsTokenFold reports whether the comma-separated list b holds token s.
func containsTokenFold(b []byte, s string) bool {
	for len(b) > 0 {
		i := bytes.IndexByte(b, ',')
		tok := b
		if i >= 0 {
			tok, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if equalFold(trimSpace(tok), s) {
			return true
		}
	}
	return false
}
