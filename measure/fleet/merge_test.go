package fleet

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/threadlab/threadlab/measure/load"
)

// Geometry of load's histograms (measure/load/record.go).
func groupHist() *hdrhistogram.Histogram  { return hdrhistogram.New(1, 60_000_000, 3) }
func secondHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 60_000_000, 2) }

// sample is one request: latency in µs, completion second, failed or not.
type sample struct {
	us  int64
	sec int
	err bool
}

// fakePart is one generator's result built from samples, as load's
// recorder would build it.
func fakePart(start time.Time, samples []sample, wall time.Duration) *load.Result {
	g := load.GroupResult{Name: "g", Model: load.Closed, Latency: groupHist(), Wall: wall,
		ErrorsByClass: map[string]int64{"http_5xx": 0, "timeout": 0}, Headers: map[string]int64{}}
	secs := map[int]*load.Second{}
	last := 0
	for _, s := range samples {
		g.Latency.RecordValue(s.us)
		g.Requests++
		sec := secs[s.sec]
		if sec == nil {
			sec = &load.Second{T: s.sec, Latency: secondHist()}
			secs[s.sec] = sec
		}
		sec.Latency.RecordValue(s.us)
		sec.Requests++
		if s.err {
			g.Errors++
			g.ErrorsByClass["http_5xx"]++
			sec.Errors++
		} else {
			g.OK++
		}
		g.Headers[fmt.Sprintf("thread-%d", s.us%3)]++
		last = max(last, s.sec)
	}
	for t := 0; t <= last; t++ {
		if s := secs[t]; s != nil {
			s.P50Ms = float64(s.Latency.ValueAtQuantile(50)) / 1000
			g.Series = append(g.Series, *s)
		} else {
			g.Series = append(g.Series, load.Second{T: t})
		}
	}
	g.RPS = float64(g.Requests) / wall.Seconds()
	return &load.Result{Start: start, Wall: wall, Groups: []load.GroupResult{g},
		Self: load.SelfCheck{CPUSeconds: 0.5, CPUPct: 25, Cores: 2, Sockets: 8}}
}

// The merged record is the record of all requests: the sum of the parts'
// histograms equals one histogram fed every value, and the counts are sums.
func TestMergeEqualsOneRecorder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var all []sample
	var parts []*load.Result
	for gen := range 3 {
		var mine []sample
		for range 5000 + 1000*gen {
			// Log-uniform over 100 µs .. 10 s, so every bucket range is hit.
			us := int64(100 * float64(uint64(1)<<uint(rng.IntN(17))) * (1 + rng.Float64()))
			mine = append(mine, sample{us: us, sec: rng.IntN(4), err: rng.IntN(10) == 0})
		}
		all = append(all, mine...)
		parts = append(parts, fakePart(start.Add(time.Duration(gen)*time.Millisecond), mine, time.Duration(3+gen)*time.Second))
	}
	whole := fakePart(start, all, 5*time.Second)

	m, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	got, want := m.Groups[0], whole.Groups[0]
	if !got.Latency.Equals(want.Latency) {
		t.Errorf("merged histogram differs from one histogram of all values: p50 %d vs %d, p99 %d vs %d, count %d vs %d",
			got.Latency.ValueAtQuantile(50), want.Latency.ValueAtQuantile(50),
			got.Latency.ValueAtQuantile(99), want.Latency.ValueAtQuantile(99), got.Latency.TotalCount(), want.Latency.TotalCount())
	}
	var sum int64
	for _, p := range parts {
		sum += p.Groups[0].Requests
	}
	if got.Requests != sum || got.Requests != int64(len(all)) || got.Errors != want.Errors || got.OK != want.OK {
		t.Errorf("merged requests %d errors %d ok %d, want the sum %d (= %d values), errors %d, ok %d",
			got.Requests, got.Errors, got.OK, sum, len(all), want.Errors, want.OK)
	}
	if got.ErrorsByClass["http_5xx"] != want.Errors || got.ErrorsByClass["timeout"] != 0 || len(got.ErrorsByClass) != 2 {
		t.Errorf("merged error classes %v, want http_5xx %d and timeout 0", got.ErrorsByClass, want.Errors)
	}
	for k, v := range want.Headers {
		if got.Headers[k] != v {
			t.Errorf("header value %s: merged count %d, want %d", k, got.Headers[k], v)
		}
	}
	if got.Wall != 5*time.Second || m.Wall != 5*time.Second {
		t.Errorf("merged wall %v (group %v), want the longest part's, 5s", m.Wall, got.Wall)
	}
	if len(got.Series) != len(want.Series) {
		t.Fatalf("merged series has %d seconds, want %d", len(got.Series), len(want.Series))
	}
	for i, s := range got.Series {
		w := want.Series[i]
		if s.T != w.T || s.Requests != w.Requests || s.Errors != w.Errors || !s.Latency.Equals(w.Latency) || s.P50Ms != w.P50Ms {
			t.Errorf("second %d: merged {T %d, %d requests, %d errors, p50 %g} want {T %d, %d, %d, p50 %g} and equal histograms",
				i, s.T, s.Requests, s.Errors, s.P50Ms, w.T, w.Requests, w.Errors, w.P50Ms)
		}
	}
	if !m.Start.Equal(start) {
		t.Errorf("merged start %v, want the earliest, %v", m.Start, start)
	}
	if m.Self.Sockets != 24 || m.Self.Cores != 6 || m.Self.CPUPct != 75 || m.Self.Saturated {
		t.Errorf("merged self-check %+v, want sockets, cores and CPU summed, not saturated", m.Self)
	}
	// The parts are left as they were.
	if parts[0].Groups[0].Latency.TotalCount() != 5000 {
		t.Errorf("Merge changed its input: part 1 now holds %d values", parts[0].Groups[0].Latency.TotalCount())
	}
}

