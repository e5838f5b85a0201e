package experiments

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Limits on what a manifest may ask for. Each is far above anything the
// catalog needs and far below what would exhaust the machine, so a typo or
// a hostile file is an error at load time instead of a hang or an
// out-of-memory crash hours into a run. The reason for each is beside it.
const (
	// MaxFileBytes: the largest catalog manifest is ~8 KB. yaml.v3 parses
	// every node before any limit of ours can look at the tree, at a few
	// microseconds and ~200 bytes a node, so 128 KiB of "0," (65,000
	// nodes) parses in well under a second and ~15 MB.
	MaxFileBytes = 128 << 10
	// MaxNodes bounds the tree after aliases are expanded: a 17 KB alias
	// bomb fans out to 10^9 nodes, and the budget stops the walk after
	// MaxNodes steps, long before memory runs out.
	MaxNodes = 20000
	// MaxDepth bounds nesting (a manifest is about 8 levels deep) and stops
	// an alias that refers to its own ancestor.
	MaxDepth = 32
	// MaxList bounds any one list (sweep values, requests, stages, claims,
	// command arguments); lists in the catalog have at most a dozen items.
	MaxList = 1000
	// MaxVariants: each variant is a target to start per sweep point.
	MaxVariants = 100
	// MaxSweepValues: every value is at least one more JVM start per variant.
	MaxSweepValues = 64
	// MaxTrials per cell: past ~20 a cell's verdict stops changing, and
	// 1000 trials of even a one-second load is a day per cell.
	MaxTrials = 1000
	// MaxCells is variants x sweep points: each cell is a target start
	// (5-15 s for Spring here) and a warm-up.
	MaxCells = 1000
	// MaxJobs is cells x trials, the rows of the schedule.
	MaxJobs = 100000
	// MaxUsers bounds users, bursts and in-flight caps: each is a socket
	// and a goroutine in the generator, and past a million the kernel's
	// port range is exhausted long before.
	MaxUsers = 1000000
	// MaxWeight keeps the sum of a request mix's weights far from integer
	// overflow in the generator's weighted pick.
	MaxWeight = 1000000
	// MaxOrders bounds the seeded database (an order is ~1 KB on disk).
	MaxOrders = 10000000
)

// Time caps: a warm-up or offset past them is a typo (48h for 48s) that
// would otherwise make the run hang with no output.
const (
	MaxLoadDuration = time.Hour              // one trial's duration, a ramp stage
	MinLoadDuration = 100 * time.Millisecond // below it a rate is mostly set-up
	MaxWarmup       = 30 * time.Minute       // untimed load before each trial
	MaxStart        = 30 * time.Minute       // a group's offset from the trial start
	MaxTimeout      = 10 * time.Minute       // response and connect time-outs
	MaxThink        = time.Minute            // one think time
	MaxStartup      = 30 * time.Minute       // waiting for a target to become ready
	MaxCoolDown     = 30 * time.Minute       // waiting for a quiet host, pauses
	MaxDelay        = time.Minute            // the downstream's answer delay
)

// readDoc parses data into one YAML mapping with aliases and merge keys
// (<<:) expanded, so that everything after it walks a plain tree of at
// most MaxNodes nodes. It checks the size before parsing and the node
// budget while expanding, so a bomb is caught before any other walk.
func readDoc(file string, data []byte) (*yaml.Node, error) {
	if len(data) > MaxFileBytes {
		return nil, Problems{{File: file, Msg: fmt.Sprintf("file is %d bytes, more than the %d a manifest may have (a manifest describes an experiment; put data elsewhere)", len(data), MaxFileBytes)}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Problems{{File: file, Line: 1, Col: 1, Msg: "the file is empty (a manifest is a YAML mapping with name, variants, load and trials; see experiments/io-bound.yaml)"}}
		}
		return nil, Problems{syntaxAt(file, data, err)}
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, Problems{syntaxProblem(file, err)}
	case !emptyDoc(&next):
		line, col := next.Line, next.Column
		if len(next.Content) > 0 {
			line, col = next.Content[0].Line, next.Content[0].Column
		}
		return nil, Problems{{File: file, Line: line, Col: col, Msg: "a second YAML document (after ---) would be ignored; a manifest is one document (remove the --- and merge it, or make it its own file)"}}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, Problems{{File: file, Line: 1, Col: 1, Msg: "a manifest is a YAML mapping with name, variants, load and trials (see experiments/io-bound.yaml)"}}
	}
	x := expander{file: file, budget: MaxNodes}
	root := x.expand(doc.Content[0], 0, "")
	if len(x.probs) > 0 {
		return nil, x.probs
	}
	return root, nil
}

