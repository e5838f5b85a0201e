package experiments

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/threadlab/threadlab/measure/load"
)

// LoadGroups turns the manifest's load into the generator's groups for one
// variant at one sweep point: the variant's vars are filled into paths,
// headers and bodies, and swept load parameters (users, rate, burst) are
// set on the measured group. The loader runs the generator's own checks on
// the result, so a manifest that loads is a load the generator accepts.
func (m *Manifest) LoadGroups(v Variant, point map[string]string) ([]load.Group, error) {
	var out []load.Group
	for _, g := range m.Load.Groups {
		lg := load.Group{
			Name:           g.Name,
			Model:          g.Model,
			Users:          g.Users,
			Rate:           g.Rate,
			MaxInFlight:    g.MaxInFlight,
			Preallocate:    g.Preallocate,
			Burst:          g.Burst,
			Smooth:         g.Smooth,
			Start:          g.Start,
			Duration:       g.Duration,
			NoKeepAlive:    g.KeepAlive != nil && !*g.KeepAlive,
			ConnectTimeout: g.ConnectTimeout,
			Timeout:        g.Timeout,
			CountHeader:    g.CountHeader,
		}
		if len(g.Think) == 2 {
			lg.ThinkMin, lg.ThinkMax = g.Think[0], g.Think[1]
		}
		for _, s := range g.Stages {
			lg.Stages = append(lg.Stages, load.Stage{Duration: s.Duration, Users: s.Users, Rate: s.Rate})
		}
		for _, r := range g.Requests {
			headers := map[string]string{}
			for k, x := range r.Headers {
				headers[k] = Expand(x, v.Vars)
			}
			lg.Requests = append(lg.Requests, load.Request{Method: r.Method, Path: Expand(r.Path, v.Vars),
				Headers: headers, Body: Expand(r.Body, v.Vars), Weight: r.Weight})
		}
		if g.Name == m.Load.Measure {
			for _, d := range m.Sweep {
				if d.Load == "" {
					continue
				}
				x, err := strconv.ParseFloat(point[d.Name], 64)
				if err != nil {
					return nil, fmt.Errorf("sweep %s: %q is not a number", d.Name, point[d.Name])
				}
				switch d.Load {
				case "users":
					lg.Users = int(x)
				case "rate":
					lg.Rate = x
				case "connections":
					lg.Rate, lg.Preallocate = x, int(x)
				case "burst":
					lg.Burst = int(x)
				}
			}
		}
		out = append(out, lg)
	}
	return out, nil
}

// Expand fills a variant's {name} vars into s.
func Expand(s string, vars map[string]string) string {
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

// Points is the cartesian product of the sweep's values, in manifest
// order (the last dimension varies fastest); one empty point without a
// sweep.
func (s Sweep) Points() []map[string]string {
	points := []map[string]string{{}}
	for _, d := range s {
		var next []map[string]string
		for _, p := range points {
			for _, v := range d.Values {
				q := map[string]string{d.Name: v}
				for k, x := range p {
					q[k] = x
				}
				next = append(next, q)
			}
		}
		points = next
	}
	return points
}

// loadPoints are the sweep points that change the load: the product of
// the load dimensions only (property dimensions do not change what the
// generator sends). One empty point without load dimensions; none when
// there would be more than MaxCells (validateCells reports it).
func (m *Manifest) loadPoints() []map[string]string {
	var dims Sweep
	n := 1
	for _, d := range m.Sweep {
		if d.Load != "" {
			dims = append(dims, d)
			if n *= max(len(d.Values), 1); n > MaxCells {
				return nil
			}
		}
	}
	return dims.Points()
}
