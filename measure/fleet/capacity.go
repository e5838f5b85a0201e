package fleet

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/threadlab/threadlab/measure/load"
)

// Capacity (issue 25): before a multi-host run, whether each generator
// host's share of the load fits that host's ports and descriptors. Every
// connection a generator holds to the one target ip:port takes a local
// port of one source address (ip_local_port_range) and a descriptor
// (RLIMIT_NOFILE); without keep-alive each request opens a connection, and
// each closed one keeps its port in TIME_WAIT for a while, so a generator
// needs its held connections plus its new connections per second times
// that wait. Seed 002's 60k scenarios do not fit one default Linux host;
// this says how many hosts they take.

// Limits are one generator host's limits. Zero values are Linux defaults.
type Limits struct {
	// Ports per source address toward one target ip:port: the size of
	// net.ipv4.ip_local_port_range (default 32768-60999: 28,232).
	Ports int
	// Files is the generator's RLIMIT_NOFILE (default 1,024, the soft
	// limit most distributions start a shell with).
	Files int
	// TimeWait is how long a closed connection holds its port: 60 s
	// (the default), or about 1 s with net.ipv4.tcp_tw_reuse.
	TimeWait time.Duration
}

// DefaultLimits are an untuned Linux host's.
var DefaultLimits = Limits{Ports: 60999 - 32768 + 1, Files: 1024, TimeWait: 60 * time.Second}

// fileReserve is descriptors a generator uses besides its connections
// (stdio, the agent's pipes, epoll, /proc reads).
const fileReserve = 64

// Share is one generator host's part of one group of a plan.
type Share struct {
	Generator int // 1-based
	Group     string
	Held      int     // connections open at once
	NewPerSec float64 // without keep-alive: connections opened per second; 0 with keep-alive
	Ports     int     // local ports the share needs at once: Held plus NewPerSec x TimeWait
	Files     int     // descriptors: Held plus a reserve
	Problems  []string
}

// Fits reports whether the share fits its host.
func (s Share) Fits() bool { return len(s.Problems) == 0 }

// Capacity splits every group of the plan among n generators (Split) and
// checks each share against lim.
func Capacity(p load.Plan, n int, lim Limits) ([]Share, error) {
	if lim.Ports == 0 {
		lim.Ports = DefaultLimits.Ports
	}
	if lim.Files == 0 {
		lim.Files = DefaultLimits.Files
	}
	if lim.TimeWait == 0 {
		lim.TimeWait = DefaultLimits.TimeWait
	}
	var out []Share
	for _, g := range p.Groups {
		parts, err := Split(g, n)
		if err != nil {
			return nil, err
		}
		for i, part := range parts {
			s := Share{Generator: i + 1, Group: g.Name, Held: held(part)}
			if part.NoKeepAlive {
				s.NewPerSec = newPerSec(part)
			}
			s.Ports = s.Held + int(math.Ceil(s.NewPerSec*lim.TimeWait.Seconds()))
			s.Files = s.Held + fileReserve
			if s.Ports > lim.Ports {
				s.Problems = append(s.Problems, fmt.Sprintf("needs %d local ports toward the target, the port range has %d: widen net.ipv4.ip_local_port_range, set net.ipv4.tcp_tw_reuse, or use more generator hosts", s.Ports, lim.Ports))
			}
			if s.Files > lim.Files {
				s.Problems = append(s.Problems, fmt.Sprintf("needs %d descriptors, the limit is %d: raise nofile (ulimit -n) on that host, or use more generator hosts", s.Files, lim.Files))
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// held is how many connections a share keeps open at once: its users or
// burst, or for an open rate its preallocated connections, else its
// in-flight cap (each request in flight holds one).
func held(g load.Group) int {
	switch g.Model {
	case load.Closed, load.Burst:
		return max(g.Users, g.Burst)
	case load.Ramp:
		peak := 0
		for _, s := range g.Stages {
			peak = max(peak, s.Users)
		}
		if peak > 0 {
			return peak
		}
	}
	return max(g.Preallocate, g.MaxInFlight)
}

// newPerSec bounds the connections a share without keep-alive opens per
// second: its rate for an open group; for users, one per user per think
// time (the least think time: an upper bound, latency ignored); for a
// burst, all at once, once.
func newPerSec(g load.Group) float64 {
	switch g.Model {
	case load.Open:
		return g.Rate
	case load.Burst:
		return float64(g.Burst)
	case load.Closed:
		if g.ThinkMin > 0 {
			return float64(g.Users) / g.ThinkMin.Seconds()
		}
		return float64(g.Users) // no think time: at least one per user per second, more if answers are quicker
	}
	var r float64
	for _, s := range g.Stages {
		r = max(r, s.Rate, float64(s.Users))
	}
	return r
}

// WriteCapacity prints the shares as a table with a verdict per row.
func WriteCapacity(w io.Writer, shares []Share, lim Limits) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "generator\tgroup\tconnections\tnew/s\tports\tdescriptors\tfits")
	for _, s := range shares {
		verdict := "yes"
		if !s.Fits() {
			verdict = "NO: " + strings.Join(s.Problems, "; ")
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%.0f\t%d\t%d\t%s\n", s.Generator, s.Group, s.Held, s.NewPerSec, s.Ports, s.Files, verdict)
	}
	tw.Flush()
}
