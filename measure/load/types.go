// Package load is threadlab's load generator: it drives HTTP/1.1 traffic at one
// target in one or more request groups (closed, open, burst or ramp models),
// times every request from its intended send time, and returns results as
// values (histograms, per-second series, error classes, self-checks).
//
// Data flow: the pipeline builds a Plan from a manifest, calls Run once per
// warm-up and once per trial, and hands the Result to the record and stats
// packages. Failed requests are results too: they are counted by class and
// kept in the latency record, never dropped.
//
// Inside a Run: each group (run.go) drives its model (models.go) with
// workers, one per connection (conn.go), which write pre-rendered request
// bytes (request.go), parse the answer without allocating (parse.go) and
// batch outcomes in a private tally that is flushed into the group's
// recorder (record.go). One watchdog enforces response timeouts and
// cancellation for all workers; the open model's dispatcher sleeps on a
// timerfd (pacer.go) for sub-millisecond send times.
package load

import (
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Models a Group may use.
const (
	Closed = "closed" // Users concurrent users, each sends, waits for the answer, thinks, repeats
	Open   = "open"   // constant arrival Rate; latency from the intended send time (wrk2)
	Burst  = "burst"  // Burst requests released together; Wall is the time until all are answered
	Ramp   = "ramp"   // Stages of users (closed) or rate (open)
)

// Models lists the models a Group may use, in the order messages name them.
func Models() []string { return []string{Closed, Open, Burst, Ramp} }

// Request is one entry of a weighted request mix.
type Request struct {
	Method  string            // "" means GET
	Path    string            // may hold templates such as {random 1..100000}
	Headers map[string]string // extra request headers
	Body    string
	Weight  int // relative weight in the mix; 0 means 1
}

// Stage is one step of a ramp: hold Users (closed) or Rate (open) for Duration.
// With Smooth set on the group, the level moves linearly from the previous stage.
type Stage struct {
	Duration time.Duration
	Users    int
	Rate     float64
}

// Group is one independent stream of requests within a trial, measured on its own.
type Group struct {
	Name        string
	Model       string // Closed, Open, Burst or Ramp
	Users       int    // closed: concurrent users
	ThinkMin    time.Duration
	ThinkMax    time.Duration // closed: think time drawn uniformly from [ThinkMin, ThinkMax]
	Rate        float64       // open: requests per second
	MaxInFlight int           // open: cap on requests in flight; sends beyond it are Missed. 0 = 10000
	Burst       int           // burst: requests released at once
	// ReleaseAt (burst) holds the release until this offset from the start
	// of the trial, once every connection is up: several generators
	// splitting one burst (measure/fleet) release their shares at one
	// agreed instant rather than each when its own connects are done. 0
	// releases as soon as the connections are up. A generator whose connects
	// take longer releases late, and GroupResult.Release shows it.
	ReleaseAt   time.Duration
	Stages      []Stage       // ramp
	Smooth      bool          // ramp: interpolate between stages instead of stepping
	Start       time.Duration // offset from the start of the trial
	Duration    time.Duration // closed/open: how long to send; burst ignores it
	Requests    []Request     // the mix; at least one
	NoKeepAlive bool          // a new TCP connection per request (seed 002)
	// MaxDials caps the connects in flight at once. 0 picks the default:
	// every connection of the group at once with NoKeepAlive, where the
	// connect is part of each measured request (seed 002's simultaneous
	// connects: N users present N SYNs to the accept queue together); 256
	// with keep-alive, where connections are set up once (a burst connects
	// before its release) and a listen backlog overflow would only add SYN
	// retransmits to the set-up.
	MaxDials int
	// Preallocate (open model, and ramps of rates) opens this many
	// connections before the first send, all at once: k6's constant
	// arrival rate with preAllocatedVUs = N, seed 002's fixed-rate
	// scenarios, where all N connections are open from the first second.
	// They wait idle and carry the sends; MaxInFlight defaults to it. With
	// NoKeepAlive every request connects anyway, so only the workers are
	// made ahead. 0 dials connections as sends need them. The connects are
	// not part of any measured request.
	Preallocate int

	ConnectTimeout time.Duration // 0 = 5s
	Timeout        time.Duration // response timeout; 0 = 60s
	CountHeader    string        // response header whose distinct values are counted, e.g. X-Thread

	// Stall ends the group early when the target sends no response at all
	// for this long while requests are outstanding (a frozen or hopeless
	// target), and GroupResult.Stalled says so. 0 means max(5s, Timeout):
	// a request may legitimately take up to Timeout, so a shorter default
	// could cut off a slow but healthy answer, while a whole Timeout with
	// nothing answered means the target met none of its deadlines.
	// Negative turns the watchdog off.
	Stall time.Duration
}

// Plan is everything one Run needs.
type Plan struct {
	Target string // base URL, e.g. http://127.0.0.1:8080
	Groups []Group
	Seed   int64 // seeds path templates and think times; recorded with the run
	// OnTick, when set, is called about once a second from a single goroutine
	// with the progress so far (for progress bars); it must return quickly.
	OnTick func(Tick)
	// OnRelease, when set, is called once, when the first request of the
	// plan may leave: a burst group's release (its connections up), any
	// other group's start. The release waits for it, so it must be quick.
	// It opens a trial's CPU window (measure/telemetry, CPUWindow), which
	// would otherwise count the target accepting a burst's connections.
	OnRelease func()
}

// Tick is live progress.
type Tick struct {
	Elapsed  time.Duration
	Requests int64   // completed so far, all groups
	Errors   int64   // failed so far, all groups
	RPS      float64 // over the last second
}

// Result is the outcome of one Run.
type Result struct {
	Start  time.Time
	Wall   time.Duration // first send to last answer over all groups
	Groups []GroupResult
	Self   SelfCheck
	// Stalled is empty unless a group stalled (see Group.Stall): then it
	// names the group and says for how long the target answered nothing.
	Stalled string
}

// SelfCheck is the generator's view of itself: was it, not the server, the limit?
type SelfCheck struct {
	CPUSeconds float64 // user+sys CPU seconds of this process during the run
	CPUPct     float64 // CPUSeconds per wall second x 100 (100 = one core busy)
	Cores      int     // CPUs this process may run on
	Sockets    int64   // TCP connections opened
	Saturated  bool    // true when the generator was (probably) the bottleneck
	Reason     string  // why Saturated, in words
}

// Second is one per-second bucket of a group's series, counted by completion time.
type Second struct {
	T        int // seconds since the run start
	Requests int64
	Errors   int64
	P50Ms    float64
	P99Ms    float64
	Latency  *hdrhistogram.Histogram // microseconds, 2 significant digits; nil when nothing completed
}

// GroupResult is what one group measured.
type GroupResult struct {
	Name          string
	Model         string
	Requests      int64                   // completed, including failed ones
	Errors        int64                   // failed: connection errors, timeouts, HTTP status >= 400
	OK            int64                   // answered with a 2xx status (a 3xx is neither OK nor an error)
	ErrorsByClass map[string]int64        // "refused", "reset", "timeout", "http_4xx", "http_5xx", "http_unknown" (status >= 600), "other"
	Wall          time.Duration           // first send to last answer of this group
	RPS           float64                 // Requests / Wall
	Latency       *hdrhistogram.Histogram // microseconds, 1us..60s, 3 significant digits; failed requests included
	// Connect is the duration of each TCP connect that succeeded (SYN sent
	// to the handshake's completion on the client, which the kernel
	// reports once the server's SYN-ACK is in), microseconds, as Latency;
	// nil when the group made none. A connect's time is inside its
	// request's latency too. SlowConnects counts those of SlowConnect or
	// more: the listen queue dropped a SYN and the client sent it again.
	Connect      *hdrhistogram.Histogram
	SlowConnects int64
	Series       []Second
	Headers      map[string]int64 // distinct values of CountHeader -> responses carrying it
	AskedRate    float64          // open/ramp-open: the rate asked for (mean)
	AchievedRate float64          // open: sends per second actually made
	Missed       int64            // open: sends skipped because MaxInFlight was reached
	LatePct      float64          // open: share of sends later than 1 ms past their intended time, x100
	MaxInFlight  int              // open: the in-flight cap in force (Group.MaxInFlight, lowered to fit RLIMIT_NOFILE)
	Stalled      string           // why the stall watchdog stopped the group early; empty when it did not
	// Release (burst) is when the burst was released, as an offset from
	// Result.Start; 0 for the other models. A merged result of several
	// generators (measure/fleet) keeps the earliest, and Releases and
	// ReleaseSpread say how far apart the shares left.
	Release time.Duration
	// Releases (merged bursts) is each generator's release, as an offset
	// from the merged Result.Start on the controller's clock, in generator
	// order; ReleaseSpread is the latest minus the earliest. Nil and 0 for
	// one generator.
	Releases      []time.Duration
	ReleaseSpread time.Duration
}

// QuantileMs returns the q-th percentile (0..100) of the latency record in milliseconds.
func (g GroupResult) QuantileMs(q float64) float64 {
	if g.Latency == nil || g.Latency.TotalCount() == 0 {
		return 0
	}
	return float64(g.Latency.ValueAtQuantile(q)) / 1000
}

// Connects is how many TCP connects succeeded.
func (g GroupResult) Connects() int64 {
	if g.Connect == nil {
		return 0
	}
	return g.Connect.TotalCount()
}

// ConnectMs returns the q-th percentile (0..100) of the connect times in
// milliseconds, 0 when there were none.
func (g GroupResult) ConnectMs(q float64) float64 {
	if g.Connects() == 0 {
		return 0
	}
	return float64(g.Connect.ValueAtQuantile(q)) / 1000
}

// MaxMs returns the largest recorded latency in milliseconds.
func (g GroupResult) MaxMs() float64 {
	if g.Latency == nil || g.Latency.TotalCount() == 0 {
		return 0
	}
	return float64(g.Latency.Max()) / 1000
}

// Throughput is meaningful only over a window with enough requests in it.
// The window is the group's Wall, from its first send to its last answer:
// one request alone makes it that request's latency, so its "throughput"
// would be 1/latency, a latency in disguise. With fewer than
// MinRPSRequests, one request more or less at either end of the window
// moves the rate by over 5%; under MinRPSWindow, a rate per second is an
// extrapolation from a fraction of one.
const (
	MinRPSRequests = 20
	MinRPSWindow   = time.Second
)

// Throughput returns the group's requests per second over its Wall, and
// an empty reason; or 0 and why the number would mean nothing.
func (g GroupResult) Throughput() (rps float64, why string) {
	switch {
	case g.Requests < MinRPSRequests:
		return 0, fmt.Sprintf("only %d requests completed, throughput needs at least %d", g.Requests, MinRPSRequests)
	case g.Wall < MinRPSWindow:
		return 0, fmt.Sprintf("the window from first send to last answer is %s, throughput needs at least %s: run for longer", g.Wall.Round(time.Millisecond), MinRPSWindow)
	}
	return g.RPS, ""
}
