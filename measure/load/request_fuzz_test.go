package load

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

// FuzzRequest checks the request template from the outside: whatever a
// manifest or the command line puts in method, path, header and body, the
// generator either refuses it with an error or writes exactly one
// well-formed HTTP/1.1 request, with the method, header and body asked for
// and no header nobody asked for (CR/LF injection), as net/http reads it.
func FuzzRequest(f *testing.F) {
	for _, s := range []struct{ method, path, name, value, body string }{
		{"GET", "/", "", "", ""},
		{"POST", "/orders/{random 1..100000}?q={random 0..9}", "Content-Type", "application/json", `{"a":1}`},
		{"HEAD", "/io?ms=50", "X-Trace", "abc\tdef", ""},
		{"GET", "/a\r\nX-Evil: 1\r\n/{random 1..5}", "", "", ""},
		{"GET", "/{random 0..9223372036854775807}", "", "", ""},
		{"GET / HTTP/1.1\r\nX:", "/", "", "", ""},
		{"GET", "/", "X", "a\r\nEvil: 1", ""},
		{"GET", "/%zz", "", "", ""},
		{"GET", "/{random 5..1}", "", "", ""},
		{"PURGE", "/cache/{random 1..2}/x", "Connection", "keep-alive", ""},
	} {
		f.Add(s.method, s.path, s.name, s.value, s.body, false)
	}
	f.Fuzz(func(t *testing.T, method, path, name, value, body string, closeConn bool) {
		r := Request{Method: method, Path: path, Body: body}
		if name != "" {
			r.Headers = map[string]string{name: value}
		}
		w, err := buildWire(target{hostHdr: "127.0.0.1:8080"}, r, closeConn)
		valid := CheckMethod(orGET(method)) == nil && CheckPath(path) == nil && (name == "" || CheckHeader(name, value) == nil)
		if err != nil {
			if valid {
				t.Fatalf("buildWire refused what the validators accept: %v", err)
			}
			return
		}
		if !valid {
			t.Fatalf("buildWire accepted what a validator refuses: method %q path %q header %q: %q", method, path, name, value)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		raw := w.render(nil, rng)
		br := bufio.NewReader(bytes.NewReader(raw))
		req, err := http.ReadRequest(br)
		if err != nil {
			t.Fatalf("net/http cannot read the request we would send: %v\n%q", err, raw)
		}
		if req.Method != orGET(method) {
			t.Fatalf("method %q on the wire, asked for %q", req.Method, method)
		}
		want := map[string]bool{"Host": true, "User-Agent": true}
		if name != "" && !(closeConn && strings.EqualFold(name, "connection")) {
			want[http.CanonicalHeaderKey(name)] = true
		}
		if body != "" || req.ContentLength > 0 || strings.Contains(string(raw), "Content-Length:") {
			want["Content-Length"] = true
		}
		if closeConn || strings.EqualFold(name, "connection") {
			want["Connection"] = true
		}
		for k := range req.Header {
			if !want[k] {
				t.Fatalf("header %q on the wire that nobody asked for:\n%q", k, raw)
			}
		}
		if req.Host != "127.0.0.1:8080" {
			t.Fatalf("Host %q", req.Host)
		}
		got, err := io.ReadAll(req.Body)
		if err != nil || string(got) != body {
			t.Fatalf("body %q (%v), want %q", got, err, body)
		}
		if rest, _ := io.ReadAll(br); len(rest) != 0 {
			t.Fatalf("%d bytes after the request (a second, smuggled one?):\n%q", len(rest), raw)
		}
	})
}

func orGET(m string) string {
	if m == "" {
		return "GET"
	}
	return m
}
