package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/threadlab/threadlab/env/downstream"
)

func init() {
	register("downstream", "serve the slow downstream service the targets call (GET /enrich/{id})", runDownstream)
}

// runDownstream serves until ctx is cancelled (Ctrl-C or SIGTERM), so the
// service can run beside a target started by hand, outside a pipeline run.
// It listens on loopback unless --address names another address of the host
// (a multi-host run, where the target calls it from its own host): a
// benchmark helper has no business being reachable on every interface. The
// open-file limit needs no flag: Go raises the soft limit to the hard one at
// start-up, and the host check reports a hard limit that is too low.
func runDownstream(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("downstream", flag.ContinueOnError)
	address := fs.String("address", "127.0.0.1", "the IP address to listen on (a multi-host run passes the downstream host's address from hosts.yaml)")
	port := fs.Int("port", 0, "TCP port; 0 picks a free one and prints it")
	delay := fs.Duration("delay", 100*time.Millisecond, "how long each /enrich request waits before its answer")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: threadlab downstream [--address 127.0.0.1] [--port P] [--delay 100ms]")
		fs.PrintDefaults()
	}
	if help, err := parseFlags(fs, args, stderr); help || err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected argument %q: the service takes only --address, --port and --delay", fs.Arg(0))
	case *port < 0 || *port > 65535:
		return usagef("--port %d is not a TCP port: use 1..65535, or 0 for any free one", *port)
	case net.ParseIP(*address) == nil || net.ParseIP(*address).IsUnspecified():
		return usagef("--address %q: give one IP address of this host, such as 127.0.0.1 or 10.0.0.5 (never every interface)", *address)
	case *delay < 0:
		return usagef("--delay %v is negative: use 0 or a positive duration such as 100ms", *delay)
	}
	s, err := downstream.Start(ctx, net.JoinHostPort(*address, strconv.Itoa(*port)), *delay)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "downstream: serving %s (GET /enrich/{id} after %v, GET /health); Ctrl-C stops\n", s.URL(), *delay)
	<-ctx.Done()
	if err := s.Close(); err != nil {
		return err
	}
	st := s.Stats()
	fmt.Fprintf(stdout, "downstream: stopped after %d requests (%d enriched) on %d connections, at most %d waiting at once, %d accept errors\n",
		st.Requests, st.Enriched, st.Conns, st.MaxInFlight, st.AcceptErrors)
	return nil
}
