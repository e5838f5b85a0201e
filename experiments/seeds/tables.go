package seeds

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/threadlab/threadlab/measure/metric"
)

// The seed write-ups' own results tables, as data: tables.csv holds, one
// figure per line, what a write-up measured per approach and scenario,
// keyed by the seed and the experiment that re-runs it, so the report can
// set the seed's row beside our medians (render/report/seedtable.go).
// Figures are copied as the write-up gives them ("~42", ">99.9", a range
// "32-34"), never recomputed, except that a request count over the seed's
// run becomes a rate (note says the count and the duration) so it can sit
// beside our ok_rps.

//go:embed tables.csv
var tablesCSV []byte

// TablesFile is tables.csv's path in the repository, for messages.
const TablesFile = "experiments/seeds/tables.csv"

// Figure is one number of a seed's results table.
type Figure struct {
	Seed       string // "002"
	Experiment string // the experiment that re-runs the scenario: "connection-burst"
	Scenario   string // the seed's name for it: "60k-vus-and-rps-get-movies"
	Users      int    // the seed's connections or concurrent requests in that scenario
	Approach   string // the seed's name for the approach
	Variant    string // our variant that re-runs the approach
	Metric     string // our metric the figure sits beside (measure/metric)
	Value      string // as the write-up gives it: 100, ~42, >99.9, 32-34
	Note       string // what the seed measured, where it differs from ours: "average, % of the whole host"
	From       string // where in the write-up the figure comes from
	Line       int    // line in tables.csv
}

// Hosts says, per seed, what ran its table: the scale our figures are set
// beside (a reader must not compare absolute numbers across the two).
var Hosts = map[string]string{
	"000": "a 2 vCPU sandbox (Spring Boot 4.1.1, JDK 25), the write-up's own Java load generator on the same machine; platform and virtual threads from single trials, WebFlux the median of 5",
	"002": "an Intel Core i5-14600K, 14 cores (6 P + 8 E) and 20 hardware threads, 64 GiB, bare metal (Ubuntu 24.04, Corretto 25, Spring Boot 4.1), k6 on the same machine, a 2 GiB heap, 180 s per scenario, one run per approach, the host tuned for connections (somaxconn 65535, nofile 1M)",
}

var (
	tablesHeader = []string{"seed", "experiment", "scenario", "users", "approach", "variant", "metric", "value", "note", "from"}
	seedRE       = regexp.MustCompile(`^\d{3}$`)
	nameRE       = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	valueRE      = regexp.MustCompile(`^[~<>]?\d+(\.\d+)?(-\d+(\.\d+)?)?$`)
)

// Tables returns every figure of tables.csv in file order.
func Tables() ([]Figure, error) { return parseTables(TablesFile, tablesCSV) }

// TableFor returns the figures set beside an experiment, in file order.
func TableFor(experiment string) ([]Figure, error) {
	all, err := Tables()
	if err != nil {
		return nil, err
	}
	var out []Figure
	for _, f := range all {
		if f.Experiment == experiment {
			out = append(out, f)
		}
	}
	return out, nil
}

// parseTables reads a tables file, reporting every problem with its line
// and field and how to fix it.
func parseTables(file string, data []byte) ([]Figure, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	var out []Figure
	var errs []error
	bad := func(line int, field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s: %s", file, line, field, fmt.Sprintf(format, a...)))
	}
	seen := map[string]int{}
	for first := true; ; first = false {
		rec, err := r.Read()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				errs = append(errs, fmt.Errorf("%s: %w (quote fields that hold commas)", file, err))
			}
			break
		}
		line, _ := r.FieldPos(0)
		if first {
			if !slices.Equal(rec, tablesHeader) {
				bad(line, "header", "is %q, want %q", strings.Join(rec, ","), strings.Join(tablesHeader, ","))
				break
			}
			continue
		}
		if len(rec) != len(tablesHeader) {
			bad(line, "line", "has %d fields, want %d (%s); quote fields that hold commas", len(rec), len(tablesHeader), strings.Join(tablesHeader, ","))
			continue
		}
		f := Figure{Seed: rec[0], Experiment: rec[1], Scenario: rec[2], Approach: rec[4], Variant: rec[5], Metric: rec[6],
			Value: rec[7], Note: rec[8], From: rec[9], Line: line}
		if !seedRE.MatchString(f.Seed) || !slices.ContainsFunc(Writeups, func(w Writeup) bool { return w.ID == f.Seed }) {
			bad(line, "seed", "%q is not one of the five write-ups (write 000 to 004)", f.Seed)
		} else if Hosts[f.Seed] == "" {
			bad(line, "seed", "write-up %s has no entry in seeds.Hosts (say what ran its table: hardware, load generator, durations)", f.Seed)
		}
		if !nameRE.MatchString(f.Experiment) {
			bad(line, "experiment", "%q is not an experiment name (lowercase letters, digits and dashes, like connection-burst)", f.Experiment)
		}
		if !nameRE.MatchString(f.Variant) {
			bad(line, "variant", "%q is not a variant name (the experiment's own name for the approach, like loom-netty)", f.Variant)
		}
		for _, x := range []struct{ name, v string }{{"scenario", f.Scenario}, {"approach", f.Approach}, {"from", f.From}} {
			if strings.TrimSpace(x.v) == "" {
				bad(line, x.name, "is empty (say it as the write-up does)")
			}
		}
		if n, err := strconv.Atoi(rec[3]); err != nil || n <= 0 {
			bad(line, "users", "%q is not a positive whole number (the scenario's connections or concurrent requests)", rec[3])
		} else {
			f.Users = n
		}
		if d, ok := metric.Lookup(f.Metric); !ok || !d.Claim {
			bad(line, "metric", "%q is not a metric of summary.csv (use one of %s)", f.Metric, strings.Join(metric.Claimable(), ", "))
		}
		if !valueRE.MatchString(f.Value) {
			bad(line, "value", "%q is not a figure (write it as the seed does: 100, 75.5, ~42, >99.9 or 32-34; no thousands separators or units, put those in note)", f.Value)
		}
		key := strings.Join([]string{f.Seed, f.Experiment, f.Scenario, f.Variant, f.Metric}, "|")
		if at, dup := seen[key]; dup {
			bad(line, "metric", "%s of %s in %s is already on line %d (one figure per seed, experiment, scenario, variant and metric)", f.Metric, f.Variant, f.Scenario, at)
		}
		seen[key] = line
		out = append(out, f)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