// syntaxAt is syntaxProblem with a position for the errors yaml.v3 gives
// without a line (control characters, bad UTF-8): the first offending byte.
func syntaxAt(file string, data []byte, err error) Problem {
	p := syntaxProblem(file, err)
	if p.Line != 0 {
		return p
	}
	line, col := 1, 1
	for i, r := range string(data) {
		if r == utf8.RuneError || (r < ' ' && r != '\n' && r != '\r' && r != '\t') || r == 0x7f {
			p.Line, p.Col = line, col
			p.Msg += fmt.Sprintf(" (byte %d; a manifest is UTF-8 text: remove the binary data)", i)
			return p
		}
		if r == '\n' {
			line, col = line+1, 0
		}
		col++
	}
	return p
}

// emptyDoc tells a trailing "---" with nothing after it (harmless) from a
// second document with content.
func emptyDoc(n *yaml.Node) bool {
	if n.Kind == 0 {
		return true
	}
	return n.Kind == yaml.DocumentNode && len(n.Content) == 1 && n.Content[0].Kind == yaml.ScalarNode &&
		n.Content[0].Tag == "!!null" && n.Content[0].Value == ""
}

// expander copies a parsed tree with aliases replaced by copies of what
// they name and merge keys folded into their mapping, spending one unit of
// budget per node it creates.
type expander struct {
	file   string
	budget int
	probs  Problems
	over   bool
}

func (x *expander) fail(n *yaml.Node, path, msg string) {
	if !x.over {
		x.probs = append(x.probs, Problem{File: x.file, Line: n.Line, Col: n.Column, Field: path, Msg: msg})
	}
	x.over = true
}

func (x *expander) expand(n *yaml.Node, depth int, path string) *yaml.Node {
	if x.over {
		return nil
	}
	if depth > MaxDepth {
		x.fail(n, path, fmt.Sprintf("nested more than %d levels deep (an alias that refers to its own parent does this; a manifest needs about 8)", MaxDepth))
		return nil
	}
	for n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			x.fail(n, path, "alias to an unknown anchor (define &name before using *name)")
			return nil
		}
		n = n.Alias
		if depth++; depth > MaxDepth {
			x.fail(n, path, "aliases refer to each other in a loop (each *name must name an anchor defined before it)")
			return nil
		}
	}
	if x.budget--; x.budget < 0 {
		x.fail(n, path, fmt.Sprintf("more than %d YAML nodes once aliases are expanded (aliases that fan out, like a billion laughs, do this; write the values out, a manifest needs a few hundred)", MaxNodes))
		return nil
	}
	c := *n
	c.Anchor, c.Alias, c.Content = "", nil, nil
	switch n.Kind {
	case yaml.SequenceNode:
		if len(n.Content) > MaxList {
			x.fail(n, path, fmt.Sprintf("a list of %d items, more than the %d allowed (shorten it)", len(n.Content), MaxList))
			return nil
		}
		for i, e := range n.Content {
			c.Content = append(c.Content, x.expand(e, depth+1, fmt.Sprintf("%s[%d]", path, i)))
		}
	case yaml.MappingNode:
		x.mapping(&c, n, depth, path)
	default:
		c.Content = nil
		// go-echarts marks functions in chart options with __f__ and the
		// report strips the markers from every string, so this text in any
		// value that reaches a chart would run as script in the page.
		if strings.Contains(n.Value, "__f__") {
			x.probs = append(x.probs, Problem{File: x.file, Line: n.Line, Col: n.Column, Field: path,
				Msg: "holds __f__, the chart library's function marker, which would run as script in the report (remove it)"})
		}
	}
	if x.over {
		return nil
	}
	return &c
}

// mapping expands n's pairs into c. Merge keys follow the YAML merge-key
// spec: keys written in the mapping win over merged ones, and among the
// mappings of "<<: [*a, *b]" the earlier wins.
func (x *expander) mapping(c, n *yaml.Node, depth int, path string) {
	if len(n.Content)/2 > MaxList {
		x.fail(n, path, fmt.Sprintf("a mapping of %d keys, more than the %d allowed (shorten it)", len(n.Content)/2, MaxList))
		return
	}
	var merged []*yaml.Node // pairs from merge keys, in priority order
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			src := x.expand(v, depth+1, path)
			if x.over {
				return
			}
			switch src.Kind {
			case yaml.MappingNode:
				merged = append(merged, src.Content...)
			case yaml.SequenceNode:
				for _, m := range src.Content {
					if m.Kind != yaml.MappingNode {
						x.fail(k, path, "<< merges mappings only (write <<: *anchor or <<: [*a, *b], each naming a mapping)")
						return
					}
					merged = append(merged, m.Content...)
				}
			default:
				x.fail(k, path, "<< merges mappings only (write <<: *anchor naming a mapping)")
				return
			}
			continue
		}
		kc := x.expand(k, depth+1, path)
		vc := x.expand(v, depth+1, join(path, k.Value))
		if x.over {
			return
		}
		c.Content = append(c.Content, kc, vc)
	}
	have := map[string]bool{}
	for i := 0; i+1 < len(c.Content); i += 2 {
		have[c.Content[i].Value] = true
	}
	for i := 0; i+1 < len(merged); i += 2 {
		if k := merged[i].Value; !have[k] {
			have[k] = true
			c.Content = append(c.Content, merged[i], merged[i+1])
		}
	}
}
