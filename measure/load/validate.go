package load

import (
	"fmt"
	"time"
)

// MaxRate is the highest open-model rate, in requests per second: it keeps
// the send interval at a microsecond or more.
const MaxRate = 1e6

// Limits a plan must keep, the same as a manifest's (experiments/limits.go):
// `threadlab load` and a load agent take plans from flags and from the
// controller, not only from a validated manifest. A group's per-second
// histograms cost about 20 KB a second, so an hour is 70 MB per group.
const (
	MaxGroups   = 1000
	MaxDuration = time.Hour // a group's duration, start, and each ramp stage
	MaxUsers    = 1_000_000 // users or burst size of a group
)

// Validate checks the plan and says how to fix the first problem it finds.
func (p Plan) Validate() error {
	if _, err := parseTarget(p.Target); err != nil {
		return err
	}
	if len(p.Groups) == 0 {
		return fmt.Errorf("plan has no groups: add at least one")
	}
	if len(p.Groups) > MaxGroups {
		return fmt.Errorf("plan has %d groups, more than %d: each holds histograms of its own (140 KB up front); split the load", len(p.Groups), MaxGroups)
	}
	names := map[string]bool{}
	for i, g := range p.Groups {
		name := g.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		} else if names[name] {
			return fmt.Errorf("group %q: name used twice; give each group its own name", name)
		}
		names[name] = true
		if err := g.validate(); err != nil {
			return fmt.Errorf("group %s: %w", name, err)
		}
	}
	return nil
}

func (g Group) validate() error {
	switch g.Model {
	case Closed:
		if g.Users <= 0 {
			return fmt.Errorf("closed model needs users > 0")
		}
		if g.Duration <= 0 {
			return fmt.Errorf("closed model needs a duration > 0")
		}
		if g.ThinkMin < 0 || g.ThinkMax < g.ThinkMin {
			return fmt.Errorf("think time range [%v, %v] is empty: need 0 <= think_min <= think_max", g.ThinkMin, g.ThinkMax)
		}
	case Open:
		if !(g.Rate > 0 && g.Rate <= MaxRate) { // written so that NaN fails too
			return fmt.Errorf("open model needs a rate in (0, %g] requests per second, got %g", float64(MaxRate), g.Rate)
		}
		if g.Duration <= 0 {
			return fmt.Errorf("open model needs a duration > 0")
		}
	case Burst:
		if g.Burst <= 0 {
			return fmt.Errorf("burst model needs burst > 0")
		}
	case Ramp:
		if len(g.Stages) == 0 {
			return fmt.Errorf("ramp model needs at least one stage")
		}
		users, rate := false, false
		for j, s := range g.Stages {
			if s.Duration <= 0 {
				return fmt.Errorf("stage %d: duration must be > 0", j+1)
			}
			if s.Users < 0 || !(s.Rate >= 0 && s.Rate <= MaxRate) { // NaN fails too
				return fmt.Errorf("stage %d: users and rate must be >= 0 (rate <= %g)", j+1, float64(MaxRate))
			}
			users = users || s.Users > 0
			rate = rate || s.Rate > 0
		}
		if users == rate {
			return fmt.Errorf("ramp stages must set either users (closed) or rate (open), not both and not neither")
		}
		if g.ThinkMin < 0 || g.ThinkMax < g.ThinkMin {
			return fmt.Errorf("think time range [%v, %v] is empty: need 0 <= think_min <= think_max", g.ThinkMin, g.ThinkMax)
		}
	case "":
		return fmt.Errorf("model is empty: use %s, %s, %s or %s", Closed, Open, Burst, Ramp)
	default:
		return fmt.Errorf("unknown model %q: use %s, %s, %s or %s", g.Model, Closed, Open, Burst, Ramp)
	}
	if err := g.checkLimits(); err != nil {
		return err
	}
	if g.MaxInFlight < 0 {
		return fmt.Errorf("max_in_flight must be >= 0 (0 means %d)", defaultMaxInFlight)
	}
	switch open := g.Model == Open || g.Model == Ramp && rampOpen(g); {
	case g.Preallocate < 0:
		return fmt.Errorf("preallocate must be >= 0 (0 dials connections as sends need them)")
	case g.Preallocate > 0 && !open:
		return fmt.Errorf("preallocate applies to the open model (a rate): a %s group holds its own connections; remove it", g.Model)
	case g.Preallocate > 0 && g.MaxInFlight > 0 && g.MaxInFlight < g.Preallocate:
		return fmt.Errorf("max_in_flight %d is below preallocate %d: raise max_in_flight or leave it 0 (then it is preallocate)", g.MaxInFlight, g.Preallocate)
	}
	if g.ReleaseAt != 0 && g.Model != Burst {
		return fmt.Errorf("release_at applies to a burst: a %s group has no single release; remove it", g.Model)
	}
	if g.MaxDials < 0 {
		return fmt.Errorf("max_dials must be >= 0 (0 means all connections at once for a burst or without keep-alive, else %d)", defaultMaxDials)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"start", g.Start}, {"release_at", g.ReleaseAt}, {"connect_timeout", g.ConnectTimeout}, {"timeout", g.Timeout}} {
		if d.v < 0 {
			return fmt.Errorf("%s is negative (%v): use 0 or more", d.name, d.v)
		}
	}
	if len(g.Requests) == 0 {
		return fmt.Errorf("no requests: add at least one, e.g. {path: /}")
	}
	if err := checkWeights(g.Requests); err != nil {
		return err
	}
	for j, r := range g.Requests {
		if _, err := buildWire(target{hostHdr: "x"}, r, false); err != nil {
			return fmt.Errorf("request %d: %w", j+1, err)
		}
	}
	return nil
}

// checkLimits refuses durations, stages and user counts past the plan
// limits (the manifest's own caps), naming the field.
func (g Group) checkLimits() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"duration", g.Duration}, {"start", g.Start}} {
		if d.v > MaxDuration {
			return fmt.Errorf("%s %v is longer than %v: split the load into shorter trials", d.name, d.v, MaxDuration)
		}
	}
	for j, s := range g.Stages {
		if s.Duration > MaxDuration {
			return fmt.Errorf("stage %d: duration %v is longer than %v", j+1, s.Duration, MaxDuration)
		}
		if s.Users > MaxUsers {
			return fmt.Errorf("stage %d: %d users, more than %d", j+1, s.Users, MaxUsers)
		}
	}
	if g.Users > MaxUsers || g.Burst > MaxUsers {
		return fmt.Errorf("users %d / burst %d: more than %d", g.Users, g.Burst, MaxUsers)
	}
	return nil
}
