package record

import (
	"math"
	"strconv"
	"strings"
)

// Gauge is a sampled value that may be missing: a server sample that was
// not taken (the sampler missed a second, the target had died, no JVM
// metrics endpoint) is NaN in memory and an empty field in CSV, never 0,
// so charts draw a gap instead of a fall to zero.
type Gauge float64

// Missing is the Gauge of a sample that was not taken.
func Missing() Gauge { return Gauge(math.NaN()) }

// OK tells whether the value was measured.
func (g Gauge) OK() bool { return !math.IsNaN(float64(g)) }

// MarshalCSV writes a missing value as an empty field.
func (g Gauge) MarshalCSV() (string, error) {
	if !g.OK() {
		return "", nil
	}
	return strconv.FormatFloat(float64(g), 'f', -1, 64), nil
}

// UnmarshalCSV reads an empty field (or "NaN") as missing.
func (g *Gauge) UnmarshalCSV(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		*g = Missing()
		return nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	*g = Gauge(x)
	return nil
}
