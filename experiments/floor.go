package experiments

import (
	"fmt"
	"time"

	"github.com/threadlab/threadlab/measure/bounds"
	"github.com/threadlab/threadlab/measure/load"
)

// MaxFloor bounds a stated floor: a typo such as 900s for 900ms would make
// every trial invalid.
const MaxFloor = 10 * time.Minute

// validateFloors checks each variant's floor: a burst to bound, and for
// floor.parallel requests whose wait is known.
func (m *Manifest) validateFloors(bad badFunc) {
	g := m.Measured()
	for _, v := range m.Variants {
		fl := v.Floor
		if fl == nil {
			continue
		}
		f := "variants." + v.Name + ".floor"
		switch {
		case fl.Parallel < 0:
			bad(f+".parallel", "must not be negative (got %d): the most requests the variant serves at once, like 200 for Tomcat's platform threads", fl.Parallel)
		case fl.Wall < 0:
			bad(f+".wall", "must not be negative (got %v): the least time the measured burst can take, like 900ms", fl.Wall)
		case fl.Wall > MaxFloor:
			bad(f+".wall", "%v is longer than the %v allowed (a typo such as 900s for 900ms would make every trial invalid; lower it)", fl.Wall, MaxFloor)
		case fl.Parallel == 0 && fl.Wall == 0:
			bad(f, "is empty: give parallel (requests in service at once) or wall (a stated floor), or remove it")
		case g == nil || g.Model != load.Burst:
			model := "none"
			if g != nil {
				model = g.Model
			}
			bad(f, "bounds the wall time of a burst, but the measured group's model is %s: remove the floor, or measure a burst", model)
		case fl.Parallel > 0:
			if _, ok := bounds.Wait(mixOf(g, v)); !ok || v.Target == "" {
				bad(f+".parallel", "needs the wait of every request, which threadlab knows only for GET /io?ms=N on a built-in target: state the floor as floor.wall instead")
			}
		}
	}
}

// Design is what the variant's design implies about the time its answers
// of group g take, for measure/bounds: the requests' wait on a built-in
// target, and for the measured group the variant's floor.
func (m *Manifest) Design(v Variant, g load.Group) bounds.Design {
	var d bounds.Design
	if v.Target != "" {
		d.Wait, _ = bounds.Wait(g.Requests)
	}
	if v.Floor != nil && g.Name == m.Load.Measure {
		d.Parallel, d.Wall = v.Floor.Parallel, v.Floor.Wall
	}
	return d
}

// mixOf is a group's request mix as variant v sends it (its vars filled in).
func mixOf(g *Group, v Variant) []load.Request {
	out := make([]load.Request, len(g.Requests))
	for i, r := range g.Requests {
		out[i] = load.Request{Method: r.Method, Path: Expand(r.Path, v.Vars)}
	}
	return out
}

// lintFloors warns when a floor.parallel disagrees with the pool the
// variant is given: the floor would then be wrong for it.
func (m *Manifest) lintFloors(warn func(string, string, ...any)) {
	const pool = "server.tomcat.threads.max"
	for _, v := range m.Variants {
		if v.Floor == nil || v.Floor.Parallel == 0 {
			continue
		}
		f := "variants." + v.Name + ".floor.parallel"
		if p, ok := v.Properties[pool]; ok && p != fmt.Sprint(v.Floor.Parallel) {
			warn(f, "%d, but the variant sets %s=%s: the floor assumes %d requests in service at once; make them agree", v.Floor.Parallel, pool, p, v.Floor.Parallel)
		}
		for _, d := range m.Sweep {
			if d.Property == pool {
				warn(f, "%d is fixed, but sweep %s changes %s: the floor is wrong at every other pool size; state no floor.parallel in a pool sweep", v.Floor.Parallel, d.Name, pool)
			}
		}
	}
}
