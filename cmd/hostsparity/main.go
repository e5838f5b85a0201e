package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/threadlab/threadlab/store/record"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the command: 0 when no judged figure is outside the band or
// missing (a "not settled" one asks for more forks, not a failure), 1
// when one is or on an error, 2 on a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hostsparity", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tol := fs.Float64("tolerance", 0.10, "the band of equivalence: the ratio's 90% interval must lie within [1-t, 1+t]")
	all := fs.Bool("all", false, "compare every trial, not only valid ones (a trial gated as noisy still measured its target)")
	steady := fs.Bool("steady", false, "read each run as its verdicts do: each fork's steady iterations (the target's CPU also steady in its own series), forks that never settle left out")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: hostsparity [--tolerance 0.10] [--all | --steady] SINGLE-RUN-DIR HOSTS-RUN-DIR")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 2 || !(*tol > 0 && *tol < 1) {
		fs.Usage()
		fmt.Fprintf(stderr, "hostsparity: want two run directories (got %d) and 0 < --tolerance < 1 (got %g)\n", fs.NArg(), *tol)
		return 2
	}
	var runs [2]*record.Run
	for i, dir := range fs.Args() {
		r, err := record.Read(dir)
		if err != nil {
			fmt.Fprintf(stderr, "hostsparity: %s run: %v\n", [2]string{"single-machine", "multi-host"}[i], err)
			return 1
		}
		runs[i] = r
	}
	o := Options{Tolerance: *tol, All: *all, Steady: *steady}
	rows, err := Compare(runs[0], runs[1], o)
	if err != nil {
		fmt.Fprintf(stderr, "hostsparity: %v\n", err)
		return 1
	}
	failed, err := Text(stdout, rows, o)
	if err != nil {
		fmt.Fprintf(stderr, "hostsparity: %v\n", err)
		return 1
	}
	if failed {
		return 1
	}
	return 0
}