// A generator that started a second later has its seconds moved by one, so
// the merged series counts each second of the run once.
func TestMergeAlignsSeconds(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	a := fakePart(start, []sample{{us: 1000, sec: 0}, {us: 1000, sec: 1}}, 2*time.Second)
	b := fakePart(start.Add(time.Second+3*time.Millisecond), []sample{{us: 2000, sec: 0}, {us: 2000, sec: 1}}, 2*time.Second)
	m, err := Merge([]*load.Result{a, b})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range m.Groups[0].Series {
		got = append(got, fmt.Sprintf("%d:%d", s.T, s.Requests))
	}
	if want := "0:1 1:2 2:1"; strings.Join(got, " ") != want {
		t.Errorf("merged series (T:requests) %s, want %s", strings.Join(got, " "), want)
	}
}

func TestMergeSaturationAndStalls(t *testing.T) {
	start := time.Now()
	a := fakePart(start, []sample{{us: 1000}}, time.Second)
	b := fakePart(start, []sample{{us: 1000}}, time.Second)
	c := fakePart(start, []sample{{us: 1000}}, time.Second)
	b.Self.Saturated, b.Self.Reason = true, "generator used 190% CPU of 2 allowed cores"
	c.Stalled, c.Groups[0].Stalled = "group g: no response for 5s", "no response for 5s"
	m, err := merge([]*load.Result{a, b, c}, []string{"host-a", "host-b", "host-c"})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Self.Saturated || m.Self.Reason != "host-b: generator used 190% CPU of 2 allowed cores" {
		t.Errorf("merged self-check %+v: want saturated because host-b was, and the reason naming it", m.Self)
	}
	if m.Stalled != "host-c: group g: no response for 5s" || m.Groups[0].Stalled != "host-c: no response for 5s" {
		t.Errorf("merged stall %q / group %q, want host-c's, named", m.Stalled, m.Groups[0].Stalled)
	}
}

func TestMergeOpenRates(t *testing.T) {
	start := time.Now()
	a := fakePart(start, []sample{{us: 1000}}, time.Second)
	b := fakePart(start, []sample{{us: 1000}}, time.Second)
	for i, p := range []*load.Result{a, b} {
		g := &p.Groups[0]
		g.Model, g.AskedRate, g.AchievedRate, g.MaxInFlight, g.Missed = load.Open, 100, float64(100-20*i), 50, int64(i)
		g.LatePct = float64(10 * i) // a: 0% of 100 sends, b: 10% of 80
	}
	m, err := Merge([]*load.Result{a, b})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Groups[0]
	if g.AskedRate != 200 || g.AchievedRate != 180 || g.MaxInFlight != 100 || g.Missed != 1 {
		t.Errorf("merged asked %g achieved %g max_in_flight %d missed %d, want the sums 200 180 100 1", g.AskedRate, g.AchievedRate, g.MaxInFlight, g.Missed)
	}
	if want := 8.0 / 180 * 100; g.LatePct < want-1e-9 || g.LatePct > want+1e-9 {
		t.Errorf("merged late %g%%, want %g%% (8 late sends of 180)", g.LatePct, want)
	}
}

func TestMergeRefuses(t *testing.T) {
	start := time.Now()
	part := func() *load.Result { return fakePart(start, []sample{{us: 1000}}, time.Second) }
	other := part()
	other.Groups[0].Name = "h"
	extra := part()
	extra.Groups = append(extra.Groups, extra.Groups[0])
	coarse := part()
	coarse.Groups[0].Latency = hdrhistogram.New(1, 1000, 1)
	for _, tc := range []struct {
		why   string
		parts []*load.Result
		err   string
	}{
		{"nothing to merge", nil, "no generator results"},
		{"a missing result", []*load.Result{part(), nil}, "generator 2 has no result"},
		{"a different group", []*load.Result{part(), other}, "g (closed) at generator 1 but h (closed) at generator 2"},
		{"a different number of groups", []*load.Result{part(), extra}, "generator 2 measured 2 groups"},
		{"histograms of another geometry would lose values", []*load.Result{part(), coarse}, "different geometry"},
	} {
		if _, err := Merge(tc.parts); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want one containing %q", tc.why, err, tc.err)
		}
	}
}

func BenchmarkMerge(b *testing.B) {
	// Four generators, a 60-second trial each: the per-second histograms
	// dominate.
	rng := rand.New(rand.NewPCG(3, 4))
	var parts []*load.Result
	for range 4 {
		var s []sample
		for range 60_000 {
			s = append(s, sample{us: 1000 + rng.Int64N(200_000), sec: rng.IntN(60)})
		}
		parts = append(parts, fakePart(time.Now(), s, time.Minute))
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Merge(parts); err != nil {
			b.Fatal(err)
		}
	}
}
