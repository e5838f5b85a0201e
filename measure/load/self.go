package load

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Thresholds past which a result says the generator, not the server, was
// probably the limit.
const (
	saturatedCPUShare = 0.90 // of the cores the process may use
	saturatedLatePct  = 5.0  // open model: sends later than 1 ms past due, percent
)

// raiseFileLimit lifts the soft RLIMIT_NOFILE to the hard limit (every
// connection is a descriptor) and returns the limit now in force.
func raiseFileLimit() (uint64, error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("read RLIMIT_NOFILE: %w", err)
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
			return 0, fmt.Errorf("raise RLIMIT_NOFILE to %d: %w (check ulimit -Hn)", rl.Max, err)
		}
	}
	return rl.Cur, nil
}

// cpuTime is this process's user+sys CPU time so far.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cores is how many CPUs this process may run on (its affinity mask, which
// taskset and cgroup cpusets narrow), not how many the machine has.
func cores() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return runtime.NumCPU()
	}
	return set.Count()
}

// selfCheck judges whether the generator itself was the bottleneck.
func selfCheck(cpu, wall time.Duration, sockets int64, groups []GroupResult) SelfCheck {
	s := SelfCheck{CPUSeconds: cpu.Seconds(), Cores: cores(), Sockets: sockets}
	if wall > 0 {
		s.CPUPct = 100 * cpu.Seconds() / wall.Seconds()
	}
	var why []string
	if s.CPUPct > saturatedCPUShare*100*float64(s.Cores) {
		why = append(why, fmt.Sprintf("generator used %.0f%% CPU of %d allowed cores", s.CPUPct, s.Cores))
	}
	for _, g := range groups {
		if g.LatePct > saturatedLatePct {
			why = append(why, fmt.Sprintf("group %s sent %.1f%% of requests more than 1ms late", g.Name, g.LatePct))
		}
	}
	if len(why) > 0 {
		s.Saturated = true
		s.Reason = strings.Join(why, "; ")
	}
	return s
}
