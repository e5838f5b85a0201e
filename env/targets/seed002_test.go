package targets

// Seed 002's four approaches on the two jars: each answers /epoch-millis and
// /movies at call depths 0-2 on the thread kind its name promises, and the
// movies body is the same JSON everywhere (compared with movies.json read
// here in Go). Skipped with -short, like every test that starts a JVM.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadlab/threadlab/measure/load"
)

// approach is one of seed 002's four, as the variant properties that make it.
type approach struct {
	name   string
	jar    string
	props  map[string]string
	thread *regexp.Regexp // the kind of thread its handlers run on
}

// Approaches mirrors the variants of experiments/connection-burst.yaml.
var approaches = []approach{
	{"platform-tomcat", "spring-mvc", map[string]string{"spring.threads.virtual.enabled": "false"}, tomcatThread},
	{"loom-tomcat", "spring-mvc", map[string]string{"spring.threads.virtual.enabled": "true"}, virtualThread},
	{"webflux-netty", "spring-webflux", map[string]string{}, eventLoop},
	{"loom-netty", "spring-webflux", map[string]string{
		"spring.threads.virtual.enabled": "true", "threadlab.webflux.blocking-handlers": "true"}, virtualThread},
}

// movie has the components of the Java record Movie in the same order, so
// json.Marshal writes the bytes Jackson writes.
type movie struct {
	ID             int64    `json:"id"`
	Title          string   `json:"title"`
	ReleaseDate    string   `json:"releaseDate"`
	Director       person   `json:"director"`
	Genres         []string `json:"genres"`
	RuntimeMinutes int      `json:"runtimeMinutes"`
	Cast           []person `json:"cast"`
}

type person struct {
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
}

// moviesBy is the compact JSON of movies.json's movies by one director.
func moviesBy(t *testing.T, lastName string) string {
	t.Helper()
	data, err := os.ReadFile("movies/src/movies.json")
	if err != nil {
		t.Fatal(err)
	}
	var all []movie
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatalf("movies/src/movies.json: %v", err)
	}
	found := []movie{}
	for _, m := range all {
		if m.Director.LastName == lastName {
			found = append(found, m)
		}
	}
	out, err := json.Marshal(found)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestSeed002Approaches(t *testing.T) {
	t.Parallel() // JVM starts, beside the other JVM tests
	javaHome, jars := jars(t)
	allen := moviesBy(t, "Allen")
	if n := len(allen); n < 1400 || n > 1900 {
		t.Errorf("Allen's movies are %d bytes of JSON; seed 002's get-movies body is ~1.6 KB", n)
	}
	bodies := map[string]string{}
	for _, a := range approaches {
		t.Run(a.name, func(t *testing.T) {
			// A request without delayCallDepth takes threadlab.default-call-depth.
			props := map[string]string{"threadlab.orders": "100", "threadlab.default-call-depth": "1"}
			for k, v := range a.props {
				props[k] = v
			}
			tg := start(t, javaHome, jars[a.jar], props)
			defer tg.stop()
			// First, on the fresh JVM: the in-flight gauge (virtual_test.go),
			// which had a JVM of its own per approach.
			t.Run("virtual inflight gauge", func(t *testing.T) { checkInflightGauge(t, tg, a) })
			for depth := range 3 {
				d := strconv.Itoa(depth)
				r := tg.get(t, "/epoch-millis?delayInMillis=60&delayCallDepth="+d)
				checkAnswer(t, a, r, "epoch-millis depth "+d, 60*time.Millisecond)
				if _, err := strconv.ParseInt(r.body, 10, 64); err != nil {
					t.Errorf("epoch-millis depth %s: body %q is not a number", d, r.body)
				}
				r = tg.get(t, "/movies?directorLastName=Allen&delayInMillis=60&delayCallDepth="+d)
				checkAnswer(t, a, r, "movies depth "+d, 60*time.Millisecond)
				if r.body != allen {
					t.Errorf("movies depth %s: body\n%s\nwant movies.json's Allen movies\n%s", d, r.body, allen)
				}
				bodies[a.name] = r.body
			}
			before := selfCalls(t, tg)
			if r := tg.get(t, "/movies?directorLastName=Allen&delayInMillis=0"); r.status != 200 || r.body != allen {
				t.Errorf("movies without delayCallDepth: status %d body %q", r.status, r.body)
			}
			waitSelfCalls(t, tg, before+1, "threadlab.default-call-depth=1: one self-call for a request without delayCallDepth")
			seed002Rows(t, tg, a)
			postThroughGenerator(t, tg, allen)
		})
	}
	// The same JSON on all four (each was also checked against movies.json).
	for name, b := range bodies {
		if b != bodies[approaches[0].name] {
			t.Errorf("%s's movies JSON differs from %s's", name, approaches[0].name)
		}
	}
}

// checkAnswer: a 200 from the approach's kind of thread, after the delay.
func checkAnswer(t *testing.T, a approach, r reply, what string, delay time.Duration) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("%s: status %d, body %q", what, r.status, r.body)
	}
	if !a.thread.MatchString(r.thread) {
		t.Errorf("%s: X-Thread %q, want %v for %s", what, r.thread, a.thread, a.name)
	}
	if r.elapsed < delay {
		t.Errorf("%s: answered in %v, before the %v delay", what, r.elapsed, delay)
	}
}

