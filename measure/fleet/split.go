// Package fleet runs one load plan on several generators at once and merges
// what they measured into one load.Result, as if one generator had sent it
// all (issue 14: several generators as one).
//
// Data flow: Drive splits every group of the plan among the agents (Split),
// measures each agent's clock offset with a few ping/pong round trips, sends
// each agent its share with one agreed start instant expressed in that
// agent's clock, waits for every result and combines them (Merge):
// HdrHistograms added, never percentiles averaged; counts, error classes and
// per-second series summed; each generator's self-check kept.
//
// An agent is one generator process, `threadlab load --agent` (Serve), on a
// remote host through ssh or on this one. It speaks line-delimited JSON on
// its stdin and stdout (wire.go) and stops its load and exits when its stdin
// closes, so the end of an ssh session ends it too.
package fleet

import (
	"fmt"
	"time"

	"github.com/threadlab/threadlab/measure/load"
)

// Split divides one load group among n generators so that together they
// send what the group asks for:
//
//   - closed: Users split as evenly as integers allow (the first ones get one
//     more), so their sum is Users; each generator needs at least one user.
//   - open: Rate split evenly; generator i starts i/Rate later, so the merged
//     sends are evenly spaced as one generator's would be, not n at once
//     (the shift is below one of the generator's own send intervals).
//   - burst: the Burst size split like users; with more than one generator
//     every share connects first and is released ReleaseLead after the one
//     agreed start instant (load.Group.ReleaseAt), so the shares leave
//     together however long each generator's connects took.
//   - ramp: each stage's Users or Rate split the same way.
//   - Preallocate and MaxInFlight (when set) split like users; MaxDials
//     (when set) too, but never below one connect at a time. 0 stays 0:
//     each generator then applies its own default.
//
// Everything else (requests, think times, start offset, duration, timeouts)
// is copied. It is an error, saying why, when a share would be empty.
func Split(g load.Group, n int) ([]load.Group, error) {
	name := g.Name
	if name == "" {
		name = "(unnamed)"
	}
	if n < 1 {
		return nil, fmt.Errorf("group %s: cannot split among %d generators: need at least one", name, n)
	}
	if err := (load.Plan{Target: "http://127.0.0.1:1", Groups: []load.Group{g}}).Validate(); err != nil {
		return nil, err
	}
	parts := make([]load.Group, n)
	for i := range parts {
		p := g
		p.Requests = append([]load.Request(nil), g.Requests...)
		p.Stages = append([]load.Stage(nil), g.Stages...)
		parts[i] = p
	}
	few := func(what string, have int) error {
		return fmt.Errorf("group %s: %s %d cannot be split among %d generators: each needs at least 1; use at most %d generators or raise %s to %d",
			name, what, have, n, max(have, 1), what, n)
	}
	switch g.Model {
	case load.Closed:
		if g.Users < n {
			return nil, few("users", g.Users)
		}
		for i := range parts {
			parts[i].Users = share(g.Users, n, i)
		}
	case load.Open:
		if perGen := g.Rate * g.Duration.Seconds() / float64(n); perGen < 1 {
			return nil, fmt.Errorf("group %s: %g requests/s for %v is %.2f requests per generator among %d: each needs at least one; use fewer generators or a longer duration",
				name, g.Rate, g.Duration, perGen, n)
		}
		rates := splitRate(g.Rate, n)
		for i := range parts {
			parts[i].Rate = rates[i]
			parts[i].Start = g.Start + time.Duration(float64(i)/g.Rate*1e9)
		}
	case load.Burst:
		if g.Burst < n {
			return nil, few("burst", g.Burst)
		}
		for i := range parts {
			parts[i].Burst = share(g.Burst, n, i)
			if n > 1 {
				// One release instant for all shares, past every
				// generator's connects (see ReleaseLead).
				parts[i].ReleaseAt = max(g.ReleaseAt, g.Start+ReleaseLead)
			}
		}
	case load.Ramp:
		peak := 0
		for _, s := range g.Stages {
			peak = max(peak, s.Users)
		}
		if peak > 0 && peak < n {
			return nil, fmt.Errorf("group %s: the ramp peaks at %d users, fewer than the %d generators: each needs a user in some stage; use at most %d generators",
				name, peak, n, peak)
		}
		for j, s := range g.Stages {
			rates := splitRate(s.Rate, n)
			for i := range parts {
				parts[i].Stages[j].Users = share(s.Users, n, i)
				parts[i].Stages[j].Rate = rates[i]
			}
		}
	}
	if g.Preallocate > 0 {
		if g.Preallocate < n {
			return nil, few("preallocate", g.Preallocate)
		}
		for i := range parts {
			parts[i].Preallocate = share(g.Preallocate, n, i)
		}
	}
	if g.MaxInFlight > 0 {
		if g.MaxInFlight < n {
			return nil, few("max_in_flight", g.MaxInFlight)
		}
		// Split like Preallocate (the first ones get the remainder of
		// both), so every share keeps max_in_flight >= preallocate.
		for i := range parts {
			parts[i].MaxInFlight = share(g.MaxInFlight, n, i)
		}
	}
	if g.MaxDials > 0 {
		for i := range parts {
			parts[i].MaxDials = max(1, share(g.MaxDials, n, i))
		}
	}
	return parts, nil
}

// ReleaseLead is how long after the agreed start the shares of a split
// burst are released: time for every generator to open its share's
// connections first (a few hundred keep-alive connects on a busy host take
// tens of milliseconds). Without it each generator released when its own
// connects were done, and the shares left as far apart as their connect
// times (the 626 ms io-bound trial: two halves at least 0.32 s apart). A
// generator whose connects take longer still releases late, and the merged
// result's ReleaseSpread shows it.
const ReleaseLead = 500 * time.Millisecond

// share is generator i's part of total among n: total/n, plus one for the
// first total%n generators, so the parts sum to total.
func share(total, n, i int) int {
	s := total / n
	if i < total%n {
		s++
	}
	return s
}

// splitRate divides a rate evenly; the last part takes what rounding left,
// so the parts add up to the rate.
func splitRate(rate float64, n int) []float64 {
	out := make([]float64, n)
	var sum float64
	for i := range n - 1 {
		out[i] = rate / float64(n)
		sum += out[i]
	}
	out[n-1] = rate - sum
	return out
}

// splitPlan gives each of n generators its share of every group of the plan.
// Generator i gets seed plan.Seed+i, so generators do not draw the same
// random paths in lockstep.
func splitPlan(p load.Plan, n int) ([]load.Plan, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	plans := make([]load.Plan, n)
	for i := range plans {
		plans[i] = load.Plan{Target: p.Target, Seed: p.Seed + int64(i)}
	}
	for _, g := range p.Groups {
		parts, err := Split(g, n)
		if err != nil {
			return nil, err
		}
		for i := range plans {
			plans[i].Groups = append(plans[i].Groups, parts[i])
		}
	}
	return plans, nil
}
