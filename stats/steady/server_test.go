package steady

import (
	"github.com/threadlab/threadlab/stats"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// server answers after a delay that depends on how many requests it has
// served: slow for the first warm requests (a JIT warming up), then fast,
// then slow again after slowAfter requests (a leak, a growing heap). Zero
// disables either phase.
func server(t *testing.T, warm, slowAfter int64) *httptest.Server {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		d := 20 * time.Millisecond
		if i <= warm || (slowAfter > 0 && i > slowAfter) {
			d = 120 * time.Millisecond
		}
		time.Sleep(d)
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// iterations sends `iters` iterations of `per` sequential requests each to
// a real HTTP server and returns each iteration's median latency in ms, as
// a fork's iteration sequence. The median, not the total: on a loaded
// 2-core box a neighbour's time slice can delay one or two requests of an
// iteration, and that is the host's noise, not the server's phase.
func iterations(t *testing.T, url string, iters, per int) []float64 {
	c := &http.Client{Timeout: 10 * time.Second}
	x := make([]float64, iters)
	for i := range x {
		lat := make([]float64, per)
		for j := range per {
			start := time.Now()
			res, err := c.Get(url)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			lat[j] = float64(time.Since(start)) / float64(time.Millisecond)
		}
		x[i] = stats.Median(lat)
	}
	return x
}

// TestServerPhases classifies the iteration sequences of a real server that
// needs M requests to warm up, or slows down after N. On this shared 2-core
// box (load average 20+), neighbours' time slices moved the median of a
// 10 ms request to 20 ms for several iterations at a time: a real change
// of level, which the default 5% tolerance rightly reports. The server's
// phases therefore differ 6x and the test asks for levels 2.5x apart
// (Tolerance 0.6), which host noise has not reached.
func TestServerPhases(t *testing.T) {
	if testing.Short() {
		t.Skip("sends ~360 requests to a local server, ~12 s")
	}
	tests := []struct {
		name            string
		warm, slowAfter int64
		class           Class
		lo, hi          int // where steady state may start
	}{
		{"steady server", 0, 0, Flat, 0, 0},
		{"needs 24 requests to warm up", 24, 0, Warmup, 5, 7},     // 4 requests per iteration: index 6 is the first fast one
		{"slows down after 80 requests", 0, 80, Slowdown, 19, 21}, // index 20 is the first slow one
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := server(t, tt.warm, tt.slowAfter)
			x := iterations(t, srv.URL, 30, 4)
			res := Classify(x, Options{Tolerance: 0.6})
			if res.Class != tt.class || res.SteadyFrom < tt.lo || res.SteadyFrom > tt.hi {
				t.Errorf("class %q steady from %d, want %q from [%d,%d]; series %.0f", res.Class, res.SteadyFrom, tt.class, tt.lo, tt.hi, x)
			}
		})
	}
}
