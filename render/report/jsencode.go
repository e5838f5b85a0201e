package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"
)

// ourFuncs holds the code of every JavaScript function literal this
// package put into a chart option, keyed by go-echarts' marked form
// ("__f__code__f__", newlines and tabs removed as opts.FuncOpts does).
// Only these strings are written as code; the set is filled from string
// constants in our source, never from data.
var ourFuncs sync.Map // marked string -> code

// fn marks code as one of our own function literals for a go-echarts
// option field typed types.FuncStr.
func fn(code string) types.FuncStr {
	marked := string(opts.FuncOpts(code))
	ourFuncs.Store(marked, strings.TrimSuffix(strings.TrimPrefix(marked, "__f__"), "__f__"))
	return types.FuncStr(marked)
}

// encodeOption decodes go-echarts' option JSON, applies patches and writes
// it as a JavaScript expression: JSON, except that strings registered by
// fn become the function code itself. Map keys are written in sorted
// order, so the output is the same on every render.
func encodeOption(raw string, patches []func(map[string]any)) (string, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return "", fmt.Errorf("decode chart option: %w", err)
	}
	for _, p := range patches {
		p(m)
	}
	var b bytes.Buffer
	if err := writeJS(&b, m); err != nil {
		return "", err
	}
	return b.String(), nil
}

// writeJS writes a decoded JSON value. Strings go through encoding/json
// with HTML escaping, which writes <, > and & as \u003c, \u003e, \u0026
// (and U+2028/2029 escaped), so no string can close the script element or
// start a comment the HTML parser would react to.
func writeJS(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case json.Number:
		b.WriteString(x.String())
	case float64, int, int64:
		fmt.Fprint(b, x)
	case string:
		if code, ok := ourFuncs.Load(x); ok {
			b.WriteString(code.(string))
			return nil
		}
		s, err := json.Marshal(x) // HTML-escaping by default
		if err != nil {
			return err
		}
		b.Write(s)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJS(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			s, err := json.Marshal(k)
			if err != nil {
				return err
			}
			b.Write(s)
			b.WriteByte(':')
			if err := writeJS(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("chart option: unexpected %T", v)
	}
	return nil
}
