package report

// warmupText is manifest.yaml's load.warmup as the report words it
// (record.WarmupInfo.Text): a duration ("10s"), or the until-steady
// mapping ({min, max, until: steady}, issue 20) as "until steady, 5s to
// 1m0s".
type warmupText string

// phrase is the warm-up as a noun phrase: "a warm-up of 10s", "a warm-up
// until each fork was steady (5s to 1m0s; steady.json has each fork's)".
func (w warmupText) phrase() string {
	s := string(w)
	if len(s) > 6 && s[:6] == "until " {
		return "a warm-up until each fork was " + s[6:] + " (each fork's length and why it stopped are in steady.json)"
	}
	return "a warm-up of " + s
}
