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
	if u.User != nil {
		// Not sent (curl and net/http would send it as Basic auth), and a
		// password in a URL ends up in summaries and logs.
		return target{}, fmt.Errorf("target http://%s: user:password@ in the URL is not sent; send credentials as a header (--header 'Authorization: Basic ...', or headers: in the manifest)", u.Host)
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

// maxTotalWeight caps the sum of a mix's weights. Weights are relative, so
// a million steps is finer than any mix needs; the cap keeps the sum far
// from int overflow, which would make rand.IntN panic mid-run.
const maxTotalWeight = 1_000_000

// buildMix renders the requests of a group. closeConn adds "Connection: close"
// so that, without keep-alive, the server knows to close and nobody waits
// for an idle timeout.
func buildMix(t target, reqs []Request, closeConn bool) (*mix, error) {
	if err := checkWeights(reqs); err != nil {
		return nil, err
	}
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

// checkWeights rejects negative weights and mixes whose weights add up to
// more than maxTotalWeight. Each weight is checked before it is added, so
// the sum itself cannot overflow.
func checkWeights(reqs []Request) error {
	total := 0
	for i, r := range reqs {
		w := r.Weight
		if w < 0 {
			return fmt.Errorf("request %d: weight %d is negative: use 1 or more (0 means 1)", i+1, w)
		}
		if w == 0 {
			w = 1
		}
		if w > maxTotalWeight || total+w > maxTotalWeight {
			return fmt.Errorf("request %d: weights add up to more than %d: weights are relative, so scale them down (e.g. 3 and 1 instead of 3000000 and 1000000)", i+1, maxTotalWeight)
		}
		total += w
	}
	return nil
}

func buildWire(t target, r Request, closeConn bool) (wire, error) {
	method := r.Method
	if method == "" {
		method = "GET"
	}
	if err := CheckMethod(method); err != nil {
		return wire{}, err
	}
	segs, err := checkPath(r.Path)
	if err != nil {
		return wire{}, err
	}
	if t.basePath != "" {
		// The base path comes from url.EscapedPath, so it is printable already.
		segs = append([]segment{{lit: []byte(t.basePath)}}, segs...)
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
		if err := CheckHeader(k, v); err != nil {
			return wire{}, err
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

// parseTemplate checks a path and splits it into literal and
// {random A..B} segments.
func parseTemplate(path string) ([]segment, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("path %q must start with /", path)
	}
	// Every byte is checked before any is used, templates included: the
	// request line must stay one line whatever the path holds.
	for i := 0; i < len(path); i++ {
		if c := path[i]; c < ' ' || c >= 0x7f {
			return nil, fmt.Errorf("path %q: byte %d is %q, a control or non-ASCII character: percent-encode it (e.g. %%0A, %%C3%%A9)", path, i, c)
		}
	}
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
		if err := checkLiteral(path[:i]); err != nil {
			return nil, err
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
	if err := checkLiteral(path); err != nil {
		return nil, err
	}
	if path != "" {
		segs = append(segs, segment{lit: []byte(path)})
	}
	return segs, nil
}

// checkLiteral rejects the characters a literal part of a path may not
// hold: a space would end the request target, a lone } is a broken template.
func checkLiteral(s string) error {
	if strings.ContainsAny(s, "} ") {
		return fmt.Errorf("path part %q holds '}' or a space outside a {random A..B} template: percent-encode it (%%7D, %%20)", s)
	}
	// A % must start a %XX escape (RFC 3986 2.1); servers reject a stray one
	// with 400, which would pass for the target's error rate.
	for i := strings.IndexByte(s, '%'); i >= 0; i = strings.IndexByte(s, '%') {
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return fmt.Errorf("path part %q: %% must start an escape such as %%2F; write %%25 for a literal percent sign", s)
		}
		s = s[i+3:]
	}
	return nil
}

// maxRandom is the largest B of {random A..B}: 10^18, far above any id
// space, and B-A+1 stays inside int64.
const maxRandom = 1e18

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
	// The upper bound keeps B-A+1 (the draw's range) from overflowing int64.
	if err1 != nil || err2 != nil || lo > hi || lo < 0 || hi > maxRandom {
		return 0, 0, fmt.Errorf("{%s}: A and B must be integers with 0 <= A <= B <= %d", s, int64(maxRandom))
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

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
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
