package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/fleet"
	"github.com/threadlab/threadlab/measure/load"
)

// tunedLimits are seed 002's tuned host: ip_local_port_range 1024-65535,
// tcp_tw_reuse (a port in TIME_WAIT reusable after about a second) and
// nofile 1048576.
var tunedLimits = fleet.Limits{Ports: 65535 - 1024 + 1, Files: 1 << 20, TimeWait: time.Second}

// writeCapacity prints, for every sweep point of the manifest, how its load
// splits over n generator hosts and whether each share fits an untuned
// Linux host and a host tuned as seed 002's (threadlab run --dry-run
// --generators N): the plan of a multi-host run, run by no one.
// maxGenerators bounds --generators: seed 002's 60k connections need 3
// generator hosts; a fleet of thousands is not a plan this prints.
const maxGenerators = 1000

func writeCapacity(w io.Writer, m *experiments.Manifest, n int) error {
	if n < 1 || n > maxGenerators {
		// The split copies each group once per generator: 10 million
		// asked for 5 GB before any check (hostile flags, session 30).
		return usagef("--generators %d: give the number of generator hosts, 1 to %d", n, maxGenerators)
	}
	// Every variant sends the same load (its vars aside), but a server that
	// closes each connection after one request (seed 002's Tomcat:
	// max-keep-alive-requests 1) makes the client reconnect for every
	// request, and each reconnect leaves a port in TIME_WAIT: plan the
	// variant that costs the most ports.
	v := m.Variants[0]
	for _, c := range m.Variants {
		if closesEachConnection(c) {
			v = c
			break
		}
	}
	fmt.Fprintf(w, "\nload over %d generator host(s), per sweep point (fleet.Capacity):\n", n)
	for _, set := range []struct {
		name string
		lim  fleet.Limits
	}{
		{"an untuned Linux host (ports 32768-60999, TIME_WAIT 60 s, nofile 1024)", fleet.DefaultLimits},
		{"a host tuned as seed 002's (ports 1024-65535, tcp_tw_reuse, nofile 1048576)", tunedLimits},
	} {
		fmt.Fprintf(w, "\non %s:\n", set.name)
		for _, point := range m.Sweep.Points() {
			groups, err := m.LoadGroups(v, point)
			if err != nil {
				return err
			}
			if closesEachConnection(v) {
				for i := range groups {
					groups[i].NoKeepAlive = true
				}
			}
			shares, err := fleet.Capacity(load.Plan{Target: "http://target", Groups: groups}, n, set.lim)
			if err != nil {
				fmt.Fprintf(w, "%s: cannot split: %v\n", pointText(point), err)
				continue
			}
			fits := !slices.ContainsFunc(shares, func(s fleet.Share) bool { return !s.Fits() })
			fmt.Fprintf(w, "%s: %s\n", pointText(point), map[bool]string{true: "fits", false: "DOES NOT FIT"}[fits])
			fleet.WriteCapacity(w, shares, set.lim)
		}
	}
	return nil
}

// closesEachConnection: the variant's server answers one request per
// connection (Tomcat's server.tomcat.max-keep-alive-requests: 1, the built-in
// spring-mvc target's knob), so every request of a kept-alive client opens a
// new connection.
func closesEachConnection(v experiments.Variant) bool {
	return strings.TrimSpace(v.Properties["server.tomcat.max-keep-alive-requests"]) == "1"
}

func pointText(p map[string]string) string {
	if len(p) == 0 {
		return "the load"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		parts = append(parts, k+"="+p[k])
	}
	return strings.Join(parts, ", ")
}
