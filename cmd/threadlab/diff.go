package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/judge/diff"
	"github.com/threadlab/threadlab/measure/metric"
	"github.com/threadlab/threadlab/store/record"
)

func init() {
	register("diff", "compare two runs benchstat-style, fingerprints first (--format markdown for a pull request)", runDiff)
}

// runDiff compares run B (new) against run A (old): the fingerprint
// differences first, then a table per metric with medians, intervals, the
// change and its Holm-corrected Mann-Whitney p-value. With
// --fail-on-regression a significant change for the worse exits 1, so CI
// can gate on it.
func runDiff(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	format := fs.String("format", "text", "output format: markdown (to paste into a pull request), html (a standalone comparison page) or text")
	metrics := fs.String("metric", "", "comma-separated trials.csv columns, one table each (default: the primary metric, then "+strings.Join(metric.Shown(metric.InDiff), ", ")+")")
	failOn := fs.Bool("fail-on-regression", false, "exit 1 when any metric got significantly worse")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: threadlab diff [--format markdown|html|text] [--metric rps,p99_ms,...] [--fail-on-regression] data/<exp>/<old-run> data/<exp>/<new-run>")
		fs.PrintDefaults()
	}
	// Flags may come before, between or after the two run directories
	// (threadlab diff A B --format markdown reads naturally in a CI script).
	var dirs []string
	for {
		if help, err := parseFlagsOnly(fs, args, stderr); help || err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		dirs = append(dirs, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(dirs) != 2 {
		fs.Usage()
		return usagef("diff takes two run directories, the old one then the new one (got %d)", len(dirs))
	}
	var opt diff.Options
	if *metrics != "" {
		known := metric.Names()
		for _, m := range strings.Split(*metrics, ",") {
			m = strings.TrimSpace(m)
			if !slices.Contains(known, m) {
				return usagef("--metric %q is not a numeric column of trials.csv (use %s)", m, strings.Join(known, ", "))
			}
			opt.Metrics = append(opt.Metrics, m)
		}
	}
	var render func(*diff.Result, io.Writer) error
	switch *format {
	case "markdown", "md":
		render = (*diff.Result).Markdown
	case "text":
		render = (*diff.Result).Text
	case "html":
		render = func(r *diff.Result, w io.Writer) error { return r.HTML(w, diff.Links{}) }
	default:
		return usagef("--format %q: use markdown, html or text", *format)
	}
	var runs [2]*record.Run
	for i, dir := range dirs {
		r, err := record.Read(dir)
		if err != nil {
			return fmt.Errorf("%s run: %w", [2]string{"old", "new"}[i], err)
		}
		warnProblems(stderr, r)
		runs[i] = r
	}
	res, err := diff.Runs(runs[0], runs[1], opt)
	if err != nil {
		return err
	}
	if err := render(res, stdout); err != nil {
		return fmt.Errorf("write the comparison: %w", err)
	}
	if regs := res.Regressions(); *failOn && len(regs) > 0 {
		lines := make([]string, len(regs))
		for i, g := range regs {
			lines[i] = g.String()
		}
		return fmt.Errorf("%d significant regression(s) (--fail-on-regression):\n  %s", len(regs), strings.Join(lines, "\n  "))
	}
	return nil
}
