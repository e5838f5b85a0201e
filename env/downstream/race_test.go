//go:build race

package downstream

// raceEnabled turns off wall-clock assertions: the race detector slows every
// memory access several times, so timings say nothing about the service.
const raceEnabled = true
