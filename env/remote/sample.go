package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/threadlab/threadlab/measure/telemetry"
)

// Telemetry on the host that runs the process (issue 25): during a trial
// the controller runs `threadlab remote-helper sample [PIDFILE]` on each
// host. It reads /proc there, as a single-machine run reads it here: the
// supervised program's CPU, RSS and threads (its pid from the supervisor's
// pid file), and the host's CPU used outside threadlab (every process
// running threadlab's executable, and the program's process group, are
// threadlab's) and stolen, once a second. It says "ready" once it has the
// program's pid; a line "go" on its stdin takes the first reading, the end
// of its stdin the last, so the samples span the load's window as the
// controller saw it (give or take half a round trip), not the ssh starts
// around it: a 0.4 s burst sampled from the helper's own start to its
// report read 34% of one core where the single-machine run read 138%. At
// those two moments, before anything else, it also reads the program's
// cumulative CPU time (telemetry.CPUWindow), so the report carries the
// CPU-seconds the program spent between "go" and the end of stdin with no
// sampling cadence in them. It then prints what it sampled as one JSON
// object and exits. When the controller names the load's edges ("end FROM
// TO"), the report also says when the once-a-second sampler started after
// "go", so that the readings taken between the release and the last
// answer can be told from those taken while the agents opened their
// connections (Sampling.Window): the trial's peaks of RSS and threads read
// only the former, as on one machine.
//
// Hosts that share one kernel (network namespaces or containers on one
// machine) share its CPUs, so each one's "outside threadlab" would count
// the experiment's programs on the others as noise: `--exclude PIDFILE`
// (repeatable) names the pid file of such a program, whose process group
// is then threadlab's on this host too.

// sampleReport is what `remote-helper sample` prints at the end.
type sampleReport struct {
	Samples []telemetry.Sample   `json:"samples"`
	Flags   []telemetry.Flag     `json:"flags"`
	CPU     telemetry.CPUSeconds `json:"cpu"` // the program's CPU-seconds from "go" to the last answer ("end"), else to the end of stdin
	Edges   *windowEdges         `json:"edges,omitempty"`
}

// windowEdges says where the window fell when the controller named its
// edges: the release and the last answer, when stdin ended (all after
// "go"), and the CPU-seconds from "go" to the end of stdin, which the
// window would have read without "end".
type windowEdges struct {
	Release    time.Duration `json:"release_ns"`
	LastAnswer time.Duration `json:"last_answer_ns"`
	Closed     time.Duration `json:"closed_ns"`
	ClosedSec  float64       `json:"closed_sec"`
	// Origin is when the once-a-second sampler started, after "go": the
	// instant its samples' T count from (telemetry.Within).
	Origin time.Duration `json:"origin_ns"`
}

