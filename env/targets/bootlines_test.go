package targets

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	bootMu    sync.Mutex
	bootBuilt = map[string]map[string]string{}
)

// jarsOn builds (or reuses, by stamp) the targets on one Spring Boot
// version, once per test binary; the default comes from jars.
func jarsOn(t *testing.T, version string) (string, map[string]string) {
	t.Helper()
	home, def := jars(t)
	if version == DefaultBoot {
		return home, def
	}
	bootMu.Lock()
	defer bootMu.Unlock()
	if j, ok := bootBuilt[version]; ok {
		return home, j
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var log bytes.Buffer
	began := time.Now()
	j, err := BuildBoot(ctx, ".", version, &log)
	if err != nil {
		t.Fatalf("build on Spring Boot %s: %v\n%s", version, err, log.String())
	}
	t.Logf("Spring Boot %s: jars ready in %s (a Maven build only when their stamp is stale)", version, time.Since(began).Round(time.Millisecond))
	bootBuilt[version] = j
	return home, j
}

// TestBootLines is the acceptance smoke of every supported Spring Boot
// line: both targets build on it, ship that spring-boot, and answer /io,
// /cpu and /movies on the kind of thread each model promises (platform:
// Tomcat's pool; virtual: virtual-N; webflux: the event loop), with
// movies.json's bytes, and serve the Prometheus names the pipeline reads. On WebFlux the same requests also go over one
// keep-alive connection, which Reactor Netty 1.3.6 stalled
// (reactor/reactor-netty#4361): each line's Reactor Netty must not.
func TestBootLines(t *testing.T) {
	t.Parallel() // JVM starts are mostly one thread: two at once use both cores (issue 24: CI time)
	if testing.Short() {
		t.Skip("builds and starts JVMs; skipped with -short")
	}
	allen := moviesBy(t, "Allen")
	models := []struct {
		name, jar string
		props     map[string]string
		thread    *regexp.Regexp
	}{
		// 100 orders, not 100,000: seeding is most of a cold mvc start, and
		// no request here reads an order.
		{"platform", "spring-mvc", map[string]string{"spring.threads.virtual.enabled": "false", "threadlab.orders": "100"}, tomcatThread},
		{"virtual", "spring-mvc", map[string]string{"spring.threads.virtual.enabled": "true", "threadlab.orders": "100"}, virtualThread},
		{"webflux", "spring-webflux", map[string]string{}, eventLoop},
	}
	for _, b := range BootLines() {
		t.Run(b.Line, func(t *testing.T) {
			home, built := jarsOn(t, b.Version)
			for _, name := range Names() {
				if v, err := Versions(built[name]); err != nil || v["spring-boot"] != b.Version {
					t.Fatalf("%s on the %s line ships spring-boot %q (%v), want %s", name, b.Line, v["spring-boot"], err, b.Version)
				}
			}
			for _, m := range models {
				t.Run(m.name, func(t *testing.T) {
					tg := start(t, home, built[m.jar], m.props)
					defer tg.stop()
					for _, c := range []struct{ path, body string }{
						{"/io?ms=20", "io:20"},
						{"/cpu?iterations=200", shaChain(200)},
						{"/movies?directorLastName=Allen&delayInMillis=0", allen},
					} {
						r := tg.get(t, c.path)
						if r.status != http.StatusOK || r.body != c.body {
							t.Errorf("%s: status %d, body %q; want 200 and %q", c.path, r.status, r.body, c.body)
						}
						if !m.thread.MatchString(r.thread) {
							t.Errorf("%s: X-Thread %q, want %s (%s model)", c.path, r.thread, m.thread, m.name)
						}
					}
					// The pipeline's telemetry: the same Prometheus names on every line
					// (GC pause timers appear only after a first collection, so not those).
					if r := tg.get(t, MetricsPath); r.status != http.StatusOK || !strings.Contains(r.body, "jvm_threads_live_threads") ||
						!strings.Contains(r.body, "jvm_memory_used_bytes") {
						t.Errorf("%s: status %d, or no jvm_threads_live_threads / jvm_memory_used_bytes in it", MetricsPath, r.status)
					}
					if m.jar == "spring-webflux" {
						keepAlive(t, tg, 30)
					}
				})
			}
		})
	}
}

// keepAlive sends n requests in a row over one kept-alive connection, each
// answered on the event loop, within a deadline: a stalled connection
// fails here instead of hanging an experiment.
func keepAlive(t *testing.T, tg *target, n int) {
	t.Helper()
	tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	conns := map[string]bool{}
	for i := range n {
		path := fmt.Sprintf("/cpu?iterations=%d", 1+i%3)
		res, err := c.Get(tg.base + path)
		if err != nil {
			t.Fatalf("keep-alive request %d of %d (%s): %v; a stalled keep-alive connection (reactor/reactor-netty#4361)?", i+1, n, path, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || string(body) != shaChain(1+i%3) {
			t.Fatalf("keep-alive request %d: status %d body %q", i+1, res.StatusCode, body)
		}
		if res.Close || strings.EqualFold(res.Header.Get("Connection"), "close") {
			t.Fatalf("keep-alive request %d: the server closed the connection; the check needs one kept-alive connection", i+1)
		}
		conns[res.Header.Get(ThreadHeader)] = true
	}
	if len(conns) != 1 {
		t.Errorf("%d requests on one connection ran on event loops %v; one connection stays on one event loop", n, conns)
	}
}
