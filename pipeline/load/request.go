package load

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// wire is one Request of a mix rendered to bytes once, before the run: the
// hot path either writes whole (no template) or copies prefix, a few random
// numbers and suffix into the connection's own buffer.
type wire struct {
	whole  []byte    // the full request when the path has no template
	pieces []segment // otherwise: literal and random pieces, in order
	head   bool      // HEAD: the response has no body
}

// segment is a literal run of bytes, or (lit == nil) a random integer in [lo, hi].
type segment struct {
	lit    []byte
	lo, hi int64
}

// mix picks requests by weight.
type mix struct {
	reqs  []wire
	cum   []int // cumulative weights
	total int
}

// target is the parsed Plan.Target.
type target struct {
	addr     string // host:port to dial
	hostHdr  string // Host header value
	basePath string // path prefix of the target URL, without trailing slash
}

func parseTarget(raw string) (target, error) {
	if raw == "" {
		return target{}, fmt.Errorf("target is empty: set it to a base URL such as http://127.0.0.1:8080")
	}
	if !strings.Contains(raw, "://") {
		return target{}, fmt.Errorf("target %q has no scheme: write it as http://HOST:PORT", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return target{}, fmt.Errorf("target %q: %w (use a URL such as http://127.0.0.1:8080)", raw, err)
	}
	if u.Scheme != "http" {
		if u.Scheme == "" || u.Host == "" {
			return target{}, fmt.Errorf("target %q has no scheme or host: write it as http://HOST:PORT", raw)
		}
		return target{}, fmt.Errorf("target %q: scheme %q is not supported, only plain http:// (put TLS in front of the generator, not in it)", raw, u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return target{}, fmt.Errorf("target %q has no host: write it as http://HOST:PORT", raw)
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return target{}, fmt.Errorf("target %q: port %q is not in 1..65535", raw, port)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return target{}, fmt.Errorf("target %q: put the query in the request paths, not in the target", raw)
	}
	hostHdr := u.Host
	return target{
		addr:     joinHostPort(u.Hostname(), port),
		hostHdr:  hostHdr,
		basePath: strings.TrimSuffix(u.EscapedPath(), "/"),
	}, nil
}

func joinHostPort(host, port string) string {
	if strings.IndexByte(host, ':') >= 0 {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// buildMix renders the requests of a group. closeConn adds "Connection: close"
// so that, without keep-alive, the server knows to close and nobody waits
// for an idle timeout.
func buildMix(t target, reqs []Request, closeConn bool) (*mix, error) {
	m := &mix{}
	for i, r := range reqs {
		w, err := buildWire(t, r, closeConn)
		if err != nil {
			return nil, fmt.Errorf("request %d: %w", i, err)
		}
		weight := r.Weight
		if weight == 0 {
			weight = 1
		}
		m.total += weight
		m.reqs = append(m.reqs, w)
		m.cum = append(m.cum, m.total)
	}
	return m, nil
}

func buildWire(t target, r Request, closeConn bool) (wire, error) {
	method := r.Method
	if method == "" {
		method = "GET"
	}
	if !validToken(method) {
		return wire{}, fmt.Errorf("method %q is not an HTTP token: use GET, POST, ...", method)
	}
	if !strings.HasPrefix(r.Path, "/") {
		return wire{}, fmt.Errorf("path %q must start with /", r.Path)
	}
	segs, err := parseTemplate(t.basePath + r.Path)
	if err != nil {
		return wire{}, err
	}
	var tail strings.Builder
	tail.WriteString(" HTTP/1.1\r\nHost: ")
	tail.WriteString(t.hostHdr)
	tail.WriteString("\r\nUser-Agent: threadlab\r\n")
	names := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		names = append(names, k)
	}
	sort.Strings(names) // stable bytes on the wire: runs are reproducible
	for _, k := range names {
		v := r.Headers[k]
		if !validToken(k) {
			return wire{}, fmt.Errorf("header name %q is not an HTTP token", k)
		}
		if strings.ContainsAny(v, "\r\n") {
			return wire{}, fmt.Errorf("header %s: value holds a line break; remove it", k)
		}
		if strings.EqualFold(k, "content-length") || strings.EqualFold(k, "host") || strings.EqualFold(k, "transfer-encoding") {
			return wire{}, fmt.Errorf("header %s is set by the generator; remove it from the request", k)
		}
		if closeConn && strings.EqualFold(k, "connection") {
			continue
		}
		tail.WriteString(k + ": " + v + "\r\n")
	}
	if r.Body != "" || method == "POST" || method == "PUT" || method == "PATCH" {
		tail.WriteString("Content-Length: " + strconv.Itoa(len(r.Body)) + "\r\n")
	}
	if closeConn {
		tail.WriteString("Connection: close\r\n")
	}
	tail.WriteString("\r\n")
	tail.WriteString(r.Body)

	w := wire{head: method == "HEAD"}
	segs = append([]segment{{lit: []byte(method + " ")}}, segs...)
	segs = append(segs, segment{lit: []byte(tail.String())})
	segs = mergeLiterals(segs)
	if len(segs) == 1 {
		w.whole = segs[0].lit
	} else {
		w.pieces = segs
	}
	return w, nil
}

// parseTemplate splits a path into literal and {random A..B} segments.
func parseTemplate(path string) ([]segment, error) {
	var segs []segment
	for {
		i := strings.IndexByte(path, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(path[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("path template %q: unclosed {", path)
		}
		lo, hi, err := parseRandom(path[i+1 : i+j])
		if err != nil {
			return nil, fmt.Errorf("path template %q: %w", path, err)
		}
		if i > 0 {
			segs = append(segs, segment{lit: []byte(path[:i])})
		}
		segs = append(segs, segment{lo: lo, hi: hi})
		path = path[i+j+1:]
	}
	if strings.ContainsAny(path, "} \r\n") {
		return nil, fmt.Errorf("path %q holds '}', a space or a line break: escape it", path)
	}
	if path != "" {
		segs = append(segs, segment{lit: []byte(path)})
	}
	return segs, nil
}

// parseRandom parses "random A..B".
func parseRandom(s string) (lo, hi int64, err error) {
	f := strings.Fields(s)
	if len(f) != 2 || f[0] != "random" {
		return 0, 0, fmt.Errorf("{%s}: the only template is {random A..B}", s)
	}
	a, b, ok := strings.Cut(f[1], "..")
	if !ok {
		return 0, 0, fmt.Errorf("{%s}: write the range as A..B, e.g. {random 1..100000}", s)
	}
	lo, err1 := strconv.ParseInt(a, 10, 64)
	hi, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || lo > hi || lo < 0 {
		return 0, 0, fmt.Errorf("{%s}: A and B must be integers with 0 <= A <= B", s)
	}
	return lo, hi, nil
}

func mergeLiterals(segs []segment) []segment {
	out := segs[:0]
	for _, s := range segs {
		if s.lit != nil && len(out) > 0 && out[len(out)-1].lit != nil {
			prev := &out[len(out)-1]
			prev.lit = append(append([]byte(nil), prev.lit...), s.lit...)
			continue
		}
		out = append(out, s)
	}
	return out
}

func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
}

// pick chooses a request by weight.
func (m *mix) pick(rng *rand.Rand) *wire {
	if len(m.reqs) == 1 {
		return &m.reqs[0]
	}
	r := rng.IntN(m.total)
	for i, c := range m.cum {
		if r < c {
			return &m.reqs[i]
		}
	}
	return &m.reqs[len(m.reqs)-1]
}

// render returns the request bytes, using buf for templated paths.
func (w *wire) render(buf []byte, rng *rand.Rand) []byte {
	if w.whole != nil {
		return w.whole
	}
	buf = buf[:0]
	for i := range w.pieces {
		s := &w.pieces[i]
		if s.lit != nil {
			buf = append(buf, s.lit...)
			continue
		}
		buf = strconv.AppendInt(buf, s.lo+rng.Int64N(s.hi-s.lo+1), 10)
	}
	return buf
}
