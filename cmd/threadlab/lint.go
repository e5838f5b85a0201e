package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/threadlab/threadlab/experiments"
)

func init() {
	register("lint", "validate manifests, print the commands they run, warn about weak methodology", runLint)
}

// runLint validates each manifest under every profile it offers, prints
// every command the manifest will run (a manifest is code: a reviewer
// must see what it starts), then the methodology warnings of its default
// form. Invalid manifests fail (exit 1); warnings do not, unless --strict.
// Problems with this host only (too few open files for a profile's load)
// are warnings: the manifest may run on a bigger host.
func runLint(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lint", flag.ContinueOnError)
	strict := fs.Bool("strict", false, "fail on methodology warnings too")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: threadlab lint [--strict] experiments/<name>.yaml ...")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args, stderr); help || err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usagef("lint needs at least one manifest")
	}
	invalid, warned := 0, 0
	for _, path := range fs.Args() {
		bad, w := lintOne(path, stdout)
		warned += w
		if bad {
			invalid++
		}
	}
	switch {
	case invalid > 0:
		return fmt.Errorf("%d of %d manifest(s) invalid", invalid, fs.NArg())
	case warned > 0 && *strict:
		return fmt.Errorf("%d methodology warning(s) (--strict)", warned)
	}
	fmt.Fprintf(stdout, "%d manifest(s) valid, %d warning(s)\n", fs.NArg(), warned)
	return nil
}

// lintOne lints one manifest file and reports whether it is invalid and
// how many warnings it printed.
func lintOne(path string, stdout io.Writer) (invalid bool, warned int) {
	m, err := experiments.Load(path, "")
	if err != nil && !experiments.HostOnly(err) {
		fmt.Fprintln(stdout, err)
		return true, 0
	}
	warned += printHost(stdout, err, "")
	shown := map[string]bool{}
	for _, c := range experiments.Commands(m) {
		shown[c.Field+c.String()] = true
		fmt.Fprintf(stdout, "%s: %s: runs: %s\n", path, c.Field, c)
	}
	ws := experiments.Lint(m)
	for _, w := range ws {
		shown[w.String()] = true
	}
	for _, p := range experiments.ProfileNames(m)[1:] {
		mp, err := experiments.Load(path, p)
		switch {
		case err == nil:
			// A profile may change what runs: show what differs.
			for _, c := range experiments.Commands(mp) {
				if !shown[c.Field+c.String()] {
					shown[c.Field+c.String()] = true
					fmt.Fprintf(stdout, "%s: %s: runs: %s (with --profile %s)\n", path, c.Field, c, p)
				}
			}
			for _, w := range experiments.TrustWarnings(mp) {
				if !shown[w.String()] {
					shown[w.String()] = true
					ws = append(ws, experiments.Warning{File: w.File, Field: w.Field, Msg: w.Msg + " (with --profile " + p + ")"})
				}
			}
		case experiments.HostOnly(err):
			warned += printHost(stdout, err, p)
		default:
			invalid = true
			var ps experiments.Problems
			if errors.As(err, &ps) {
				shown, more := ps.Shown()
				for _, x := range shown {
					fmt.Fprintf(stdout, "%s (with --profile %s)\n", x, p)
				}
				if more != "" {
					fmt.Fprintf(stdout, "%s (with --profile %s)\n", more, p)
				}
			} else {
				fmt.Fprintf(stdout, "%s (with --profile %s)\n", err, p)
			}
		}
	}
	for _, w := range ws {
		warned++
		fmt.Fprintln(stdout, w)
	}
	return invalid, warned
}

// printHost prints host-only problems as warnings and returns how many.
func printHost(stdout io.Writer, err error, profile string) int {
	var ps experiments.Problems
	if err == nil || !errors.As(err, &ps) {
		return 0
	}
	with := ""
	if profile != "" {
		with = " (with --profile " + profile + ")"
	}
	for _, p := range ps {
		loc := p.File
		if p.Line > 0 {
			loc = fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
		}
		fmt.Fprintf(stdout, "%s: %s: warning: on this host: %s%s\n", loc, p.Field, p.Msg, with)
	}
	return len(ps)
}
