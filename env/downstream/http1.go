package downstream

// The HTTP/1.1 subset spoken here is what the targets' HTTP clients send
// (JDK HttpClient, Apache HttpClient 5, HttpURLConnection, Reactor Netty):
// GET or HEAD, keep-alive by default, HTTP/1.0 with or without keep-alive,
// pipelined requests answered in order, a Content-Length body skipped. An
// "Upgrade: h2c" offer (the JDK client's default) is ignored, which the
// client takes as "stay on HTTP/1.1". Anything else gets a precise 4xx/5xx
// and the connection is closed, so a misbehaving client fails loudly instead
// of being measured.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

const (
	maxHeaderLines = 100     // more is an abuse or a bug, answered 431
	maxBody        = 1 << 20 // a GET body larger than this is answered 413
)

// request is the part of an HTTP request the service acts on.
type request struct {
	get       bool   // GET or HEAD; anything else is answered 405
	head      bool   // HEAD: headers without the body
	path      []byte // request target without the query; owned by the caller's scratch buffer
	close     bool   // close the connection after the answer
	keepAlive bool   // HTTP/1.0 client that asked for keep-alive: say yes in the answer
}

// protocolError is a request this server will not serve; the status is sent
// and the connection closed.
type protocolError struct {
	status int
	msg    []byte
}

func (e *protocolError) Error() string { return fmt.Sprintf("%d %s", e.status, e.msg) }

func badRequest(status int, msg string) error {
	return &protocolError{status: status, msg: []byte(`{"error":"` + msg + `"}`)}
}

// readRequest reads one request head (and skips its body) from r. The path is
// appended to scratch[:0] because r's buffer is reused by the next read. A
// client closing an idle connection returns io.EOF.
func readRequest(r *bufio.Reader, scratch []byte) (request, error) {
	var line []byte
	var err error
	// RFC 9112 section 2.2: ignore empty lines before the request line.
	for range 4 {
		if line, err = readLine(r); err != nil || len(line) > 0 {
			break
		}
	}
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return request{}, badRequest(414, "request line longer than 4096 bytes")
		}
		return request{}, err
	}
	method, rest, ok1 := bytes.Cut(line, []byte(" "))
	target, version, ok2 := bytes.Cut(rest, []byte(" "))
	if !ok1 || !ok2 || len(target) == 0 {
		return request{}, badRequest(400, "malformed request line")
	}
	var req request
	switch string(version) {
	case "HTTP/1.1":
	case "HTTP/1.0":
		req.close = true
	default:
		return request{}, badRequest(505, "only HTTP/1.1 and HTTP/1.0 are served")
	}
	switch string(method) {
	case "GET":
		req.get = true
	case "HEAD":
		req.get, req.head = true, true
	}
	if i := bytes.IndexAny(target, "?#"); i >= 0 {
		target = target[:i]
	}
	req.path = append(scratch[:0], target...)

	bodyLen := int64(-1)
	for n := 0; ; n++ {
		if n == maxHeaderLines {
			return request{}, badRequest(431, "more than 100 header lines")
		}
		line, err = readLine(r)
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return request{}, badRequest(431, "header line longer than 4096 bytes")
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return request{}, err
		}
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return request{}, badRequest(400, "header line without a colon")
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			v, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || v < 0 || (bodyLen >= 0 && v != bodyLen) {
				return request{}, badRequest(400, "invalid Content-Length")
			}
			bodyLen = v
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return request{}, badRequest(501, "request bodies with Transfer-Encoding are not supported")
		case bytes.EqualFold(name, []byte("Connection")):
			for tok := range bytes.SplitSeq(value, []byte(",")) {
				tok = bytes.TrimSpace(tok)
				if bytes.EqualFold(tok, []byte("close")) {
					req.close, req.keepAlive = true, false
				} else if bytes.EqualFold(tok, []byte("keep-alive")) && string(version) == "HTTP/1.0" {
					req.close, req.keepAlive = false, true
				}
			}
		}
	}
	if bodyLen > maxBody {
		return request{}, badRequest(413, "request body larger than 1 MiB")
	}
	if bodyLen > 0 {
		if _, err := r.Discard(int(bodyLen)); err != nil {
			return request{}, fmt.Errorf("skip %d-byte body: %w", bodyLen, err)
		}
	}
	return req, nil
}

// readLine returns one line without its CR LF; the slice is valid until the
// next read from r.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// appendResponse appends a complete response to b.
func appendResponse(b []byte, status int, body []byte, req request) []byte {
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, reason(status)...)
	b = append(b, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\nDate: "...)
	b = time.Now().UTC().AppendFormat(b, "Mon, 02 Jan 2006 15:04:05 GMT")
	b = append(b, "\r\n"...)
	if status == 405 {
		b = append(b, "Allow: GET, HEAD\r\n"...)
	}
	if req.close {
		b = append(b, "Connection: close\r\n"...)
	} else if req.keepAlive {
		b = append(b, "Connection: keep-alive\r\n"...)
	}
	b = append(b, "\r\n"...)
	if !req.head {
		b = append(b, body...)
	}
	return b
}

func reason(status int) string {
	switch status {
	case 200:
		return "OK"
	case 400:
		return "Bad Request"
	case 404:
		return "Not Found"
	case 405:
		return "Method Not Allowed"
	case 413:
		return "Content Too Large"
	case 414:
		return "URI Too Long"
	case 431:
		return "Request Header Fields Too Large"
	case 501:
		return "Not Implemented"
	case 505:
		return "HTTP Version Not Supported"
	}
	return "Status " + strconv.Itoa(status)
}
