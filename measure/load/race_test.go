//go:build race

package load

// raceEnabled: the race detector allows at most 8128 live goroutines.
const raceEnabled = true
