package record

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// The values threadlab writes into trials.csv, warmup.csv and summary.csv
// are counts, times, rates and shares: finite and never negative (a NaN is
// "not measured" in a few float columns). A file that says otherwise was
// edited or corrupted; read on, it reached a verdict: a wall time of +Inf
// "cleared" a claim of at least 1.1x, -300 ms contradicted one (hostile
// inputs, wave 3 session 30). ReadCSV refuses such a row, naming its
// line and column (rowChecker).

// checkRow refuses a trial row threadlab cannot have written.
// A zero is no such proof: a file from before a column reads it as 0, and
// keeps the 0 when an append rewrites it under today's header.
func (t *Trial) checkRow() (string, string) {
	if col, why := nonNegative(reflect.ValueOf(t).Elem(), true); why != "" {
		return col, why
	}
	switch {
	case t.Errors > t.Requests:
		return "errors", fmt.Sprintf("%d errors of %d requests", t.Errors, t.Requests)
	case t.ErrorPct > 100+1e-9:
		return "error_pct", fmt.Sprintf("%g%% of the requests failed", t.ErrorPct)
	}
	return "", ""
}

// checkRow refuses a summary row threadlab cannot have written: its
// median, range, mean and spread are finite and not negative once a cell
// has trials (ci_low, ci_high and cv_pct are NaN when too few are).
func (s *Summary) checkRow() (string, string) {
	if col, why := nonNegative(reflect.ValueOf(s).Elem(), true); why != "" {
		return col, why
	}
	if s.N > 0 {
		for _, c := range []struct {
			col string
			x   float64
		}{{"median", s.Median}, {"min", s.Min}, {"max", s.Max}, {"mean", s.Mean}} {
			if math.IsNaN(c.x) {
				return c.col, fmt.Sprintf("NaN for a cell of %d trials", s.N)
			}
		}
		if s.Min > s.Median || s.Median > s.Max {
			return "median", fmt.Sprintf("%s outside min %s .. max %s", fmtNum(s.Median), fmtNum(s.Min), fmtNum(s.Max))
		}
	}
	return "", ""
}

// nonNegative finds the first numeric csv column of the struct v that is
// infinite or negative, or NaN when nanOK is false; "" when none is.
func nonNegative(v reflect.Value, nanOK bool) (string, string) {
	t := v.Type()
	for i := range t.NumField() {
		col, _, _ := strings.Cut(t.Field(i).Tag.Get("csv"), ",")
		if col == "" || col == "-" {
			continue
		}
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Float32, reflect.Float64:
			x := f.Float()
			switch {
			case math.IsInf(x, 0):
				return col, fmtNum(x) + " is not a finite measurement"
			case math.IsNaN(x) && !nanOK:
				return col, "NaN where a measurement belongs"
			case x < 0:
				return col, fmtNum(x) + " is negative (threadlab writes counts, times, rates and shares)"
			}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if f.Int() < 0 {
				return col, strconv.FormatInt(f.Int(), 10) + " is negative"
			}
		}
	}
	return "", ""
}

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// consistent checks what the run's files say of each other, so that a
// file from another run or edited rows do not reach a verdict unnoticed:
// run.json names the run; the manifest as run names the same experiment;
// every trial row is of a variant and group run.json lists; a finished
// cell has no more forks than it started (run.json's cells); and a
// trials.csv cut short or empty under a finished run is a Problem.
func (r *Run) consistent() error {
	m := &r.Meta
	path := func(name string) string { return filepath.Join(r.Dir, name) }
	if m.ID == "" || m.Experiment == "" {
		r.Problems = append(r.Problems, fmt.Sprintf("%s names no run id or experiment: the design and host below are missing, not measured as shown (restore it from git)", RunFile))
	}
	if len(r.Manifest) > 0 && m.Experiment != "" {
		if mi, err := ParseManifestInfo(r.Manifest); err == nil && mi.Name != "" && mi.Name != m.Experiment {
			return fmt.Errorf("%s is experiment %q's, but %s says this run is %q's: the manifest as run was replaced (restore it from git)", path(ManifestFile), mi.Name, path(RunFile), m.Experiment)
		}
	}
	variants, groups := setOf(m.Variants), setOf(m.Groups)
	type cell struct{ v, p string }
	forks := map[cell]map[int]bool{}
	for i, t := range r.Trials {
		switch {
		case len(variants) > 0 && !variants[t.Variant]:
			return fmt.Errorf("%s line %d, column variant: %q is not one of the run's variants (%s in %s): rows of another run, or an edit (restore the file from git)",
				path(TrialsFile), i+2, t.Variant, strings.Join(m.Variants, ", "), RunFile)
		case len(groups) > 0 && !groups[t.Group]:
			return fmt.Errorf("%s line %d, column group: %q is not one of the run's request groups (%s in %s): rows of another run, or an edit (restore the file from git)",
				path(TrialsFile), i+2, t.Group, strings.Join(m.Groups, ", "), RunFile)
		}
		c := cell{t.Variant, t.Point}
		if forks[c] == nil {
			forks[c] = map[int]bool{}
		}
		forks[c][t.Fork] = true
	}
	if m.State == "complete" {
		for _, cs := range m.Cells {
			if n := len(forks[cell{cs.Variant, cs.Point}]); cs.Runs > 0 && n > cs.Runs {
				return fmt.Errorf("%s: cell %s%s has rows of %d forks, but %s says it started %d: rows were added (restore the file from git)",
					path(TrialsFile), cs.Variant, pointSuffix(cs.Point), n, RunFile, cs.Runs)
			}
		}
		if len(r.Trials) == 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("%s has no trial rows, though %s says the run is complete: nothing on this page can be checked against data (restore the file from git)", TrialsFile, RunFile))
		}
	}
	if torn, err := endsTorn(path(TrialsFile)); err == nil && torn {
		r.Problems = append(r.Problems, fmt.Sprintf("%s ends in a line without its newline, left out: a write cut short by a crash, or an edit (the other rows stand)", TrialsFile))
	}
	return nil
}

func setOf(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func pointSuffix(p string) string {
	if p == "" {
		return ""
	}
	return " at " + p
}

// endsTorn reports whether a non-empty file's last byte is not a newline.
func endsTorn(path string) (bool, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return false, err
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, st.Size()-1); err != nil {
		return false, err
	}
	return b[0] != '\n', nil
}

// checkRow refuses a per-second row threadlab cannot have written (an
// empty gauge reads NaN: not measured).
func (s *Sample) checkRow() (string, string) {
	return nonNegative(reflect.ValueOf(s).Elem(), true)
}

// checkRow refuses a percentile row threadlab cannot have written.
func (q *Quantile) checkRow() (string, string) {
	if col, why := nonNegative(reflect.ValueOf(q).Elem(), false); why != "" {
		return col, why
	}
	if q.Percentile > 100 {
		return "percentile", fmtNum(q.Percentile) + " is above 100"
	}
	return "", ""
}
