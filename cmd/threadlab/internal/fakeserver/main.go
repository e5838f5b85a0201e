// Command fakeserver is a tiny HTTP service used as a command target in
// threadlab's acceptance tests: the pipeline starts it like any user's own
// service (command: [fakeserver, --port, "{port}"], ready: /health) and
// measures it, so the tests exercise the real process launcher, readiness
// polling, load generator and statistics with effects of a known size.
//
//	GET /health     200 once listening
//	GET /io?ms=N    answers after N ms x scale x factor
//
// --scale multiplies every service time (--scale 2 doubles the latency).
// --noise s draws factor once per process start from a log-normal
// distribution, exp(s·Z) with Z standard normal, so every trial (a fresh
// process) gets its own speed: the per-start noise seed 000 saw, injected on
// purpose. s is the standard deviation of the log service time, roughly the
// CV of the trials for small s. Without --noise the factor is 1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "fakeserver: %v\n", err)
		os.Exit(2)
	}
}

// config is what the flags say.
type config struct {
	port  int
	scale float64
	noise float64
	seed  uint64 // 0: a new random factor per start
}

func parse(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("fakeserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.port, "port", 0, "TCP port to listen on at 127.0.0.1 (required)")
	fs.Float64Var(&c.scale, "scale", 1, "multiply every service time by this")
	fs.Float64Var(&c.noise, "noise", 0, "standard deviation of the log of a speed factor drawn once per start (0: none)")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of the noise factor (0: random, a new factor every start)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case c.port <= 0 || c.port > 65535:
		return c, fmt.Errorf("--port %d: give the port to listen on, 1-65535 (threadlab passes \"{port}\")", c.port)
	case !(c.scale > 0):
		return c, fmt.Errorf("--scale %g: must be positive (1 for the plain service time)", c.scale)
	case !(c.noise >= 0):
		return c, fmt.Errorf("--noise %g: must be 0 or positive (0.3 for about 30%% per-start spread)", c.noise)
	}
	return c, nil
}

// factor is the per-start speed factor: exp(noise·Z).
func factor(noise float64, seed uint64) float64 {
	if noise == 0 {
		return 1
	}
	var rng *rand.Rand
	if seed != 0 {
		rng = rand.New(rand.NewPCG(seed, seed))
	} else {
		rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return math.Exp(noise * rng.NormFloat64())
}

// handler serves /health and /io with every service time multiplied by mult.
func handler(mult float64) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /io", func(w http.ResponseWriter, r *http.Request) {
		ms, err := strconv.ParseFloat(r.URL.Query().Get("ms"), 64)
		if err != nil || ms < 0 {
			http.Error(w, "ms must be a non-negative number of milliseconds, like /io?ms=100", http.StatusBadRequest)
			return
		}
		d := time.Duration(ms * mult * float64(time.Millisecond))
		time.Sleep(d)
		w.Header().Set("X-Service-Ms", strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64))
		io.WriteString(w, "ok\n")
	})
	return mux
}

func run(args []string, stdout io.Writer) error {
	c, err := parse(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	f := factor(c.noise, c.seed)
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)))
	if err != nil {
		return fmt.Errorf("listen on port %d: %w (is another process using it?)", c.port, err)
	}
	// The factor goes to the target log, so a flagged trial can be traced to it.
	fmt.Fprintf(stdout, "fakeserver: listening on %s, scale %g, noise %g, factor %.4f\n", ln.Addr(), c.scale, c.noise, f)
	return http.Serve(ln, handler(c.scale*f))
}
