package steady

import (
	"fmt"
	"strconv"
	"strings"
)

// RoundReason is the warmup.csv reason of warm-up round n; the last round
// of an until-steady warm-up adds why it stopped ("; stop: steady" or
// "; stop: max").
func RoundReason(n int) string { return fmt.Sprintf("warm-up round %d", n) }

// ParseRound reads the round number from a warmup.csv reason, "warm-up round
// 3" (possibly followed by "; other warnings").
func ParseRound(reason string) (int, bool) {
	const prefix = "warm-up round "
	i := strings.Index(reason, prefix)
	if i < 0 {
		return 0, false
	}
	s := reason[i+len(prefix):]
	if j := strings.IndexAny(s, "; "); j >= 0 {
		s = s[:j]
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}
