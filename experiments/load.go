package experiments

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/threadlab/threadlab/internal/yamlpos"
	"gopkg.in/yaml.v3"
)

// Problem is one thing wrong with a manifest, with where it is and how to
// fix it (Field is the dotted path, e.g. variants.platform.target; Host
// marks a problem with this machine rather than the manifest).
type Problem = yamlpos.Problem

// Problems is every problem found in one manifest; it is the error Load returns.
type Problems = yamlpos.Problems

// HostOnly reports whether err is Problems with this machine only (see
// Problem.Host): the manifest itself is valid.
func HostOnly(err error) bool { return yamlpos.HostOnly(err) }

// positions maps a dotted field path to the YAML node it came from.
type positions map[string]*yaml.Node

// at returns the position of path, or of its nearest ancestor present.
func (pos positions) at(path string) (int, int) {
	for p := path; ; {
		if n, ok := pos[p]; ok {
			return n.Line, n.Column
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			if n, ok := pos[""]; ok {
				return n.Line, n.Column
			}
			return 0, 0
		}
		p = p[:i]
	}
}

// Load reads a manifest file, applies profile ("" or "default" for none),
// decodes it strictly, fills defaults and validates it. On failure the error
// is Problems, listing everything wrong at once. When every problem is with
// this host only (HostOnly), the manifest is returned too, so that lint can
// still review it; callers that run it must stop on any error.
func Load(path, profile string) (*Manifest, error) {
	data, err := readCapped(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("manifest %s does not exist (the catalog is in experiments/*.yaml)", path)
		}
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	return Parse(path, data, profile)
}

// readCapped reads at most one byte more than MaxFileBytes, so that a huge
// file or a device that never ends (/dev/zero) is refused by size. It
// opens without blocking: a named pipe nobody writes to would otherwise
// hang the open past every signal; it now reads as empty. A pipe that is
// being written (bash's <(...)) still reads whole.
func readCapped(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
}

// Parse is Load on bytes; file names the source in messages. It never
// panics: an unexpected panic in the loader becomes an error naming the
// file, so a hostile manifest cannot take threadlab down with a stack trace.
func Parse(file string, data []byte, profile string) (*Manifest, error) {
	return guard(file, func() (*Manifest, error) { return parse(file, data, profile) })
}

// guard runs load and turns a panic into an error.
func guard(file string, load func() (*Manifest, error)) (m *Manifest, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, Problems{{File: file, Msg: fmt.Sprintf("internal error while reading this manifest: %v (this is a threadlab bug; please report it with the file)", r)}}
		}
	}()
	return load()
}

func parse(file string, data []byte, profile string) (*Manifest, error) {
	root, err := readDoc(file, data)
	if err != nil {
		return nil, err
	}
	if profile == "default" {
		profile = ""
	}
	// Claims are checked against the sweep they were written with: a smoke
	// profile that narrows the sweep but keeps the base claims leaves those
	// claims undecided, which is fine, while a value in no sweep is a typo.
	var claimSweep *Sweep
	if profile != "" {
		if over := mapValue(mapValue(mapValue(root, "profiles"), profile), "claims"); over == nil {
			claimSweep = &Sweep{}
			if n := mapValue(root, "sweep"); n != nil && n.Decode(claimSweep) != nil {
				claimSweep = nil // the full decode reports the error
			}
		}
		if err := applyProfile(file, root, profile); err != nil {
			return nil, err
		}
	}
	pos := positions{"": root}
	// Unknown keys and type errors do not stop here: the rest is decoded
	// and validated too, so one run of lint shows every problem. What
	// validation then says about a field already reported is dropped, as
	// it only echoes the first problem (a users: many that decoded as 0).
	var early Problems
	checkKeys(file, root, reflect.TypeOf(Manifest{}), "", pos, &early)
	var m Manifest
	if err := root.Decode(&m); err != nil {
		early = append(early, decodeProblems(file, err, pos)...)
		// yaml.v3 abandons the whole mapping on a duplicate key, so
		// everything else would look missing: report the duplicate alone.
		if strings.Contains(err.Error(), "already defined at line") {
			return nil, early
		}
	}
	m.File = file
	// A normalized manifest saved with a run (Marshal) names the profile
	// it was made with and keeps that profile's claims, which were checked
	// against the sweep they were written for when the run started; the
	// narrowed sweep saved with it may not hold their values.
	saved := profile == "" && m.Profile != "" && len(m.Profiles) == 0
	m.Profile = profile
	// Zero means "the default" for most fields, but a trials: 0 the author
	// wrote is a mistake, not a request for the default five.
	late := m.checkWritten(pos)
	m.Normalize()
	if claimSweep == nil {
		claimSweep = &m.Sweep
	}
	late = append(late, m.validate(pos, claimScope{sweep: *claimSweep, values: !saved})...)
	probs := append(early, notUnder(late, early)...)
	if len(probs) > 0 {
		if HostOnly(probs) {
			return &m, probs // valid, but not for this host: lint still reviews it
		}
		return nil, probs
	}
	return &m, nil
}

