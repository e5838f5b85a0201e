package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/store/record"
)

// The agent protocol: one JSON object per line, both ways.
//
//	controller -> agent  {"type":"ping","seq":1}
//	agent -> controller  {"type":"pong","seq":1,"version":1,"clock":<agent wall clock, Unix ns>}
//	controller -> agent  {"type":"job","job":{"target":...,"seed":...,"groups":[load.Group...],"start":<Unix ns, agent clock>}}
//	agent -> controller  {"type":"result","result":{...}}   or   {"type":"error","error":"why"}
//
// Decoding is strict (unknown fields are errors) and every pong carries the
// protocol version, so a controller and an agent of different threadlab
// builds fail at the handshake with a message, not with numbers quietly
// missing. Histograms travel in HdrHistogram's standard V2 compressed base64
// encoding (the one of .hlog files), durations as nanoseconds, times as Unix
// nanoseconds, and floats in the shortest form that parses back to the same
// bits (NaN and infinities as strings), so a Result round-trips exactly.
const protocolVersion = 2 // 2: bursts carry their release instant (release_ns)

// Message kinds.
const (
	msgPing   = "ping"
	msgPong   = "pong"
	msgJob    = "job"
	msgResult = "result"
	msgError  = "error"
)

// Line limits: a job is a plan (small); a result holds one histogram per
// group and second, about 1 KB each compressed, so an hour-long trial of a
// few groups stays far below the limit.
const (
	maxJobLine    = 16 << 20
	maxResultLine = 256 << 20
)

type message struct {
	Type    string      `json:"type"`
	Seq     int         `json:"seq,omitempty"`
	Version int         `json:"version,omitempty"`
	Clock   int64       `json:"clock,omitempty"`
	Job     *wireJob    `json:"job,omitempty"`
	Result  *wireResult `json:"result,omitempty"`
	Error   string      `json:"error,omitempty"`
}

// wireJob is one agent's share of the plan. Groups are load.Group as they
// are (durations in ns), so a field added to load.Group travels without
// code here; Plan itself is not sent because its OnTick is a function.
type wireJob struct {
	Target string       `json:"target"`
	Seed   int64        `json:"seed"`
	Groups []load.Group `json:"groups"`
	Start  int64        `json:"start"` // when to start, Unix ns in the agent's clock
}

type wireResult struct {
	Start   int64       `json:"start"` // Unix ns in the agent's clock
	Wall    int64       `json:"wall_ns"`
	Groups  []wireGroup `json:"groups"`
	Self    wireSelf    `json:"self"`
	Stalled string      `json:"stalled,omitempty"`
}

type wireSelf struct {
	CPUSeconds num    `json:"cpu_seconds"`
	CPUPct     num    `json:"cpu_pct"`
	Cores      int    `json:"cores"`
	Sockets    int64  `json:"sockets"`
	Saturated  bool   `json:"saturated"`
	Reason     string `json:"reason,omitempty"`
}

type wireGroup struct {
	Name          string           `json:"name"`
	Model         string           `json:"model"`
	Requests      int64            `json:"requests"`
	Errors        int64            `json:"errors"`
	OK            int64            `json:"ok"`
	ErrorsByClass map[string]int64 `json:"errors_by_class"`
	Wall          int64            `json:"wall_ns"`
	RPS           num              `json:"rps"`
	Latency       *string          `json:"latency"`                 // V2 compressed base64; null when the Result had none
	Connect       *string          `json:"connect,omitempty"`       // connect times, as Latency; absent when none succeeded
	SlowConnects  int64            `json:"slow_connects,omitempty"` // connects of load.SlowConnect or more
	Series        []wireSecond     `json:"series"`
	Headers       map[string]int64 `json:"headers"`
	AskedRate     num              `json:"asked_rate"`
	AchievedRate  num              `json:"achieved_rate"`
	Missed        int64            `json:"missed"`
	LatePct       num              `json:"late_pct"`
	MaxInFlight   int              `json:"max_in_flight"`
	Stalled       string           `json:"stalled,omitempty"`
	Release       int64            `json:"release_ns"`                  // burst: ns from the result's start to the release
	Releases      []int64          `json:"releases_ns,omitempty"`       // a merged burst: each generator's release
	ReleaseSpread int64            `json:"release_spread_ns,omitempty"` // a merged burst: latest minus earliest release
}

