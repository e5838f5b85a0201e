package load

import (
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/sys/unix"
)

// The request checks below are the generator's own: building a request
// (buildWire) applies exactly CheckMethod, CheckPath and CheckHeader, so a
// manifest or a command line that passes them is one the generator accepts,
// field by field. Callers that validate a plan's parts before a run use
// them to name the field (the manifest loader reports each with its file,
// line and field), then CheckGroup for the rest.

// FDReserve is the number of descriptors the generator keeps for
// everything but connections.
const FDReserve = 64

// CheckGroup runs the generator's validation of one group, requests
// included; the error says how to fix the first problem.
func CheckGroup(g Group) error { return g.validate() }

// HeldConns is how many connections g holds open at once (closed users,
// a burst, a users ramp's peak); 0 for open models, which dial as needed.
func HeldConns(g Group) int { return heldConns(g) }

// FileLimit is the hard RLIMIT_NOFILE of this process: the most
// connections a run can hold open at once, after raising the soft limit
// (as Run does). It returns 0 when the limit cannot be read.
func FileLimit() uint64 {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return rl.Max
}

// CheckMethod reports whether m is an HTTP method: an RFC 9110 token
// (5.6.2), so it cannot smuggle a space or a line break into the request
// line.
func CheckMethod(m string) error {
	if !validToken(m) {
		return fmt.Errorf("method %q is not an HTTP token (RFC 9110 5.6.2): use GET, POST, PUT, ...: letters only, no spaces", m)
	}
	return nil
}

// CheckHeader reports whether name is a header field name token, value a
// field value without CR, LF, NUL or other control characters but tab (RFC
// 9110 5.5), so that no header can smuggle another onto the wire, and the
// header not one the generator sets itself (Host, Content-Length,
// Transfer-Encoding).
func CheckHeader(name, value string) error {
	if err := CheckHeaderName(name); err != nil {
		return err
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return fmt.Errorf("header %s: value holds control character %q at byte %d (a line break would start a new header; remove it)", name, c, i)
		}
	}
	for _, own := range generatorHeaders {
		if strings.EqualFold(name, own) {
			return fmt.Errorf("header %s is set by the generator from the target and the body; remove it from the request", name)
		}
	}
	if strings.EqualFold(name, "Connection") {
		// "Connection: close" made every request reconnect while the
		// summary said keep-alive (1,514 sockets for 1,514 requests).
		return fmt.Errorf("header Connection is the generator's: it keeps connections alive unless asked not to (keepalive: false in the manifest, --keepalive=false for threadlab load)")
	}
	return nil
}

// CheckHeaderName reports whether name is a header field name: an RFC
// 9110 token. A request header must pass CheckHeader too; a response
// header's name (Group.CountHeader) only this.
func CheckHeaderName(name string) error {
	if !validToken(name) {
		return fmt.Errorf("header name %q is not an HTTP token (RFC 9110 5.6.2): use letters, digits and -, like X-Request-Id", name)
	}
	return nil
}

// generatorHeaders are the headers every request gets from the generator:
// a second copy would make the request ambiguous (request smuggling).
var generatorHeaders = []string{"Host", "Content-Length", "Transfer-Encoding"}

// CheckPath reports whether path is a request target the generator can
// put on the wire: it starts with '/', every {...} is a well-formed
// {random A..B}, no character anywhere (before, between or after
// templates) is a space or a control character, and anything not
// printable ASCII is percent-encoded. With the templates replaced by a
// number, it must parse as a URL path with a query.
func CheckPath(path string) error {
	_, err := checkPath(path)
	return err
}

// checkPath is CheckPath that also returns the path's segments, for
// buildWire.
func checkPath(path string) ([]segment, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("path %q must start with / (the target's base URL is put in front of it)", path)
	}
	// Control characters are named first, wherever they stand: a line
	// break is the one that would put extra headers on the wire.
	if i := strings.IndexFunc(path, func(r rune) bool { return r < ' ' || r == 0x7f }); i >= 0 {
		return nil, fmt.Errorf("path %q holds control character %q at byte %d (a line break would put extra headers on the wire; remove it)", path, path[i], i)
	}
	depth := 0
	for i, c := range path {
		switch {
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == ' ' && depth == 0:
			return nil, fmt.Errorf("path %q holds a space at byte %d (percent-encode it as %%20)", path, i)
		}
	}
	segs, err := parseTemplate(path)
	if err != nil {
		return nil, err
	}
	var plain strings.Builder
	for _, s := range segs {
		if s.lit == nil {
			plain.WriteString("0") // parseRandom keeps B-A+1 inside int64
			continue
		}
		if i := strings.IndexAny(string(s.lit), " {}"); i >= 0 {
			return nil, fmt.Errorf("path %q holds %q outside a {random A..B} template (percent-encode a space as %%20; the only template is {random A..B})", path, s.lit[i])
		}
		plain.Write(s.lit)
	}
	if err := CheckURLPath(plain.String()); err != nil {
		return nil, err
	}
	return segs, nil
}

// CheckURLPath reports whether p is an absolute URL path (with an optional
// query) that parses, such as a ready or metrics path: "/ready%zz" does not.
func CheckURLPath(p string) error {
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("path %q must start with /", p)
	}
	if strings.HasPrefix(p, "//") {
		return fmt.Errorf("path %q starts with // and would name another host; use a single /", p)
	}
	if i := strings.IndexFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f }); i >= 0 {
		return fmt.Errorf("path %q holds a space or control character at byte %d (percent-encode it)", p, i)
	}
	u, err := url.ParseRequestURI(p)
	if err != nil {
		return fmt.Errorf("path %q is not a valid URL path: %v (percent-encode special characters: %% is written %%25)", p, unwrapURL(err))
	}
	if u.Fragment != "" || strings.Contains(p, "#") {
		return fmt.Errorf("path %q holds a fragment (#...), which is never sent (remove it)", p)
	}
	if _, err := url.ParseQuery(u.RawQuery); err != nil {
		return fmt.Errorf("path %q: query does not parse: %v (percent-encode special characters)", p, unwrapURL(err))
	}
	return nil
}

func unwrapURL(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}
