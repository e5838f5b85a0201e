package load

import "math"

// profile is an open model's asked rate over time as linear pieces: one
// flat piece for Open, one piece per stage for a rate ramp (flat when
// stepped, sloped from the previous level when Smooth). Being linear, it can
// be integrated exactly, which is how send times are found.
type profile []piece

// piece is a rate moving linearly from a (at from) to b (at to); times in
// ns since the group start, rates in requests per second.
type piece struct {
	from, to int64
	a, b     float64
}

func flatProfile(rate float64, d int64) profile { return profile{{0, d, rate, rate}} }

func rampProfile(stages []Stage, smooth bool) profile {
	var p profile
	var at int64
	prev := 0.0
	for _, s := range stages {
		a := s.Rate
		if smooth {
			a = prev
		}
		p = append(p, piece{at, at + int64(s.Duration), a, s.Rate})
		at += int64(s.Duration)
		prev = s.Rate
	}
	return p
}

func (p profile) end() int64 {
	if len(p) == 0 {
		return 0
	}
	return p[len(p)-1].to
}

// at is the rate at t.
func (p profile) at(t int64) float64 {
	for _, c := range p {
		if t < c.to {
			return c.rateAt(t)
		}
	}
	return 0
}

func (c piece) rateAt(t int64) float64 {
	if c.to == c.from {
		return c.b
	}
	return c.a + (c.b-c.a)*float64(t-c.from)/float64(c.to-c.from)
}

// mean is the average asked rate: the area under the profile over its length.
func (p profile) mean() float64 {
	var area float64
	for _, c := range p {
		area += (c.a + c.b) / 2 * float64(c.to-c.from) / 1e9
	}
	if d := p.end(); d > 0 {
		return area / (float64(d) / 1e9)
	}
	return 0
}

// next returns when the send after the one at t is due: the time by which
// the area under the rate, from t, reaches one request. t < 0 asks for the
// first send, which is at 0 if the rate there is positive. The result is
// p.end() or later when no send is left. On a sloped piece the area is
// r0*h + k*h^2/2 (k the slope), solved for h in the form
// 2C / (r0 + sqrt(r0^2 + 2kC)), which stays exact when k is tiny.
func (p profile) next(t int64) int64 {
	if t < 0 {
		if p.at(0) > 0 {
			return 0
		}
		t = 0
	}
	need := 1e9 // one request, in request-nanoseconds per second
	for _, c := range p {
		if t >= c.to {
			continue
		}
		r0 := c.rateAt(t)
		span := float64(c.to - t)
		if area := (r0 + c.b) / 2 * span; area >= need {
			k := (c.b - c.a) / float64(c.to-c.from)
			h := 2 * need / (r0 + math.Sqrt(max(r0*r0+2*k*need, 0)))
			return t + max(int64(h), 1)
		} else {
			need -= area
		}
		t = c.to
	}
	return p.end()
}
