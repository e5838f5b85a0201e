package experiments

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"

	"github.com/threadlab/threadlab/measure/load"
)

// Sweep keys and values end up in file names, CSV cells, the point string
// of trials.csv ("pool=20;users=100"), command lines (--prop=value) and the
// report's HTML and chart scripts. So they are held to a conservative
// character set that is inert in all of those:
//
//   - keys: lowercase letters and digits, in words joined by single '_' or
//     '-' (pool, max_pool, think-ms), at most 32 characters;
//   - values: letters, digits, '.', '+' and '-', at most 64 characters
//     (20, 1.5, 100ms, true, SAME_THREAD is not allowed: use SAME-THREAD
//     only if the property accepts it).
//
// Neither admits ';', '=', quotes, spaces, '<', '&' or "__" (go-echarts'
// __f__ function marker), which mislabel points or reach a page as code.
var (
	sweepKeyRE   = regexp.MustCompile(`^[a-z][a-z0-9]*(?:[_-][a-z0-9]+)*$`)
	sweepValueRE = regexp.MustCompile(`^[A-Za-z0-9.+-]+$`)
)

// SweepLoads maps each load parameter a sweep may set to the model that uses it.
// "connections" is seed 002's fixed-rate scenario, connections = requests
// per second: it sets an open model's rate and its preallocated
// connections to the same N.
var SweepLoads = map[string]string{"users": "closed", "rate": "open", "burst": "burst", "connections": "open"}

func (m *Manifest) validateSweep(bad badFunc) {
	props := map[string]string{}
	loads := map[string]string{}
	measured := m.Measured()
	for _, d := range m.Sweep {
		f := "sweep." + d.Name
		if !sweepKeyRE.MatchString(d.Name) || len(d.Name) > 32 {
			bad(f, "%q is not a safe sweep key (lowercase words joined by _ or -, like pool or max_pool, at most 32 characters)", d.Name)
		}
		switch {
		case d.Property == "" && d.Load == "":
			bad(f, "needs property: (a Spring property of the target) or load: (users, rate or burst)")
		case d.Property != "" && d.Load != "":
			bad(f, "has both property and load (keep one)")
		case d.Property != "":
			m.checkPropertySweep(f, d, props, bad)
		default:
			m.checkLoadSweep(f, d, loads, measured, bad)
		}
		switch {
		case len(d.Values) == 0:
			bad(f+".values", "no values (list the points, like [50, 100, 200])")
		case len(d.Values) > MaxSweepValues:
			bad(f+".values", "%d values, more than the %d allowed (each is a target start per variant; sweep fewer)", len(d.Values), MaxSweepValues)
		}
		seen := map[string]bool{}
		for i, v := range d.Values {
			vf := fmt.Sprintf("%s.values[%d]", f, i)
			if !sweepValueRE.MatchString(v) || len(v) > 64 {
				bad(vf, "%q is not a safe sweep value (letters, digits, '.', '+' and '-', at most 64 characters)", v)
			}
			if seen[v] {
				bad(vf, "%q is listed twice (each value is one point; remove the copy)", v)
			}
			seen[v] = true
		}
	}
}

// checkPropertySweep refuses property sweeps that change nothing: no
// built-in target to receive the property, or a second dimension on the
// same property (the last one would win).
func (m *Manifest) checkPropertySweep(f string, d SweepDim, props map[string]string, bad badFunc) {
	if !propertyRE.MatchString(d.Property) {
		bad(f+".property", "%q is not a Spring property name (like spring.datasource.hikari.maximum-pool-size)", d.Property)
	}
	if !m.hasBuiltin() {
		bad(f+".property", "every variant is a command, and Spring properties reach built-in targets only, so this sweep would change nothing (sweep a load parameter, or pass the setting in command:)")
	}
	if other, ok := props[d.Property]; ok {
		bad(f+".property", "sweep %s already sets %s (one dimension per property)", other, d.Property)
	}
	props[d.Property] = d.Name
}

// checkLoadSweep checks a sweep over users, rate or burst: it must be a
// parameter the measured group's model uses, set once, with numbers the
// generator accepts.
func (m *Manifest) checkLoadSweep(f string, d SweepDim, loads map[string]string, g *Group, bad badFunc) {
	model, ok := SweepLoads[d.Load]
	if !ok {
		bad(f+".load", "%q cannot be swept (use users, rate, burst or connections)", d.Load)
		return
	}
	if other, ok := loads[d.Load]; ok {
		bad(f+".load", "sweep %s already sets %s (one dimension per load parameter)", other, d.Load)
	}
	loads[d.Load] = d.Name
	if g != nil && slices.Contains(load.Models(), g.Model) && g.Model != model {
		bad(f+".load", "the measured group %q uses the %s model, which ignores %s, so this sweep would change nothing (sweep %s's parameter, or set model: %s)", g.Name, g.Model, d.Load, g.Model, model)
	}
	for i, v := range d.Values {
		vf := fmt.Sprintf("%s.values[%d]", f, i)
		x, err := strconv.ParseFloat(v, 64)
		switch {
		case err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x <= 0:
			bad(vf, "%q is not a positive number", v)
		case (d.Load == "rate" || d.Load == "connections") && x > load.MaxRate:
			bad(vf, "%s requests per second is more than the generator can pace (at most %g)", v, float64(load.MaxRate))
		case d.Load == "rate" && g != nil && g.Duration > 0 && x*g.Duration.Seconds() < 1:
			bad(vf, "%s requests per second for %s sends less than one request (raise it or the duration)", v, g.Duration)
		case d.Load != "rate" && x != math.Trunc(x):
			bad(vf, "%q is not a whole number of %s", v, d.Load)
		case d.Load != "rate" && x > MaxUsers:
			bad(vf, "%s %s is more than the %d allowed", v, d.Load, MaxUsers)
		}
	}
}

// hostProblems compares the load with this machine's limits: the most
// connections held open at once against the hard limit on open files.
// They are Host problems, which lint shows as warnings, since the same
// manifest may run on a bigger host.
func (m *Manifest) hostProblems(pos positions) Problems {
	limit := load.FileLimit()
	if limit == 0 {
		return nil
	}
	var ps Problems
	for _, p := range m.loadPoints() {
		groups, err := m.LoadGroups(Variant{}, p)
		if err != nil {
			return nil
		}
		need, most, field := load.FDReserve, 0, "load"
		for i, g := range groups {
			if g.Users > MaxUsers || g.Burst > MaxUsers || g.Preallocate > MaxUsers {
				return nil // reported as a bound already
			}
			n := load.HeldConns(g)
			key := map[string]string{"closed": "users", "burst": "burst", "ramp": "stages"}[g.Model]
			if g.Preallocate > n { // open models hold their preallocated connections from the start
				n, key = g.Preallocate, "preallocate"
			}
			need += n
			if n > most {
				most = n
				field = m.groupField(i) + "." + key
			}
		}
		if uint64(need) > limit {
			for _, d := range m.Sweep {
				if d.Load != "" {
					field = "sweep." + d.Name + ".values"
				}
			}
			line, col := pos.at(field)
			ps = append(ps, Problem{File: m.File, Line: line, Col: col, Field: field, Host: true,
				Msg: fmt.Sprintf("this host allows %d open files (ulimit -Hn) but the load holds %d connections at once%s plus %d for the generator; raise the hard limit (ulimit -Hn, /etc/security/limits.conf, LimitNOFILE=) or lower users/burst/preallocate", limit, need-load.FDReserve, pointNote(p), load.FDReserve)})
			break
		}
	}
	return ps
}
