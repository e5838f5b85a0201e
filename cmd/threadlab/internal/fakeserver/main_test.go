package main

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		args    []string
		wantErr string
		why     string
	}{
		{[]string{"--port", "8080"}, "", "the port alone is enough: scale 1, no noise"},
		{[]string{"--port", "8080", "--scale", "2", "--noise", "0.5"}, "", "the acceptance tests' slow and noisy variants"},
		{nil, "--port 0", "without a port threadlab's {port} was not passed"},
		{[]string{"--port", "8080", "--scale", "0"}, "--scale 0", "a zero scale would answer instantly and hide every effect"},
		{[]string{"--port", "8080", "--noise", "-1"}, "--noise -1", "a negative spread is meaningless"},
	}
	for _, c := range cases {
		_, err := parse(c.args, io.Discard)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%v (%s): %v", c.args, c.why, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%v (%s): error %v, want one mentioning %q", c.args, c.why, err, c.wantErr)
		}
	}
}

// TestFactor checks the per-start factor: 1 without noise, reproducible
// with a seed, and spread like exp(noise·Z) across starts.
func TestFactor(t *testing.T) {
	if f := factor(0, 0); f != 1 {
		t.Errorf("no noise: factor %g, want 1", f)
	}
	if a, b := factor(0.5, 7), factor(0.5, 7); a != b {
		t.Errorf("same seed, different factors %g and %g", a, b)
	}
	// Across 2000 starts the log factor has mean ~0 and standard deviation
	// ~noise: with n = 2000 the standard error of the mean is 0.5/sqrt(2000)
	// = 0.011 and of the deviation about 0.5/sqrt(4000) = 0.008, so the
	// bounds below are over 5 standard errors wide.
	const n, noise = 2000, 0.5
	var sum, sq float64
	for i := 0; i < n; i++ {
		l := math.Log(factor(noise, 0))
		sum += l
		sq += l * l
	}
	mean := sum / n
	sd := math.Sqrt(sq/n - mean*mean)
	if math.Abs(mean) > 0.06 || math.Abs(sd-noise) > 0.05 {
		t.Errorf("log factor mean %.3f sd %.3f over %d starts, want ~0 and ~%g", mean, sd, n, noise)
	}
}

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(handler(2))
	defer srv.Close()
	cases := []struct {
		path   string
		status int
		served float64 // X-Service-Ms, -1 when not set
		why    string
	}{
		{"/health", 200, -1, "the readiness path answers at once"},
		{"/io?ms=5", 200, 10, "5 ms scaled by 2"},
		{"/io?ms=x", 400, -1, "a bad ms says how to write it"},
		{"/io", 400, -1, "ms is required"},
	}
	for _, c := range cases {
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s (%s): status %d, want %d", c.path, c.why, resp.StatusCode, c.status)
		}
		if c.served >= 0 {
			got, _ := strconv.ParseFloat(resp.Header.Get("X-Service-Ms"), 64)
			if got != c.served {
				t.Errorf("%s (%s): served %g ms, want %g", c.path, c.why, got, c.served)
			}
		}
	}
}
