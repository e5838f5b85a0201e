package telemetry

import "time"

// The samples a trial reads (issue 25). On one machine a trial's
// once-a-second samples run from just before load.Run to just after it:
// the load's connects there take a few hundred ms at most, so its readings
// fall between the load's release and its last answer, and Stop's reading
// closes the window at the last answer. On the target host of a multi-host
// run the sampler starts at the agents' planned release, and their
// connects take seconds (2.3-3.9 s for a 600-connection burst between
// network-namespace hosts), so its first readings see the target accepting
// connections, which the single-machine readings never see: peak RSS read
// 10% above one machine's. Within cuts a trial's samples to the same
// edges once they are known.

// Within returns the samples whose reading falls within the window from
// `from` to `to` (after the samples' origin, the instant their T counts
// from): a sample reads its gauges (RSS, threads, a scrape) at the end of
// its interval, T+Dur, and counts when that reading lies in [from, to];
// so does the first reading at or after to, the one that closes the window
// as Stop's reading closes a single-machine trial's just after load.Run
// returns (or the last sample when none is that late). A sample's CPU is
// over its interval, which may begin before from: the same holds on one
// machine, where the first interval begins before the connects.
func Within(samples []Sample, from, to time.Duration) []Sample {
	if len(samples) == 0 {
		return nil
	}
	to = max(to, from)
	lo, hi := from.Seconds(), to.Seconds()
	closing, last := -1, 0
	for i, x := range samples {
		r := readAt(x)
		if r >= hi && (closing < 0 || r < readAt(samples[closing])) {
			closing = i
		}
		if r > readAt(samples[last]) {
			last = i
		}
	}
	if closing < 0 {
		closing = last
	}
	var out []Sample
	for i, x := range samples {
		if r := readAt(x); i == closing || (r >= lo && r <= hi) {
			out = append(out, x)
		}
	}
	return out
}

// readAt is when a sample read its gauges, in seconds after the origin.
// T and Dur are kept to the ms: a reading 0.5 ms from an edge may fall on
// either side of it.
func readAt(x Sample) float64 { return x.T + x.Dur }

// Origin is the instant the samples' T counts from (Start): a window's
// edges on this machine's clock minus Origin are Within's from and to.
func (s *Sampler) Origin() time.Time { return s.start }