// notUnder drops the problems of ps that concern a field (or a part of a
// field) that one of first already reports.
func notUnder(ps, first Problems) Problems {
	var out Problems
	for _, p := range ps {
		echo := false
		for _, q := range first {
			if q.Field != "" && (p.Field == q.Field || strings.HasPrefix(p.Field, q.Field+".") || strings.HasPrefix(p.Field, q.Field+"[")) {
				echo = true
				break
			}
		}
		if !echo {
			out = append(out, p)
		}
	}
	return out
}

// ProfileNames lists the profiles a manifest file offers (plus "default").
func ProfileNames(m *Manifest) []string {
	names := []string{"default"}
	for n := range m.Profiles {
		names = append(names, n)
	}
	sort.Strings(names[1:])
	return names
}

var lineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

func syntaxProblem(file string, err error) Problem {
	msg := err.Error()
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		var line int
		fmt.Sscan(m[1], &line)
		return Problem{File: file, Line: line, Col: 1, Msg: "YAML syntax: " + m[2] + " (check indentation and quoting on this line)"}
	}
	return Problem{File: file, Msg: "YAML syntax: " + strings.TrimPrefix(msg, "yaml: ")}
}

// durationValue is the value in yaml.v3's "cannot unmarshal !!str `9h`
// into time.Duration", "" when the message has none.
func durationValue(msg string) string {
	_, rest, ok := strings.Cut(msg, "`")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, "`")
	return v
}

// hasUnit says whether a duration as written ends in one of
// time.ParseDuration's units, so that its failure is its size.
func hasUnit(v string) bool {
	v = strings.TrimSpace(v)
	for _, u := range []string{"ns", "us", "µs", "μs", "ms", "s", "m", "h"} {
		if strings.HasSuffix(v, u) && len(v) > len(u) {
			num := strings.TrimSuffix(v, u)
			if strings.Trim(num, "0123456789.+-hmsun") == "" && strings.ContainsAny(num, "0123456789") {
				return true
			}
		}
	}
	return false
}

// decodeProblems turns yaml.v3 type errors into problems with a fix hint.
func decodeProblems(file string, err error, pos positions) Problems {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return Problems{{File: file, Msg: err.Error()}}
	}
	var out Problems
	byLine := fieldsByLine(pos)
	for _, e := range te.Errors {
		p := Problem{File: file}
		msg := e
		if m := lineRE.FindStringSubmatch(e); m != nil {
			fmt.Sscan(m[1], &p.Line)
			msg = m[2]
		}
		if path, n := fieldForValue(pos, p.Line, msg); n != nil {
			p.Field, p.Col = path, n.Column
		} else if b, ok := byLine[p.Line]; ok {
			p.Field, p.Col = b.path, b.col
		}
		switch {
		case strings.Contains(msg, "time.Duration"):
			if v := durationValue(msg); v != "" && hasUnit(v) {
				// "9999999h" has its unit: it is out of range (yaml.v3 reads a
				// duration with time.ParseDuration, which stops at 2562047h).
				msg += " (a duration must be under 2562047h, about 292 years; a load or time-out needs seconds to hours)"
			} else {
				msg += " (write a duration with a unit, like 300ms, 15s or 2m)"
			}
		case strings.Contains(msg, "into int"), strings.Contains(msg, "into float"):
			msg += " (write a number)"
		case strings.Contains(msg, "into bool"):
			msg += " (write true or false)"
		case strings.Contains(msg, "into []"):
			msg += " (write a list: [a, b] or one '- item' per line)"
		case strings.Contains(msg, "into map"), strings.Contains(msg, "into experiments."), strings.Contains(msg, "into stats."):
			msg += " (write a mapping: key: value)"
		case strings.Contains(msg, "already defined at line"):
			msg += " (keep one: YAML would silently use the last)"
		}
		if p.Line > 0 && p.Col == 0 {
			p.Col = 1 // the line is known, the column not (a key under properties:)
		}
		p.Msg = msg
		out = append(out, p)
	}
	return out
}

var quotedRE = regexp.MustCompile("`([^`]*)`")

// fieldForValue finds the field on line whose value is the one a yaml.v3
// message quotes ("cannot unmarshal !!int `2` into ..."), so that a
// mistake in a one-line flow mapping names its own field, not the deepest
// field on the line. The quote may be cut short with "...".
func fieldForValue(pos positions, line int, msg string) (string, *yaml.Node) {
	q := quotedRE.FindStringSubmatch(msg)
	if q == nil {
		return "", nil
	}
	val, cut := strings.CutSuffix(q[1], "...")
	best, bestN := "", (*yaml.Node)(nil)
	for path, n := range pos {
		if n.Line != line || n.Kind != yaml.ScalarNode {
			continue
		}
		if n.Value == val || cut && strings.HasPrefix(n.Value, val) {
			if bestN == nil || len(path) > len(best) || len(path) == len(best) && path < best {
				best, bestN = path, n
			}
		}
	}
	return best, bestN
}

