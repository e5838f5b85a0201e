package steady

import (
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
		d := 10 * time.Millisecond
		if i <= warm || (slowAfter > 0 && i > slowAfter) {
			d = 80 * time.Millisecond
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
		x[i] = median(lat)
	}
	return x
}

// TestServerPhases classifies the iteration sequences of a real server that
// needs M requests to warm up, or slows down after N: the delays differ by
// 8x so that a loaded machine's scheduling noise cannot blur them.
func TestServerPhases(t *testing.T) {
	if testing.Short() {
		t.Skip("sends ~600 requests to a local server")
	}
	tests := []struct {
		name            string
		warm, slowAfter int64
		class           Class
		lo, hi          int // where steady state may start
	}{
		{"steady server", 0, 0, Flat, 0, 0},
		{"needs 40 requests to warm up", 40, 0, Warmup, 7, 9},       // 5 requests per iteration: index 8 is the first fast one
		{"slows down after 125 requests", 0, 125, Slowdown, 24, 26}, // index 25 is the first slow one
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := server(t, tt.warm, tt.slowAfter)
			x := iterations(t, srv.URL, 40, 5)
			res := Classify(x, Options{})
			if res.Class != tt.class || res.SteadyFrom < tt.lo || res.SteadyFrom > tt.hi {
				t.Errorf("class %q steady from %d, want %q from [%d,%d]; series %.0f", res.Class, res.SteadyFrom, tt.class, tt.lo, tt.hi, x)
			}
		})
	}
}
