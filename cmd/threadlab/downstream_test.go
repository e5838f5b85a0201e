package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/env/supervise"
)

// downstreamOutput is a writer the test can read while runDownstream, in
// another goroutine, is still writing to it.
type downstreamOutput = supervise.Buffer

var downstreamURL = regexp.MustCompile(`http://127\.0\.0\.1:(\d+)`)

// TestDownstreamServesUntilCancelled runs the subcommand in-process the way
// Ctrl-C ends it, and checks the whole output with the free port masked.
func TestDownstreamServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout, stderr downstreamOutput
	errc := make(chan error, 1)
	go func() { errc <- runDownstream(ctx, []string{"--port", "0", "--delay", "20ms"}, &stdout, &stderr) }()

	var url string
	deadline := time.Now().Add(5 * time.Second)
	for url == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no URL printed within 5s; stdout %q stderr %q", stdout.String(), stderr.String())
		}
		url = downstreamURL.FindString(stdout.String())
		time.Sleep(5 * time.Millisecond)
	}
	t0 := time.Now()
	resp, err := http.Get(url + "/enrich/42")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// 42 * 2654435761 = 111486301962, mod 1000 = 962
	if want := `{"customerId":42,"tier":"gold","score":962}`; string(body) != want || time.Since(t0) < 20*time.Millisecond {
		t.Errorf("GET /enrich/42 = %s after %v, want %s after at least the 20ms delay", body, time.Since(t0), want)
	}
	http.DefaultClient.CloseIdleConnections()

	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("runDownstream after cancel = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("runDownstream did not return within 5s of cancel")
	}
	got := downstreamURL.ReplaceAllString(stdout.String(), "http://127.0.0.1:PORT")
	want := "downstream: serving http://127.0.0.1:PORT (GET /enrich/{id} after 20ms, GET /health); Ctrl-C stops\n" +
		"downstream: stopped after 1 requests (1 enriched) on 1 connections, at most 1 waiting at once, 0 accept errors\n"
	if got != want || stderr.String() != "" {
		t.Errorf("stdout:\n%s\nwant:\n%s\nstderr: %q (want empty)", got, want, stderr.String())
	}
	if c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://")); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after cancel", url)
	}
}

func TestDownstreamFlagErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).AddrPort().Port()
	tests := []struct {
		args   []string
		code   int
		stderr string
		reason string
	}{
		{[]string{"--delay", "soon"}, 2, `invalid value "soon" for flag -delay`, "a delay must parse as a Go duration"},
		{[]string{"--delay", "-1s"}, 2, "--delay -1s is negative: use 0 or a positive duration", "a negative delay is a mistake"},
		{[]string{"--port", "70000"}, 2, "--port 70000 is not a TCP port: use 1..65535, or 0", "ports are 16-bit"},
		{[]string{"extra"}, 2, `unexpected argument "extra": the service takes only --address, --port and --delay`, "positional arguments are not silently ignored"},
		{[]string{"--listen", "x"}, 2, "flag provided but not defined: -listen", "unknown flags are usage errors"},
		{[]string{"--port", strconv.Itoa(int(busyPort))}, 1, "(choose a free port, or port 0 for any free one)", "a taken port is a run failure with a fix"},
		{[]string{"-h"}, 0, "usage: threadlab downstream [--address 127.0.0.1] [--port P] [--delay 100ms]", "help succeeds and shows the flags"},
		{[]string{"--address", "0.0.0.0"}, 2, `--address "0.0.0.0": give one IP address of this host`, "a helper never listens on every interface"},
		{[]string{"--address", "localhost"}, 2, `--address "localhost": give one IP address`, "a name could resolve to another interface"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		// No row serves; the timeout only bounds a regression that would.
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		code := run(ctx, append([]string{"downstream"}, tt.args...), &stdout, &stderr)
		cancel()
		if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("threadlab downstream %v: exit %d, stderr %q; want exit %d and %q (%s)",
				tt.args, code, stderr.String(), tt.code, tt.stderr, tt.reason)
		}
	}
}
