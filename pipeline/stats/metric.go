package stats

import "strings"

// HigherIsBetter reports the direction of a trials.csv metric: throughput
// (rps, requests, anything ending in _rps) is better when higher; latency
// (*_ms), errors, error_pct and everything else is better when lower. The
// direction decides what "slower" means for the slow-first flag and which
// way a regression points in a diff.
func HigherIsBetter(metric string) bool {
	return metric == "rps" || metric == "requests" || strings.HasSuffix(metric, "_rps")
}

// knownMetrics are the trials.csv columns a claim may name besides the
// suffix families accepted by KnownMetric.
var knownMetrics = []string{"rps", "requests", "errors", "error_pct", "threads", "missed"}

// metricSuffixes are the unit suffixes of trials.csv columns: the house
// style puts the unit in the name, so any column with one of these is a
// metric (p99_ms, wall_ms, achieved_rps, cpu_pct, heap_mb).
var metricSuffixes = []string{"_ms", "_rps", "_pct", "_mb", "_count"}

// KnownMetric reports whether a claim may name metric. It accepts the named
// columns above and any column whose name ends in a unit suffix, so that a
// new latency percentile or resource column needs no change here.
func KnownMetric(metric string) bool {
	for _, m := range knownMetrics {
		if metric == m {
			return true
		}
	}
	for _, s := range metricSuffixes {
		if strings.HasSuffix(metric, s) && len(metric) > len(s) {
			return true
		}
	}
	return false
}