// seed002Rows: defaults, bad input, unknown director, and the POST.
func seed002Rows(t *testing.T, tg *target, a approach) {
	rows := []struct {
		path   string
		status int
		body   string
		why    string
	}{
		{"/movies?directorLastName=Nobody&delayInMillis=0", 200, "[]", "an unknown director has no movies"},
		{"/movies?delayInMillis=0", 400, "", "the director is required"},
		{"/epoch-millis?delayCallDepth=-1", 400, "", "a negative depth is a 400"},
		{"/epoch-millis?delayCallDepth=17", 400, "", "depth is capped at 16"},
		{"/movies?directorLastName=Allen&delayInMillis=-5", 400, "", "a negative delay is a 400"},
	}
	for _, row := range rows {
		r := tg.get(t, row.path)
		if r.status != row.status {
			t.Errorf("%s: status %d, want %d (%s); body %q", row.path, r.status, row.status, row.why, r.body)
		}
		if row.body != "" && r.body != row.body {
			t.Errorf("%s: body %q, want %q (%s)", row.path, r.body, row.body, row.why)
		}
	}
	// The default delay is seed 002's 100 ms.
	if r := tg.get(t, "/epoch-millis"); r.status != 200 || r.elapsed < 100*time.Millisecond {
		t.Errorf("/epoch-millis with defaults: status %d in %v, want 200 after 100ms", r.status, r.elapsed)
	}
	// Concurrent requests: every one on the approach's kind of thread (for
	// loom-netty: never an event loop), the depth-1 self-calls included.
	var wg sync.WaitGroup
	threads := make(chan string, 40)
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := client.Get(tg.base + "/movies?directorLastName=Kubrick&delayInMillis=200&delayCallDepth=1")
			if err != nil {
				threads <- "error: " + err.Error()
				return
			}
			res.Body.Close()
			threads <- res.Header.Get(ThreadHeader)
		}()
	}
	wg.Wait()
	close(threads)
	for th := range threads {
		if !a.thread.MatchString(th) {
			t.Errorf("concurrent /movies: X-Thread %q, want %v", th, a.thread)
			break
		}
	}
}

// postThroughGenerator sends get-post's save through the load generator:
// the manifest's method, headers and body must reach the target intact (the
// read-only save answers the movies it was given).
func postThroughGenerator(t *testing.T, tg *target, movies string) {
	t.Helper()
	res, err := load.Run(context.Background(), load.Plan{Target: tg.base, Seed: 1, Groups: []load.Group{{
		Model: load.Burst, Burst: 8, CountHeader: ThreadHeader, Timeout: 30 * time.Second,
		Requests: []load.Request{{Method: "POST", Path: "/movies?delayInMillis=10",
			Headers: map[string]string{"Content-Type": "application/json"}, Body: movies}},
	}}})
	if err != nil {
		t.Fatalf("load.Run POST /movies: %v", err)
	}
	g := res.Groups[0]
	if g.Requests != 8 || g.Errors != 0 {
		t.Errorf("POST /movies through the generator: requests=%d errors=%v, want 8 answered", g.Requests, g.ErrorsByClass)
	}
	req, _ := http.NewRequest("POST", tg.base+"/movies?delayInMillis=0", bytes.NewReader([]byte(movies)))
	req.Header.Set("Content-Type", "application/json")
	r, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != 200 || string(body) != movies {
		t.Errorf("POST /movies: status %d body %q, want 200 echoing the saved movies", r.StatusCode, body)
	}
}

// TestWebfluxBlockingExecution: a plain (non-Publisher) handler on the
// WebFlux target blocks the event loop only while virtual threads are off;
// with spring.threads.virtual.enabled it runs on a virtual thread, while the
// reactive endpoints stay on the event loop.
func TestWebfluxBlockingExecution(t *testing.T) {
	t.Parallel() // JVM starts, beside the other JVM tests
	javaHome, jars := jars(t)
	rows := []struct {
		virtual string
		path    string
		thread  *regexp.Regexp
		why     string
	}{
		{"false", "/io-blocking?ms=50", eventLoop, "virtual threads off: Thread.sleep on the event loop (seed 003)"},
		{"true", "/io-blocking?ms=50", virtualThread, "virtual threads on: Spring invokes the blocking method on a virtual thread"},
		{"true", "/io?ms=50", eventLoop, "a Mono-returning handler is not moved"},
		{"true", "/movies?directorLastName=Allen&delayInMillis=50", eventLoop, "reactive /movies unless blocking-handlers=true"},
	}
	byVirtual := map[string]*target{}
	for _, row := range rows {
		tg := byVirtual[row.virtual]
		if tg == nil {
			for _, other := range byVirtual {
				other.stop() // one JVM at a time on a small machine
			}
			tg = start(t, javaHome, jars["spring-webflux"], map[string]string{"spring.threads.virtual.enabled": row.virtual})
			byVirtual[row.virtual] = tg
		}
		r := tg.get(t, row.path)
		if r.status != 200 || !row.thread.MatchString(r.thread) {
			t.Errorf("virtual=%s %s: status %d X-Thread %q, want 200 on %v (%s)", row.virtual, row.path, r.status, r.thread, row.thread, row.why)
		}
	}
}

// selfCalls is how many /epoch-millis requests the target has answered
// (http_server_requests_seconds_count, every status and method).
func selfCalls(t *testing.T, tg *target) float64 {
	t.Helper()
	r := tg.get(t, MetricsPath)
	total := 0.0
	for _, line := range strings.Split(r.body, "\n") {
		if !strings.HasPrefix(line, "http_server_requests_seconds_count{") || !strings.Contains(line, `uri="/epoch-millis"`) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		total += v
	}
	return total
}

// waitSelfCalls waits (up to 5 s: the count is recorded as the exchange
// completes) until the target has answered want /epoch-millis requests.
func waitSelfCalls(t *testing.T, tg *target, want float64, why string) {
	t.Helper()
	got := 0.0
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got = selfCalls(t, tg); got >= want {
			break
		}
	}
	if got != want {
		t.Errorf("/epoch-millis answered %v times, want %v (%s)", got, want, why)
	}
}