// fieldsByLine maps each line to the deepest known field whose value
// starts on it, built once so that many type errors cost one pass.
func fieldsByLine(pos positions) map[int]struct {
	path string
	col  int
} {
	out := map[int]struct {
		path string
		col  int
	}{}
	for path, n := range pos {
		if b, ok := out[n.Line]; !ok || len(path) > len(b.path) || len(path) == len(b.path) && path < b.path {
			out[n.Line] = struct {
				path string
				col  int
			}{path, n.Column}
		}
	}
	return out
}

// applyProfile overlays profiles.<name> onto root: mappings merge key by
// key, everything else is replaced. Values keep their own line numbers.
func applyProfile(file string, root *yaml.Node, name string) error {
	profiles := mapValue(root, "profiles")
	var overlay *yaml.Node
	var names []string
	if profiles != nil && profiles.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(profiles.Content); i += 2 {
			names = append(names, profiles.Content[i].Value)
			if profiles.Content[i].Value == name {
				overlay = profiles.Content[i+1]
			}
		}
	}
	if overlay == nil {
		have := "this manifest has no profiles"
		if len(names) > 0 {
			have = "this manifest has: default, " + strings.Join(names, ", ")
		}
		p := Problem{File: file, Field: "profiles", Msg: fmt.Sprintf("unknown profile %q (%s)", name, have)}
		if profiles != nil {
			p.Line, p.Col = profiles.Line, profiles.Column
		}
		return Problems{p}
	}
	if overlay.Kind != yaml.MappingNode {
		return Problems{{File: file, Line: overlay.Line, Col: overlay.Column, Field: "profiles." + name, Msg: "a profile is a mapping of the manifest keys it overrides, e.g. {trials: 2, load: {burst: 50}}"}}
	}
	for i := 0; i+1 < len(overlay.Content); i += 2 {
		if k := overlay.Content[i].Value; k == "profiles" || k == "name" {
			n := overlay.Content[i]
			return Problems{{File: file, Line: n.Line, Col: n.Column, Field: "profiles." + name + "." + k, Msg: "a profile cannot change " + k + " (remove it from the profile)"}}
		}
	}
	merge(root, overlay)
	return nil
}

func merge(dst, src *yaml.Node) {
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i], src.Content[i+1]
		found := false
		for j := 0; j+1 < len(dst.Content); j += 2 {
			if dst.Content[j].Value == k.Value {
				found = true
				if dst.Content[j+1].Kind == yaml.MappingNode && v.Kind == yaml.MappingNode {
					merge(dst.Content[j+1], v)
				} else {
					dst.Content[j+1] = v
				}
			}
		}
		if !found {
			dst.Content = append(dst.Content, k, v)
		}
	}
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

var (
	durationType = reflect.TypeOf(time.Duration(0))
	nodeType     = reflect.TypeOf(yaml.Node{})
	variantsType = reflect.TypeOf(Variants{})
	sweepType    = reflect.TypeOf(Sweep{})
)

// checkKeys walks n against type t, reporting unknown keys with their
// position and recording the position of every known field in pos.
func checkKeys(file string, n *yaml.Node, t reflect.Type, path string, pos positions, probs *Problems) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	pos[path] = n
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == nodeType || t == durationType:
		return
	case t == variantsType || t == sweepType:
		if n.Kind != yaml.MappingNode {
			return // the decoder reports the type error
		}
		elem := reflect.TypeOf(Variant{})
		if t == sweepType {
			elem = reflect.TypeOf(SweepDim{})
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			checkKeys(file, n.Content[i+1], elem, join(path, n.Content[i].Value), pos, probs)
		}
		return
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		// yaml.v3 truncates a float into an int field (trials: 2.5 runs
		// 2), so a fraction where a count belongs is caught here.
		if n.Kind == yaml.ScalarNode && n.Tag == "!!float" {
			if x, err := strconv.ParseFloat(n.Value, 64); err == nil && x != math.Trunc(x) {
				*probs = append(*probs, Problem{File: file, Line: n.Line, Col: n.Column, Field: path,
					Msg: fmt.Sprintf("%s is not a whole number (write a count like %d)", n.Value, int64(math.Round(x)))})
			}
		}
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := fields[k.Value]
			if !ok {
				*probs = append(*probs, Problem{File: file, Line: k.Line, Col: k.Column, Field: join(path, k.Value),
					Msg: fmt.Sprintf("unknown key %q%s (known keys here: %s)", k.Value, suggest(k.Value, fields), strings.Join(sortedKeys(fields), ", "))})
				continue
			}
			checkKeys(file, v, ft, join(path, k.Value), pos, probs)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, c := range n.Content {
			checkKeys(file, c, t.Elem(), fmt.Sprintf("%s[%d]", path, i), pos, probs)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			checkKeys(file, n.Content[i+1], t.Elem(), join(path, n.Content[i].Value), pos, probs)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlFields maps the YAML keys of struct t (inline structs flattened) to field types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

func sortedKeys(m map[string]reflect.Type) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// suggest proposes the closest known key for a likely typo.
func suggest(key string, fields map[string]reflect.Type) string {
	best, bestD := "", 3
	for k := range fields {
		if d := levenshtein(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(", did you mean %q?", best)
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func lineMsg(n *yaml.Node, msg string) string { return fmt.Sprintf("line %d: %s", n.Line, msg) }
