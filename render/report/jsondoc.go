package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The fingerprint and host check are written by package env, whose schema
// grows as it learns to see more of the machine. The report renders them
// generically, in document order, so a new field shows up without a report
// change and an old run still renders.

// node is a JSON value that keeps object key order.
type node struct {
	kind   byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys   []string
	fields []*node
	items  []*node
	text   string
}

// maxJSONDepth bounds the nesting parseJSON follows: threadlab's own
// fingerprint and host check nest 4 levels. A hostile file nested millions
// deep (12 MB of "[", under record.MaxMetaBytes) overflowed the goroutine
// stack, a fatal error no recover catches, and one nested 100,000 deep
// took minutes (flatten rebuilds each key's prefix).
const maxJSONDepth = 64

func parseJSON(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := parseNode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return n, nil
}

func parseNode(dec *json.Decoder, depth int) (*node, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("JSON nested deeper than %d levels: not a file threadlab wrote", maxJSONDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := parseNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k)
				n.fields = append(n.fields, v)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &node{kind: 'a'}
			for dec.More() {
				v, err := parseNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return &node{kind: 's', text: t}, nil
	case json.Number:
		return &node{kind: 'n', text: t.String()}, nil
	case bool:
		return &node{kind: 'b', text: strconv.FormatBool(t)}, nil
	default:
		return &node{kind: 'z', text: ""}, nil
	}
}

// scalar renders a leaf, or a compact form of an array of leaves.
func (n *node) scalar() (string, bool) {
	switch n.kind {
	case 's', 'n', 'b', 'z':
		return n.text, true
	case 'a':
		parts := make([]string, 0, len(n.items))
		for _, it := range n.items {
			s, ok := it.scalar()
			if !ok || it.kind == 'a' {
				return "", false
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ", "), true
	}
	return "", false
}

// kv is one row of a flattened document.
type kv struct{ Key, Value string }

// flatten lists every leaf as a dotted path, in document order.
func flatten(n *node, prefix string, out []kv) []kv {
	if s, ok := n.scalar(); ok {
		return append(out, kv{prefix, s})
	}
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch n.kind {
	case 'o':
		for i, k := range n.keys {
			out = flatten(n.fields[i], join(k), out)
		}
	case 'a':
		for i, it := range n.items {
			out = flatten(it, join(strconv.Itoa(i)), out)
		}
	}
	return out
}

// table is a generic table: a header and rows of cells.
type table struct {
	Columns []string
	Rows    [][]string
	Status  int // index of a status-like column whose cells get a badge, or -1
	Code    int // index of a fix/command column shown as code, or -1
}

// recordsTable turns an array of objects into a table whose columns are
// the union of their keys in first-seen order; nested values are flattened.
func recordsTable(arr *node) table {
	t := table{Status: -1, Code: -1}
	col := map[string]int{}
	var rows []map[string]string
	for _, it := range arr.items {
		row := map[string]string{}
		if it.kind != 'o' {
			s, _ := it.scalar()
			row["value"] = s
			if _, ok := col["value"]; !ok {
				col["value"] = len(t.Columns)
				t.Columns = append(t.Columns, "value")
			}
		} else {
			for i, k := range it.keys {
				for _, f := range flatten(it.fields[i], k, nil) {
					if _, ok := col[f.Key]; !ok {
						col[f.Key] = len(t.Columns)
						t.Columns = append(t.Columns, f.Key)
					}
					row[f.Key] = f.Value
				}
			}
		}
		rows = append(rows, row)
	}
	// The check's name first and its status second, whatever order the
	// writer used; the rest (value, wanted, fix) in document order.
	prio := func(c string) int {
		switch strings.ToLower(c) {
		case "name", "check", "id", "what":
			return 0
		case "status", "result", "level", "state", "verdict", "ok":
			return 1
		case "fix", "command", "hint", "remedy":
			return 3
		}
		return 2
	}
	sort.SliceStable(t.Columns, func(i, j int) bool { return prio(t.Columns[i]) < prio(t.Columns[j]) })
	for _, r := range rows {
		cells := make([]string, len(t.Columns))
		for c, name := range t.Columns {
			cells[c] = r[name]
		}
		t.Rows = append(t.Rows, cells)
	}
	for i := len(t.Columns) - 1; i >= 0; i-- {
		switch prio(t.Columns[i]) {
		case 1:
			t.Status = i
		case 3:
			t.Code = i
		}
	}
	return t
}

// checkDoc is a host check document read generically: its list of checks
// (the first array of objects, at the top or under a top-level key) and
// every other top-level leaf.
type checkDoc struct {
	Checks table
	Other  []kv
}

func readCheckDoc(b []byte) (checkDoc, error) {
	var d checkDoc
	d.Checks.Status, d.Checks.Code = -1, -1
	n, err := parseJSON(b)
	if err != nil {
		return d, err
	}
	if n.kind == 'a' {
		d.Checks = recordsTable(n)
		return d, nil
	}
	if n.kind != 'o' {
		s, _ := n.scalar()
		d.Other = []kv{{"value", s}}
		return d, nil
	}
	found := false
	for i, k := range n.keys {
		f := n.fields[i]
		if !found && f.kind == 'a' && len(f.items) > 0 && f.items[0].kind == 'o' {
			d.Checks = recordsTable(f)
			found = true
			continue
		}
		d.Other = flatten(f, k, d.Other)
	}
	return d, nil
}

// hostHeadline picks a few identifying facts from a fingerprint for the
// index and the page header: host name, CPU model, CPU count, memory and
// virtualization. Keys are matched by their dotted suffix, so the
// fingerprint's nesting may change without losing the headline.
func hostHeadline(fp []kv) string {
	want := []struct {
		keys []string
		unit func(string) string
	}{
		{keys: []string{"hostname", "host_name"}},
		{keys: []string{"cpu.model", "cpu.model_name", "cpu_model", "model_name"}},
		{keys: []string{"cpu.threads", "cpu.logical_cpus", "logical_cpus", "online_cpus"}, unit: func(v string) string { return v + " CPUs" }},
		{keys: []string{"memory.total_bytes"}, unit: func(v string) string { return bytesText(v) + " RAM" }},
		{keys: []string{"memory.total_mb"}, unit: func(v string) string { return v + " MB RAM" }},
		{keys: []string{"virtualization.vm", "virtualization"}},
		{keys: []string{"virtualization.container"}, unit: func(v string) string { return "in " + v }},
	}
	var parts []string
	for _, w := range want {
	next:
		for _, k := range w.keys {
			for _, f := range fp {
				if f.Key != k && !strings.HasSuffix(f.Key, "."+k) {
					continue
				}
				if v := strings.TrimSpace(f.Value); v != "" && v != "none" && v != "unknown" && v != "0" {
					if w.unit != nil {
						v = w.unit(v)
					}
					parts = append(parts, v)
					break next
				}
			}
		}
	}
	return strings.Join(parts, " · ")
}

// bytesText renders a byte count in GiB or MiB.
func bytesText(v string) string {
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v
	}
	if n >= 1<<30 {
		return strconv.FormatFloat(n/(1<<30), 'f', 1, 64) + " GiB"
	}
	return strconv.FormatFloat(n/(1<<20), 'f', 0, 64) + " MiB"
}
