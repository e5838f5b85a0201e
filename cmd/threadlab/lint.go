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
	register("lint", "validate manifests and warn about weak methodology", runLint)
}

// runLint validates each manifest under every profile it offers, then
// prints the methodology warnings of its default form. Invalid manifests
// fail (exit 1); warnings do not, unless --strict.
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
		m, err := experiments.Load(path, "")
		if err != nil {
			invalid++
			fmt.Fprintln(stdout, err)
			continue
		}
		bad := false
		for _, p := range experiments.ProfileNames(m)[1:] {
			if _, err := experiments.Load(path, p); err != nil {
				bad = true
				var ps experiments.Problems
				if errors.As(err, &ps) {
					for _, x := range ps {
						fmt.Fprintf(stdout, "%s (with --profile %s)\n", x, p)
					}
				} else {
					fmt.Fprintf(stdout, "%s (with --profile %s)\n", err, p)
				}
			}
		}
		if bad {
			invalid++
		}
		for _, w := range experiments.Lint(m) {
			warned++
			fmt.Fprintln(stdout, w)
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
