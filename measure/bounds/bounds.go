// Package bounds judges whether a trial's measurement could have happened
// as designed. Two things make a measurement impossible rather than merely
// slow or fast:
//
//   - a burst split across generators whose shares did not leave together:
//     the target then saw two smaller bursts, not one (the io-bound trial of
//     626 ms whose two halves left at least 0.32 s apart);
//   - a measurement below the floor the design implies: a burst of
//     /io?ms=300 cannot be answered in under 300 ms, and 600 of them on 200
//     platform threads not in under 3 x 300 ms.
//
// Data flow: experiments validates a manifest's floor with Wait and Floor;
// the pipeline builds a Design per variant, and after each trial Check
// turns the load result into the reasons it is invalid (none when it is
// possible), which go into trials.csv like every other reason.
package bounds

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/threadlab/threadlab/measure/load"
)

// Design is what a variant's design says about the time its answers take.
type Design struct {
	// Wait is the least time every request of the mix waits on the server
	// (the built-in targets' /io?ms=N sleeps N ms); 0 when unknown.
	Wait time.Duration
	// Parallel is the most requests the server has in service at once
	// (Tomcat's 200 platform threads); 0 when unbounded or unknown.
	Parallel int
	// Wall is a stated floor of a burst's wall time, for designs the
	// arithmetic does not cover; 0 when none is stated.
	Wall time.Duration
}

// Wait returns the least server-side wait of a request mix on a built-in
// target: every request must be GET /io?ms=N (N a plain number, no
// template), and the least N wins. ok is false when any request's wait is
// unknown: then no floor can be derived from the mix.
func Wait(reqs []load.Request) (wait time.Duration, ok bool) {
	if len(reqs) == 0 {
		return 0, false
	}
	for i, r := range reqs {
		w, known := ioWait(r)
		if !known {
			return 0, false
		}
		if i == 0 || w < wait {
			wait = w
		}
	}
	return wait, true
}

// ioWait is the wait of one request of the built-in /io endpoint, which
// sleeps (MVC) or delays (WebFlux) ms milliseconds, 300 when ms is absent.
func ioWait(r load.Request) (time.Duration, bool) {
	if r.Method != "" && r.Method != "GET" {
		return 0, false
	}
	path, query, _ := strings.Cut(r.Path, "?")
	if path != "/io" || strings.ContainsAny(r.Path, "{}") {
		return 0, false
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return 0, false
	}
	v := q.Get("ms")
	if v == "" {
		return 300 * time.Millisecond, !q.Has("ms")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/int64(time.Millisecond) {
		return 0, false
	}
	return time.Duration(n) * time.Millisecond, true
}

// Floor returns the least wall time a burst of n requests can take under
// the design, and how it follows: the stated floor, or ceil(n/Parallel)
// waves of Wait (one wave when Parallel is unbounded), whichever is
// higher. 0 and "" when the design implies nothing.
func (d Design) Floor(n int) (time.Duration, string) {
	var floor time.Duration
	var why string
	if d.Wait > 0 && n > 0 {
		waves := 1
		if d.Parallel > 0 {
			waves = (n + d.Parallel - 1) / d.Parallel
		}
		floor = time.Duration(waves) * d.Wait
		why = fmt.Sprintf("every request waits %v on the server", d.Wait)
		if d.Parallel > 0 {
			why = fmt.Sprintf("%d requests, at most %d in service at once (floor.parallel): %d waves of %v", n, d.Parallel, waves, d.Wait)
		}
	}
	if d.Wall > floor {
		floor, why = d.Wall, "floor.wall"
	}
	return floor, why
}

// Check returns why a group's result is impossible under the design, or
// nil. maxSpread bounds a split burst's release spread (the manifest's
// noise.max_release_spread); 0 checks no spread.
//
// The floors apply only when every request succeeded: a refused or reset
// request ends at once and need not wait, so a failed burst may be fast
// and is judged by its errors instead.
func Check(g load.Group, r load.GroupResult, d Design, maxSpread time.Duration) []string {
	var out []string
	if maxSpread > 0 && r.ReleaseSpread > maxSpread {
		out = append(out, fmt.Sprintf("the burst left its generators %v apart (releases at %s; noise.max_release_spread %v): the target saw several smaller bursts, not one",
			r.ReleaseSpread.Round(100*time.Microsecond), releasesText(r.Releases), maxSpread))
	}
	if r.Errors > 0 || r.Requests == 0 {
		return out
	}
	if r.Model == load.Burst {
		if floor, why := d.Floor(g.Burst); floor > 0 && r.Wall < floor {
			out = append(out, fmt.Sprintf("wall %v is below the %v floor of the design (%s): physically impossible, the burst did not run as designed",
				r.Wall.Round(time.Millisecond), floor, why))
		}
	}
	if d.Wait > 0 && r.Latency != nil && r.Latency.TotalCount() > 0 {
		// HdrHistogram keeps values to 3 significant digits: the recorded
		// minimum may sit up to 0.1% below the true one.
		fastest := time.Duration(r.Latency.Min()) * time.Microsecond
		if fastest < d.Wait-d.Wait/1000 {
			out = append(out, fmt.Sprintf("the fastest answer took %v, below the %v every request waits on the server: physically impossible, the target did not run the request as designed",
				fastest.Round(100*time.Microsecond), d.Wait))
		}
	}
	return out
}

func releasesText(at []time.Duration) string {
	var parts []string
	for i, a := range at {
		parts = append(parts, fmt.Sprintf("generator %d +%v", i+1, a.Round(100*time.Microsecond)))
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, ", ")
}