type wireSecond struct {
	T        int     `json:"t"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	P50Ms    num     `json:"p50_ms"`
	P99Ms    num     `json:"p99_ms"`
	Latency  *string `json:"latency"`
}

// num is a float64 that survives JSON exactly, NaN and infinities included
// (encoding/json refuses those).
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

func (n *num) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*n = num(math.NaN())
		return nil
	case `"+Inf"`:
		*n = num(math.Inf(1))
		return nil
	case `"-Inf"`:
		*n = num(math.Inf(-1))
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("not a number: %.40q", b)
	}
	*n = num(f)
	return nil
}

// unixNano is t in Unix ns, with the zero Time as 0 (its own UnixNano
// overflows), so that it comes back as the zero Time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

func encodeHist(h *hdrhistogram.Histogram) (*string, error) {
	if h == nil {
		return nil, nil
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, err
	}
	s := string(b)
	return &s, nil
}

// maxResultHist bounds the decoded histograms of one agent result. Each
// is checked to have threadlab's geometry (record.HistogramBudget), so a
// compromised or buggy load host cannot make the controller allocate what a
// header claims; an hour-long trial of ten groups at one histogram per
// second (20 KB each) stays under this.
const maxResultHist = 1 << 30

func decodeHist(b *record.HistogramBudget, s *string) (*hdrhistogram.Histogram, error) {
	if s == nil {
		return nil, nil
	}
	return b.Decode(*s)
}

// toWire encodes a Result for the controller.
func toWire(r *load.Result) (*wireResult, error) {
	w := &wireResult{
		Start: unixNano(r.Start), Wall: int64(r.Wall), Stalled: r.Stalled,
		Self: wireSelf{CPUSeconds: num(r.Self.CPUSeconds), CPUPct: num(r.Self.CPUPct), Cores: r.Self.Cores,
			Sockets: r.Self.Sockets, Saturated: r.Self.Saturated, Reason: r.Self.Reason},
	}
	if r.Groups != nil {
		w.Groups = make([]wireGroup, 0, len(r.Groups))
	}
	for _, g := range r.Groups {
		wg := wireGroup{
			Name: g.Name, Model: g.Model, Requests: g.Requests, Errors: g.Errors, OK: g.OK,
			ErrorsByClass: g.ErrorsByClass, Wall: int64(g.Wall), RPS: num(g.RPS), Headers: g.Headers,
			AskedRate: num(g.AskedRate), AchievedRate: num(g.AchievedRate), Missed: g.Missed,
			LatePct: num(g.LatePct), MaxInFlight: g.MaxInFlight, Stalled: g.Stalled, Release: int64(g.Release),
			ReleaseSpread: int64(g.ReleaseSpread), SlowConnects: g.SlowConnects,
		}
		for _, r := range g.Releases {
			wg.Releases = append(wg.Releases, int64(r))
		}
		var err error
		if wg.Latency, err = encodeHist(g.Latency); err != nil {
			return nil, fmt.Errorf("group %s: latency histogram: %w", g.Name, err)
		}
		if wg.Connect, err = encodeHist(g.Connect); err != nil {
			return nil, fmt.Errorf("group %s: connect histogram: %w", g.Name, err)
		}
		if g.Series != nil {
			wg.Series = make([]wireSecond, 0, len(g.Series))
		}
		for _, s := range g.Series {
			ws := wireSecond{T: s.T, Requests: s.Requests, Errors: s.Errors, P50Ms: num(s.P50Ms), P99Ms: num(s.P99Ms)}
			if ws.Latency, err = encodeHist(s.Latency); err != nil {
				return nil, fmt.Errorf("group %s, second %d: histogram: %w", g.Name, s.T, err)
			}
			wg.Series = append(wg.Series, ws)
		}
		w.Groups = append(w.Groups, wg)
	}
	return w, nil
}

// fromWire decodes a Result sent by an agent; it never panics on bad input.
func fromWire(w *wireResult) (*load.Result, error) {
	if w == nil {
		return nil, fmt.Errorf("result message without a result")
	}
	r := &load.Result{
		Start: fromUnixNano(w.Start), Wall: time.Duration(w.Wall), Stalled: w.Stalled,
		Self: load.SelfCheck{CPUSeconds: float64(w.Self.CPUSeconds), CPUPct: float64(w.Self.CPUPct), Cores: w.Self.Cores,
			Sockets: w.Self.Sockets, Saturated: w.Self.Saturated, Reason: w.Self.Reason},
	}
	if w.Groups != nil {
		r.Groups = make([]load.GroupResult, 0, len(w.Groups))
	}
	budget := record.NewHistogramBudget(maxResultHist)
	for _, wg := range w.Groups {
		g := load.GroupResult{
			Name: wg.Name, Model: wg.Model, Requests: wg.Requests, Errors: wg.Errors, OK: wg.OK,
			ErrorsByClass: wg.ErrorsByClass, Wall: time.Duration(wg.Wall), RPS: float64(wg.RPS), Headers: wg.Headers,
			AskedRate: float64(wg.AskedRate), AchievedRate: float64(wg.AchievedRate), Missed: wg.Missed,
			LatePct: float64(wg.LatePct), MaxInFlight: wg.MaxInFlight, Stalled: wg.Stalled, Release: time.Duration(wg.Release),
			ReleaseSpread: time.Duration(wg.ReleaseSpread), SlowConnects: wg.SlowConnects,
		}
		for _, r := range wg.Releases {
			g.Releases = append(g.Releases, time.Duration(r))
		}
		if len(wg.Headers) > load.MaxHeaderValues+1 {
			return nil, fmt.Errorf("group %s: %d distinct header values, more than an agent keeps (%d)", wg.Name, len(wg.Headers), load.MaxHeaderValues)
		}
		var err error
		if g.Latency, err = decodeHist(budget, wg.Latency); err != nil {
			return nil, fmt.Errorf("group %s: latency histogram: %w", wg.Name, err)
		}
		if g.Connect, err = decodeHist(budget, wg.Connect); err != nil {
			return nil, fmt.Errorf("group %s: connect histogram: %w", wg.Name, err)
		}
		if g.SlowConnects < 0 || g.SlowConnects > g.Connects() {
			return nil, fmt.Errorf("group %s: %d slow connects of %d", wg.Name, g.SlowConnects, g.Connects())
		}
		if wg.Series != nil {
			g.Series = make([]load.Second, 0, len(wg.Series))
		}
		for _, ws := range wg.Series {
			s := load.Second{T: ws.T, Requests: ws.Requests, Errors: ws.Errors, P50Ms: float64(ws.P50Ms), P99Ms: float64(ws.P99Ms)}
			if s.Latency, err = decodeHist(budget, ws.Latency); err != nil {
				return nil, fmt.Errorf("group %s, second %d: histogram: %w", wg.Name, ws.T, err)
			}
			g.Series = append(g.Series, s)
		}
		r.Groups = append(r.Groups, g)
	}
	return r, nil
}

// decodeMessage parses one protocol line strictly.
func decodeMessage(line []byte) (message, error) {
	var m message
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&m); err != nil {
		return message{}, fmt.Errorf("not a protocol message (%v): %.120q", err, line)
	}
	if d.More() {
		return message{}, fmt.Errorf("more than one JSON value on one line: %.120q", line)
	}
	return m, nil
}

// decodeJob parses and checks a line sent to an agent: a ping, or a job
// whose plan is valid. Hostile input is an error, never a panic
// (FuzzDecodeJob).
func decodeJob(line []byte) (message, load.Plan, error) {
	m, err := decodeMessage(line)
	if err != nil {
		return m, load.Plan{}, err
	}
	switch m.Type {
	case msgPing:
		return m, load.Plan{}, nil
	case msgJob:
	default:
		return m, load.Plan{}, fmt.Errorf("unexpected message type %q: an agent takes %q and %q", m.Type, msgPing, msgJob)
	}
	if m.Job == nil {
		return m, load.Plan{}, fmt.Errorf("job message without a job")
	}
	p := load.Plan{Target: m.Job.Target, Seed: m.Job.Seed, Groups: m.Job.Groups}
	if err := p.Validate(); err != nil {
		return m, load.Plan{}, fmt.Errorf("job: %w", err)
	}
	return m, p, nil
}

func encodeLine(m message) ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