// sampleHelper is `threadlab remote-helper sample [--exclude PIDFILE]... [PIDFILE]`.
func sampleHelper(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	const usage = "usage: threadlab remote-helper sample [--exclude PIDFILE]... [PIDFILE]"
	var groups []int
	for len(args) >= 1 && args[0] == "--exclude" {
		if len(args) < 2 {
			fmt.Fprintln(stderr, usage)
			return 2
		}
		p, err := waitPid(args[1], 10*time.Second)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		g, err := syscall.Getpgid(p)
		if err != nil {
			fmt.Fprintf(stderr, "process %d of %s: no process group: %v (is it still running?)\n", p, args[1], err)
			return 1
		}
		groups = append(groups, g)
		args = args[2:]
	}
	if len(args) > 1 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	pid := 0
	if len(args) == 1 {
		var err error
		if pid, err = waitPid(args[0], 10*time.Second); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	exe := ""
	if p, err := os.Executable(); err == nil {
		exe = filepath.Base(p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fmt.Fprintln(stdout, "ready")
	in := bufio.NewReader(stdin)
	line, err := in.ReadString('\n')
	if err == nil && strings.TrimSpace(line) != "go" {
		fmt.Fprintf(stderr, "sample: said %q, want go (then the end of stdin)\n", line)
		return 2
	}
	// The CPU window's edges first: the sampler's first reading scans
	// /proc, which on a busy host takes milliseconds.
	win := telemetry.NewCPUWindow(pid)
	if err == nil { // "go"; stdin ended before it: an empty window, nothing measured
		win.Begin()
	}
	opened := time.Now() // the instant FROM and TO count from, as the window's (within µs)
	marks := make(chan struct{})
	marked := make(chan struct{})
	go func() { // the clock every markEvery, for CPUBetween
		defer close(marked)
		tick := time.NewTicker(markEvery)
		defer tick.Stop()
		for {
			select {
			case <-marks:
				return
			case <-tick.C:
				win.Mark()
			}
		}
	}()
	smp := telemetry.StartWith(ctx, pid, "", telemetry.Options{Interval: time.Second, Exe: exe, Groups: groups})
	from, to, said, lerr := readEnd(in)
	win.End()
	close(marks)
	<-marked
	if lerr != nil {
		fmt.Fprintln(stderr, lerr)
		return 2
	}
	rep := sampleReport{Samples: smp.Stop(), Flags: smp.Flags()}
	var lost []telemetry.Flag
	if said {
		rep.CPU, lost = win.CPUBetween(from, to)
		raw, _ := win.CPU()
		rep.Edges = &windowEdges{Release: from, LastAnswer: to, Closed: win.Open(), ClosedSec: raw.Sec, Origin: smp.Origin().Sub(opened)}
	} else {
		rep.CPU, lost = win.CPU()
	}
	rep.Flags = append(rep.Flags, lost...)
	if pid == 0 { // a host without a program of ours: only its own CPU matters
		rep.Flags = slices.DeleteFunc(rep.Flags, func(f telemetry.Flag) bool { return f.Code == telemetry.FlagPidUnreadable })
	}
	if err := json.NewEncoder(stdout).Encode(rep); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// markEvery is how often the sampler reads the program's CPU clock
// between "go" and the end of stdin: the resolution of the window's edges
// that the controller names afterwards ("end").
const markEvery = 10 * time.Millisecond

// readEnd reads the rest of the sampler's stdin after "go": an optional
// line "end FROM TO", the load's release and its last answer, in ns
// after the moment "go" left the controller, then the end of stdin.
func readEnd(in *bufio.Reader) (from, to time.Duration, said bool, err error) {
	for {
		line, rerr := in.ReadString('\n')
		if f := strings.Fields(line); len(f) > 0 {
			var a, b int64
			var perr error
			if len(f) == 3 {
				if a, perr = strconv.ParseInt(f[1], 10, 64); perr == nil {
					b, perr = strconv.ParseInt(f[2], 10, 64)
				}
			}
			if f[0] != "end" || len(f) != 3 || perr != nil || a < 0 || b < a || said {
				io.Copy(io.Discard, in)
				return 0, 0, false, fmt.Errorf("sample: said %q, want \"end FROM TO\" (the release and the last answer, ns after go, FROM <= TO) once, then the end of stdin", line)
			}
			from, to, said = time.Duration(a), time.Duration(b), true
		}
		if rerr != nil {
			return from, to, said, nil
		}
	}
}

// waitPid reads a pid file (a supervisor's, or PostgreSQL's
// postmaster.pid: the pid on the first line), waiting up to within for it.
func waitPid(file string, within time.Duration) (int, error) {
	deadline := time.Now().Add(within)
	for {
		b, err := os.ReadFile(file)
		if err == nil {
			first, _, _ := strings.Cut(string(b), "\n") // postmaster.pid has more lines
			pid, err := strconv.Atoi(strings.TrimSpace(first))
			if err != nil || pid <= 0 {
				return 0, fmt.Errorf("pid file %s holds %q, not a pid", file, b)
			}
			return pid, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no pid file %s after %v: is the program running under threadlab supervise --pidfile?", file, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Sampling is a sampler running on a host for one trial.
type Sampling struct {
	host    string
	a       *Agent
	r       *bufio.Reader
	cpu     telemetry.CPUSeconds // from the report (Stop)
	edges   windowEdges          // from the report (Stop), after EndAt
	samples []telemetry.Sample   // from the report (Stop)
}

// Sample starts sampling on the host: the program of pidFile (a Proc's
// PidFile) and the host's CPU, or the host's CPU alone when pidFile is "".
// The process groups of the exclude pid files (programs of the experiment
// on hosts that share this host's kernel) are not noise here either. It
// returns once the first reading is taken there.
func (h *Host) Sample(ctx context.Context, pidFile string, exclude ...string) (*Sampling, error) {
	argv := []string{h.Threadlab(), HelperCommand, "sample"}
	for _, x := range exclude {
		argv = append(argv, "--exclude", x)
	}
	if pidFile != "" {
		argv = append(argv, pidFile)
	}
	a, err := h.StartAgent(argv)
	if err != nil {
		return nil, err
	}
	return sampling(ctx, h.Name, a)
}

// sampling waits for the sampler a, started on host, to say it is ready.
func sampling(ctx context.Context, host string, a *Agent) (*Sampling, error) {
	s := &Sampling{host: host, a: a, r: bufio.NewReader(a.Stdout)}
	ready := make(chan error, 1)
	go func() {
		line, err := s.r.ReadString('\n')
		if err == nil && strings.TrimSpace(line) != "ready" {
			err = fmt.Errorf("said %q", line)
		}
		ready <- err
	}()
	var err error
	select {
	case err = <-ready:
	case <-ctx.Done():
		err = ctx.Err()
	case <-time.After(30 * time.Second):
		err = fmt.Errorf("not ready after 30s")
	}
	if err != nil {
		cerr := a.Close()
		return nil, fmt.Errorf("host %s: start the sampler: %v%v", host, err, orNil(cerr))
	}
	return s, nil
}

func orNil(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

// Begin takes the first reading: the window starts (call it as the load
// starts).
func (s *Sampling) Begin() error {
	if _, err := io.WriteString(s.a.Stdin, "go\n"); err != nil {
		return fmt.Errorf("host %s: start the sampler's window: %v", s.host, err)
	}
	return nil
}

// End takes the last reading: the window ends (call it as the load ends;
// Stop then collects the report). Without Begin the window is empty.
func (s *Sampling) End() { s.a.Stdin.Close() }

// EndAt ends the window and sets its edges afterwards: the load's
// release and its last answer, from and to after Begin was called. Begin
// is called at the planned release, which precedes the actual one while a
// load agent opens its connections (a burst of one generator is released
// once its connects are done), and EndAt once the answers have come back
// over ssh: the sampler reads the program's CPU clock every few ms and
// reports it interpolated at from and to after Begin's arrival there, so
// the target's CPU for accepting the connections before the release, and
// for closing them after the last answer, stay out of the window, as on
// one machine. Without Begin the window is empty.
func (s *Sampling) EndAt(from, to time.Duration) {
	from = max(from, 0)
	to = max(to, from)
	fmt.Fprintf(s.a.Stdin, "end %d %d\n", from.Nanoseconds(), to.Nanoseconds())
	s.a.Stdin.Close()
}

// Stop ends the sampling, if End has not, and returns the samples and the
// sampler's flags.
func (s *Sampling) Stop() ([]telemetry.Sample, []telemetry.Flag, error) {
	s.End()
	var rep sampleReport
	derr := json.NewDecoder(s.r).Decode(&rep)
	cerr := s.a.Close()
	if derr != nil || cerr != nil {
		return nil, nil, fmt.Errorf("host %s: the sampler's report: %v%s", s.host, derr, orNil(cerr))
	}
	s.cpu, s.samples = rep.CPU, rep.Samples
	if rep.Edges != nil {
		s.edges = *rep.Edges
	}
	return rep.Samples, rep.Flags, nil
}

// Window is, after Stop, the samples that fall within the edges EndAt
// named (telemetry.Within): those read between the load's release and its
// last answer, and the reading that closes the window. The readings taken
// while a load agent opened its connections, after Begin and before the
// release, do not count, as on one machine, where they take a few hundred
// ms and no reading falls in them. Without EndAt, every sample.
func (s *Sampling) Window() []telemetry.Sample {
	e := s.edges
	if e == (windowEdges{}) {
		return slices.Clone(s.samples)
	}
	return telemetry.Within(s.samples, e.Release-e.Origin, e.LastAnswer-e.Origin)
}

// Edges says, after Stop, where the window fell when EndAt named its
// edges: the release, the last answer and the end of stdin, all after
// Begin's arrival there, and the CPU-seconds from Begin to the end of
// stdin; ok is false without EndAt.
func (s *Sampling) Edges() (release, last, closed time.Duration, closedSec float64, ok bool) {
	e := s.edges
	return e.Release, e.LastAnswer, e.Closed, e.ClosedSec, e != (windowEdges{})
}

// CPU is the sampled program's CPU-seconds between Begin and End, read on
// its host; not OK before Stop, without a program, or when it could not
// be measured (Stop's flags then say why).
func (s *Sampling) CPU() telemetry.CPUSeconds { return s.cpu }
