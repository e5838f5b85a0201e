package seeds

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/experiments"
)

// TestTablesAgreeWithManifests: tables.csv parses, and each figure names
// an experiment of the catalog and one of its variants, so the report can
// set it beside that variant's medians.
func TestTablesAgreeWithManifests(t *testing.T) {
	figs, err := Tables()
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) == 0 {
		t.Fatal("tables.csv holds no figure")
	}
	variants := map[string]map[string]bool{}
	for _, f := range figs {
		vs, ok := variants[f.Experiment]
		if !ok {
			vs = map[string]bool{}
			path := filepath.Join("..", f.Experiment+".yaml")
			m, err := experiments.Load(path, "")
			if m == nil {
				t.Errorf("%s:%d: experiment %s: %v", TablesFile, f.Line, f.Experiment, err)
			} else {
				for _, v := range m.Variants {
					vs[v.Name] = true
				}
			}
			variants[f.Experiment] = vs
		}
		if len(vs) > 0 && !vs[f.Variant] {
			t.Errorf("%s:%d: variant %q is not a variant of experiments/%s.yaml", TablesFile, f.Line, f.Variant, f.Experiment)
		}
	}
	// Issue 12: the connection-burst report shows seed 002's table.
	burst, err := TableFor("connection-burst")
	if err != nil || len(burst) == 0 || burst[0].Seed != "002" {
		t.Errorf("connection-burst: %d figures (%v), want seed 002's", len(burst), err)
	}
}

// TestParseTables: what a broken table says, a row per mistake, each
// naming the line, the field and the fix.
func TestParseTables(t *testing.T) {
	const head = "seed,experiment,scenario,users,approach,variant,metric,value,note,from\n"
	const row = "002,connection-burst,60k,60000,loom-netty,loom-netty,p50_ms,100,,the 60k table\n"
	tests := []struct {
		name, why, csv string
		want           []string // fragments of the error; none: valid
	}{
		{"valid", "figures as the write-ups give them: plain, approximate, bounds and ranges",
			head + row + "002,connection-burst,60k,60000,loom-tomcat,loom-tomcat,error_pct,>99.9,refused,ladder\n" +
				"002,connection-burst,10k,10000,loom-netty,loom-netty,target_cpu_pct,~32-34,\"average, % of the host\",TL;DR\n", nil},
		{"header", "the columns are fixed", strings.Replace(head, "note", "remark", 1) + row, []string{"tables.csv:1: header: is"}},
		{"field count", "an unquoted comma splits a field", head + "002,connection-burst,60k,60000,loom-netty,loom-netty,p50_ms,100,a, b,c\n",
			[]string{"tables.csv:2: line: has 11 fields, want 10", "quote fields that hold commas"}},
		{"unknown write-up", "there are five seeds", head + strings.Replace(row, "002", "007", 1), []string{`tables.csv:2: seed: "007" is not one of the five write-ups`}},
		{"write-up without a host", "the scale a table is read at must be stated", head + strings.Replace(row, "002", "004", 1),
			[]string{"tables.csv:2: seed: write-up 004 has no entry in seeds.Hosts"}},
		{"metric", "a figure sits beside one of our summary metrics", head + strings.Replace(row, "p50_ms", "latency", 1),
			[]string{`tables.csv:2: metric: "latency" is not a metric of summary.csv (use one of`}},
		{"value with a unit", "units go in the note, so a value stays a figure", head + strings.Replace(row, ",100,", ",100 ms,", 1),
			[]string{`tables.csv:2: value: "100 ms" is not a figure`, "put those in note"}},
		{"thousands separator", "10,971,441 must be written as a number", head + strings.Replace(row, ",100,", ",\"10,971,441\",", 1),
			[]string{`tables.csv:2: value: "10,971,441" is not a figure`}},
		{"users", "the scale of the seed's scenario is a count", head + strings.Replace(row, "60000", "60k", 1),
			[]string{`tables.csv:2: users: "60k" is not a positive whole number`}},
		{"variant", "a variant is named as in the manifest", head + strings.Replace(row, "netty,loom-netty", "netty,Loom Netty", 1),
			[]string{`tables.csv:2: variant: "Loom Netty" is not a variant name`}},
		{"source", "every figure says where in the write-up it comes from", head + strings.TrimSuffix(row, "the 60k table\n") + "\n",
			[]string{"tables.csv:2: from: is empty"}},
		{"duplicate", "one figure per cell", head + row + row, []string{"tables.csv:3: metric: p50_ms of loom-netty in 60k is already on line 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			figs, err := parseTables("tables.csv", []byte(tt.csv))
			if len(tt.want) == 0 {
				if err != nil || len(figs) == 0 {
					t.Fatalf("%s: %v", tt.why, err)
				}
				if figs[0].Users != 60000 || figs[0].Line != 2 || figs[2].Note != "average, % of the host" {
					t.Errorf("%s: parsed %+v", tt.why, figs)
				}
				return
			}
			if err == nil {
				t.Fatalf("%s: no error", tt.why)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s:\n got: %v\nwant: %s", tt.why, err, w)
				}
			}
		})
	}
}
