package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/threadlab/threadlab/env"
)

func init() {
	register("check", "check the host for benchmarking (prints fixes, never applies them)", runCheck)
}

// runCheck prints the host check as a table, with the want and the fix
// command under every row that is not ok. --connections and --ports ask what
// a manifest would (e.g. 20000 for the largest connection burst). It exits 1
// when a check fails, so scripts can gate on it; warn and unknown do not.
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the checks as JSON (the hostcheck.json of a run)")
	conns := fs.Int("connections", 0, "connections open at once that the host must accept (0: general hygiene only)")
	ports := fs.Int("ports", 0, "ephemeral ports the client needs at once, TIME_WAIT included (0: --connections)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: threadlab check [--json] [--connections N] [--ports N]")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args, stderr); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("check takes no arguments (got %q)", fs.Args())
	}
	if *conns < 0 || *ports < 0 {
		return usagef("--connections and --ports must be >= 0 (got %d and %d)", *conns, *ports)
	}
	checks := env.HostCheck(ctx, env.Requirements{Connections: *conns, Ports: *ports})
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("check interrupted: %w", err)
	}
	if *asJSON {
		b, err := json.MarshalIndent(checks, "", "  ")
		if err != nil {
			return fmt.Errorf("encode checks: %w", err)
		}
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		printChecks(stdout, checks)
	}
	if n := count(checks, env.Fail); n > 0 {
		return fmt.Errorf("%d host check(s) failed: results would measure the host, not the server (run the fix commands above, or lower --connections)", n)
	}
	return nil
}

// printChecks writes one line per check, and under each row that is not ok
// what it should be and the command that would fix it.
func printChecks(w io.Writer, checks []env.Check) {
	width := len("check")
	for _, c := range checks {
		width = max(width, len(c.Name))
	}
	fmt.Fprintf(w, "%-7s  %-*s  %s\n", "status", width, "check", "value")
	indent := strings.Repeat(" ", 7+2+width+2)
	for _, c := range checks {
		fmt.Fprintf(w, "%-7s  %-*s  %s\n", c.Status, width, c.Name, c.Value)
		if c.Status == env.OK {
			continue
		}
		fmt.Fprintf(w, "%swant: %s\n", indent, c.Want)
		if c.Fix != "" {
			fmt.Fprintf(w, "%sfix:  %s\n", indent, c.Fix)
		}
	}
	fmt.Fprintf(w, "\n%d checks: %d ok, %d warn, %d fail, %d unknown (nothing was changed)\n", len(checks),
		count(checks, env.OK), count(checks, env.Warn), count(checks, env.Fail), count(checks, env.Unknown))
}

func count(checks []env.Check, status string) int {
	n := 0
	for _, c := range checks {
		if c.Status == status {
			n++
		}
	}
	return n
}
