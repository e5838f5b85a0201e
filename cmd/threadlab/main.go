// Command threadlab runs server threading-model experiments described by YAML
// manifests and turns the measurements into data and static reports.
//
// The command is thin: every subcommand is one file holding
// func runX(ctx, args, stdout, stderr) error, registered in init(), and all
// of the work happens in the packages under experiments/, env/ and pipeline/.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/threadlab/threadlab/env/remote"
	"github.com/threadlab/threadlab/env/supervise"
	"github.com/threadlab/threadlab/pipeline"
)

// command is one subcommand: its one-line help and its body.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

// register adds a subcommand; each subcommand file calls it from init().
func register(name, summary string, run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) {
	commands[name] = command{name: name, summary: summary, run: run}
}

// usageError marks errors caused by how the command was called; they exit 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef builds a usage error (exit code 2).
func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func main() {
	if len(os.Args) > 1 && os.Args[1] == "supervise" {
		// Hidden: the supervisor for remote hosts (ssh host threadlab
		// supervise -- argv), whose lifeline is the session's stdin. Local
		// supervisors are started by env/supervise and never get here.
		os.Exit(supervise.Main(os.Args[2:], os.Stdin, io.Discard, 3))
	}
	if len(os.Args) > 1 && os.Args[1] == remote.HelperCommand {
		// Hidden: what a multi-host run asks a host (its JDK, a free port,
		// round trips to the target), answered by the threadlab shipped there.
		os.Exit(remote.Helper(os.Args[2:], os.Stdout, os.Stderr))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go interrupts(sigs, cancel, os.Stderr, func() { os.Exit(130) })
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	select {
	case <-quitting:
		// A second signal is being handled: its killed processes let the
		// run return early, but the force-quit marks run.json abandoned
		// and exits 130; exiting here first would cut that short (and
		// exit 1, as TestSecondSignalForceQuits once caught).
		select {}
	default:
	}
	os.Exit(code)
}

// quitting is closed when a second signal starts the force-quit.
var quitting = make(chan struct{})

// interrupts turns the first signal into a cancelled context (the current
// stage stops, the finishing stages summarize what finished) and the second
// into a force-quit that kills every process threadlab started first.
func interrupts(sigs <-chan os.Signal, cancel context.CancelFunc, stderr io.Writer, exit func()) {
	sig := <-sigs
	fmt.Fprintf(stderr, "\nthreadlab: %v: stopping after the current step; finished trials are kept (signal again to quit at once)\n", sig)
	cancel()
	sig = <-sigs
	fmt.Fprintf(stderr, "threadlab: %v again: killing every process threadlab started and quitting\n", sig)
	close(quitting)
	supervise.KillAll()
	pipeline.Abandon() // run.json says interrupted, not running
	exit()
}

// run dispatches to a subcommand and maps its error to an exit code:
// 0 success, 1 failure, 2 usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "threadlab: unknown command %q (run 'threadlab help' for the list)\n", args[0])
		return 2
	}
	err := cmd.run(ctx, args[1:], stdout, stderr)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "threadlab %s: %v\n", cmd.name, err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: threadlab <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
}

// parseFlags parses args into fs; a bad flag is a usage error (exit 2) and
// -h prints the flags and succeeds.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (help bool, err error) {
	if help, err := parseFlagsOnly(fs, args, stderr); help || err != nil {
		return help, err
	}
	// Go's flag package stops at the first argument that is not a flag, so
	// "lint x.yaml --strict" linted x.yaml without --strict and then
	// reported a manifest named --strict. After a "--" the arguments are
	// another program's (supervise), and diff takes flags anywhere itself
	// (parseFlagsOnly).
	if slices.Contains(args, "--") {
		return false, nil
	}
	for _, a := range fs.Args() {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && fs.Lookup(name) != nil {
			return false, usagef("%s comes after the arguments: flags go first (threadlab %s %s ... %s)", a, fs.Name(), a, fs.Arg(0))
		}
	}
	return false, nil
}

// parseFlagsOnly parses fs's flags up to the first argument that is not
// one, as the flag package does. A bad flag prints the usage and then the
// error once: the flag package would print the error itself and run()
// prints it again ("--delay NaN" came out twice).
func parseFlagsOnly(fs *flag.FlagSet, args []string, stderr io.Writer) (help bool, err error) {
	usage := fs.Usage
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err = fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(stderr)
	if err == nil {
		return false, nil
	}
	if usage != nil {
		usage()
	} else {
		fmt.Fprintf(stderr, "usage of %s:\n", fs.Name())
		fs.PrintDefaults()
	}
	if errors.Is(err, flag.ErrHelp) {
		return true, nil
	}
	return false, usageError{err}
}

// readDataDir checks a --data that is only read (status, a dry run, site):
// named on the command line it must be a directory, since a typo would
// read as "no run yet" and advise an hour-long re-run; the default may be
// missing (a checkout with no runs), but not something else.
func readDataDir(fs *flag.FlagSet, dir string) error {
	named := false
	fs.Visit(func(f *flag.Flag) { named = named || f.Name == "data" })
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return usagef("--data %s is not a directory: pass the data directory holding <experiment>/<run-id>/", dir)
	case err != nil && (named || !errors.Is(err, os.ErrNotExist)):
		return usagef("--data %s: %v (pass the data directory holding <experiment>/<run-id>/)", dir, errors.Unwrap(err))
	}
	return nil
}
