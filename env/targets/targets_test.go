package targets

// Integration tests: build the jars (cached by source hash), start each
// target on a free loopback port with the JDK FindJDK picks, and check what
// every endpoint must do. Skipped with -short; they fail (not skip) when no
// JDK or Maven is installed, because then the targets are not tested at all.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/threadlab/threadlab/internal/testenv"

	"github.com/threadlab/threadlab/env/downstream"
	"github.com/threadlab/threadlab/env/postgres"
)

var (
	buildOnce sync.Once
	builtJars map[string]string
	buildErr  error
	buildLog  bytes.Buffer
)

// jars builds the targets once per test binary.
func jars(t *testing.T) (javaHome string, jars map[string]string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts JVMs; skipped with -short")
	}
	home, major, err := FindJDK()
	if err != nil {
		t.Fatal(err)
	}
	buildOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
		defer cancel()
		start := time.Now()
		builtJars, buildErr = Build(ctx, ".", &buildLog)
		fmt.Fprintf(&buildLog, "Build took %s\n", time.Since(start).Round(time.Millisecond))
	})
	if buildErr != nil {
		t.Fatalf("%v\n%s", buildErr, buildLog.String())
	}
	t.Logf("JDK %d at %s; %s", major, home, strings.TrimSpace(buildLog.String()))
	return home, builtJars
}

// target is one running JVM.
type target struct {
	base string
	log  string
	stop func() // kills the process group and waits; idempotent, also run at cleanup
}

// start runs a jar on a free loopback port, waits for ReadyPath, and kills
// the JVM's whole process group when the test ends.
func start(t *testing.T, javaHome, jar string, props map[string]string) *target {
	t.Helper()
	port := freePort(t)
	all := map[string]string{"server.address": "127.0.0.1"}
	for k, v := range props {
		all[k] = v
	}
	argv := Command(javaHome, jar, port, all, []string{"-Xmx512m", "-XX:TieredStopAtLevel=1"})
	logPath := filepath.Join(t.TempDir(), filepath.Base(jar)+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Pdeathsig: a test binary killed by its -timeout or by CI takes its
	// JVMs with it instead of leaving them on the machine (the Cleanup
	// below runs only when the test ends normally).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %q: %v", argv, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-exited
			}
			logFile.Close()
		})
	}
	t.Cleanup(stop)
	tg := &target{base: "http://127.0.0.1:" + strconv.Itoa(port), log: logPath, stop: stop}
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("%s exited before it was ready (%v); log tail:\n%s", filepath.Base(jar), err, tg.logTail())
		default:
		}
		res, err := http.Get(tg.base + ReadyPath)
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready on %s after 90s; log tail:\n%s", filepath.Base(jar), tg.base+ReadyPath, tg.logTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%s %v ready in %s", filepath.Base(jar), props, time.Since(began).Round(time.Millisecond))
	return tg
}

func (tg *target) logTail() string {
	data, _ := os.ReadFile(tg.log)
	return tail(string(data), 40)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// reply is one answered request.
type reply struct {
	status  int
	thread  string
	header  http.Header
	body    string
	elapsed time.Duration
}

var client = &http.Client{Timeout: 30 * time.Second}

func (tg *target) get(t *testing.T, path string) reply {
	t.Helper()
	began := time.Now()
	res, err := client.Get(tg.base + path)
	if err != nil {
		t.Fatalf("GET %s: %v; log tail:\n%s", path, err, tg.logTail())
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", path, err)
	}
	return reply{res.StatusCode, res.Header.Get(ThreadHeader), res.Header, string(body), time.Since(began)}
}

// metric reads one sample of the Prometheus exposition, e.g.
// `hikaricp_connections_active{pool="HikariPool-1"} 1.0`.
func (tg *target) metric(t *testing.T, name string) float64 {
	t.Helper()
	r := tg.get(t, MetricsPath)
	sc := bufio.NewScanner(strings.NewReader(r.body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		return v
	}
	t.Fatalf("no %s in %s (status %d)", name, MetricsPath, r.status)
	return 0
}

// shaChain is seed 000's CPU work computed in Go: the endpoints must return
// exactly this, which proves the work was done.
func shaChain(iterations int) string {
	data := []byte("spring-boot-4.1-virtual-threads-benchmark")
	for range iterations {
		sum := sha256.Sum256(data)
		data = sum[:]
	}
	return hex.EncodeToString(data)
}

// workSum is seed 004's /work result in Go: per item, 16 bytes (item and
// 0x5deece66d as big-endian longs) digested iterations times, the first 8
// bytes read as a signed long, summed with Java's wrap-around.
func workSum(items, iterations int) int64 {
	var sum int64
	for i := range items {
		v := make([]byte, 16)
		binary.BigEndian.PutUint64(v[0:], uint64(int64(i)))
		binary.BigEndian.PutUint64(v[8:], 0x5deece66d)
		for range iterations {
			s := sha256.Sum256(v)
			v = s[:]
		}
		sum += int64(binary.BigEndian.Uint64(v[:8]))
	}
	return sum
}

var (
	tomcatThread    = regexp.MustCompile(`^http-nio-.*\d+-exec-\d+$`)
	virtualThread   = regexp.MustCompile(`^virtual-\d+$`)
	eventLoop       = regexp.MustCompile(`^reactor-http-(nio|epoll)-\d+$`)
	parallelThread  = regexp.MustCompile(`^parallel-\d+$`)
	oversizedThread = regexp.MustCompile(`^oversized-\d+$`)
)

// fakeDownstream stands in for the enrich service. While gate is set, a request
// announces itself on arrived and waits for gate to close, so a test can look
// at the pool exactly while the target waits on the downstream.
type fakeDownstream struct {
	*httptest.Server
	mu      sync.Mutex
	paths   []string
	arrived chan struct{}
	gate    chan struct{}
	delay   time.Duration
}

func newDownstream(t *testing.T) *fakeDownstream {
	d := &fakeDownstream{}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := strings.CutPrefix(r.URL.Path, "/enrich/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		d.mu.Lock()
		d.paths = append(d.paths, r.URL.Path)
		arrived, gate, delay := d.arrived, d.gate, d.delay
		d.mu.Unlock()
		if arrived != nil {
			arrived <- struct{}{}
		}
		if gate != nil {
			select {
			case <-gate:
			case <-time.After(10 * time.Second):
			}
		}
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"customerId":%s,"score":42}`, id)
	}))
	t.Cleanup(d.Close)
	return d
}

// orderSummary is the mvc /order-summary response.
type orderSummary struct {
	OrderID      int64          `json:"orderId"`
	CustomerID   int64          `json:"customerId"`
	CustomerName string         `json:"customerName"`
	Status       string         `json:"status"`
	AmountCents  int64          `json:"amountCents"`
	Held         bool           `json:"held"`
	Enrichment   map[string]any `json:"enrichment"`
}

func TestSpringMVC(t *testing.T) {
	javaHome, jars := jars(t)
	// Pool sizes are passed as plain Spring properties at start, as a manifest
	// does; the metrics prove they took effect.
	variants := []struct {
		name, virtual string
		threadName    *regexp.Regexp
		why           string
		tomcatMax     float64 // tomcat_threads_config_max_threads: -1 when Tomcat runs no pool
	}{
		{"platform", "false", tomcatThread, "Tomcat's fixed exec pool: http-nio-<addr>-<port>-exec-N", 50},
		{"virtual", "true", virtualThread, "one new virtual thread per request, named virtual-<id>", -1},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			down := newDownstream(t)
			orders := 1000
			tg := start(t, javaHome, jars["spring-mvc"], map[string]string{
				"spring.threads.virtual.enabled":             v.virtual,
				"threadlab.downstream-url":                   down.URL,
				"threadlab.orders":                           strconv.Itoa(orders),
				"server.tomcat.threads.max":                  "50",
				"spring.datasource.hikari.maximum-pool-size": "7",
			})

			t.Run("properties passed at start take effect", func(t *testing.T) {
				if got := tg.metric(t, "tomcat_threads_config_max_threads"); got != v.tomcatMax {
					t.Errorf("tomcat_threads_config_max_threads = %v, want %v (server.tomcat.threads.max=50)", got, v.tomcatMax)
				}
				if got := tg.metric(t, "hikaricp_connections_max"); got != 7 {
					t.Errorf("hikaricp_connections_max = %v, want 7 (spring.datasource.hikari.maximum-pool-size=7)", got)
				}
			})

			t.Run("X-Thread names the handling thread", func(t *testing.T) {
				// 16 requests that all sleep at once must be spread over distinct
				// threads of the variant's kind.
				const n = 16
				var wg sync.WaitGroup
				replies := make([]reply, n)
				for i := range n {
					wg.Go(func() { replies[i] = tg.get(t, "/io?ms=200") })
				}
				wg.Wait()
				seen := map[string]bool{}
				for _, r := range replies {
					if r.status != 200 || r.body != "io:200" {
						t.Fatalf("/io?ms=200 = %d %q", r.status, r.body)
					}
					if !v.threadName.MatchString(r.thread) {
						t.Fatalf("X-Thread = %q, want %v (%s)", r.thread, v.threadName, v.why)
					}
					seen[r.thread] = true
				}
				if len(seen) < n/2 {
					t.Fatalf("%d concurrent sleeps ran on only %d threads: %v", n, len(seen), seen)
				}
			})

			rows := []struct {
				path, why string
				status    int
				check     func(t *testing.T, r reply)
			}{
				{"/io?ms=100", "the sleep really happens", 200, func(t *testing.T, r reply) {
					if r.elapsed < 100*time.Millisecond {
						t.Errorf("answered in %s, before the 100 ms sleep", r.elapsed)
					}
				}},
				{"/cpu?iterations=2000", "the body is the SHA-256 chain, so the work was done", 200, func(t *testing.T, r reply) {
					if want := shaChain(2000); r.body != want {
						t.Errorf("body %q, want %q", r.body, want)
					}
				}},
				{"/cpu", "defaults to seed 000's 20000 iterations", 200, func(t *testing.T, r reply) {
					if want := shaChain(20000); r.body != want {
						t.Errorf("body %q, want %q", r.body, want)
					}
				}},
				{"/cpu?iterations=0", "bad input is a 400, not a 500", 400, nil},
				{"/io?ms=-1", "a negative sleep is a 400", 400, nil},
				{"/epoch-millis?delayInMillis=150", "waits, then answers the time after the wait", 200, func(t *testing.T, r reply) {
					ms, err := strconv.ParseInt(r.body, 10, 64)
					if err != nil {
						t.Fatalf("body %q is not epoch millis: %v", r.body, err)
					}
					now := time.Now().UnixMilli()
					if ms > now+1000 || ms < now-int64(r.elapsed/time.Millisecond)-1000 {
						t.Errorf("epoch millis %d is not about now (%d)", ms, now)
					}
					if r.elapsed < 150*time.Millisecond {
						t.Errorf("answered in %s, before the 150 ms delay", r.elapsed)
					}
				}},
				{"/order-summary/12", "order joined to its customer, enriched by the downstream", 200, func(t *testing.T, r reply) {
					var s orderSummary
					if err := json.Unmarshal([]byte(r.body), &s); err != nil {
						t.Fatalf("body %q: %v", r.body, err)
					}
					// order n belongs to customer ((n-1) mod customers)+1; customers = orders/10 = 100
					if s.OrderID != 12 || s.CustomerID != 12 || s.CustomerName != "customer-12" || s.Held || s.AmountCents <= 0 || s.Status == "" {
						t.Errorf("summary %+v", s)
					}
					if s.Enrichment["customerId"] != float64(12) || s.Enrichment["score"] != float64(42) {
						t.Errorf("enrichment %v, want the downstream's answer for customer 12", s.Enrichment)
					}
				}},
				{"/order-summary/1000", "the last seeded order exists and wraps to customer 100", 200, func(t *testing.T, r reply) {
					var s orderSummary
					json.Unmarshal([]byte(r.body), &s)
					if s.CustomerID != 100 {
						t.Errorf("order 1000 customer %d, want 100", s.CustomerID)
					}
				}},
				{"/order-summary/1001", "past the seeded orders is a 404", 404, nil},
				{MetricsPath, "the telemetry stage's metrics are exposed", 200, func(t *testing.T, r reply) {
					for _, m := range []string{"jvm_threads_live_threads", "jvm_gc_", "jvm_memory_used_bytes", "hikaricp_connections_active", "hikaricp_connections_pending", "tomcat_threads_"} {
						if !strings.Contains(r.body, m) {
							t.Errorf("%s has no %s", MetricsPath, m)
						}
					}
				}},
			}
			for _, row := range rows {
				t.Run(row.path, func(t *testing.T) {
					r := tg.get(t, row.path)
					if r.status != row.status {
						t.Fatalf("status %d, want %d (%s); body %q", r.status, row.status, row.why, r.body)
					}
					if !v.threadName.MatchString(r.thread) {
						t.Errorf("X-Thread = %q, want %v", r.thread, v.threadName)
					}
					if row.check != nil {
						row.check(t, r)
					}
				})
			}

			// seed 001: hold=true keeps the JDBC connection checked out for the
			// whole downstream call; hold=false gives it back before the call.
			// The downstream holds the request until the pool has been looked at.
			holds := []struct {
				hold       bool
				wantActive float64
				why        string
			}{
				{true, 1, "one transaction spans the query and the downstream call"},
				{false, 0, "the connection is back in the pool before the downstream call"},
			}
			for _, h := range holds {
				t.Run(fmt.Sprintf("hold=%v", h.hold), func(t *testing.T) {
					arrived, gate := make(chan struct{}, 1), make(chan struct{})
					down.mu.Lock()
					down.arrived, down.gate, down.delay = arrived, gate, 300*time.Millisecond
					down.mu.Unlock()
					defer func() {
						down.mu.Lock()
						down.arrived, down.gate, down.delay = nil, nil, 0
						down.mu.Unlock()
					}()
					usedBefore := tg.metric(t, "hikaricp_connections_usage_seconds_sum")
					done := make(chan reply, 1)
					go func() {
						res, err := client.Get(fmt.Sprintf("%s/order-summary/7?hold=%v", tg.base, h.hold))
						if err != nil {
							done <- reply{status: -1, body: err.Error()}
							return
						}
						b, _ := io.ReadAll(res.Body)
						res.Body.Close()
						done <- reply{status: res.StatusCode, body: string(b)}
					}()
					select {
					case <-arrived:
					case r := <-done:
						t.Fatalf("request ended before reaching the downstream: %d %s", r.status, r.body)
					case <-time.After(15 * time.Second):
						t.Fatal("the downstream was never called")
					}
					// HikariCP recomputes its pool gauges at most once a second
					// (PoolStats), so a scrape sooner could show the pool as it
					// was before the request.
					time.Sleep(1100 * time.Millisecond)
					active := tg.metric(t, "hikaricp_connections_active")
					close(gate)
					r := <-done
					if r.status != 200 || !strings.Contains(r.body, fmt.Sprintf(`"held":%v`, h.hold)) {
						t.Fatalf("/order-summary/7?hold=%v = %d %s", h.hold, r.status, r.body)
					}
					if h.wantActive > 0 && active < h.wantActive || h.wantActive == 0 && active != 0 {
						t.Errorf("hikaricp_connections_active = %v during the downstream call, want %v (%s)", active, h.wantActive, h.why)
					}
					// The usage timer is recorded when the connection goes back:
					// held, it covers the 1.1 s wait plus the 300 ms delay.
					used := tg.metric(t, "hikaricp_connections_usage_seconds_sum") - usedBefore
					if h.hold && used < 1.3 || !h.hold && used > 0.5 {
						t.Errorf("connection checked out for %.3f s in total during the request, want %s (%s)", used, map[bool]string{true: ">= 1.3 s", false: "< 0.5 s"}[h.hold], h.why)
					}
				})
			}

			t.Run("the downstream is called with the order's customer id", func(t *testing.T) {
				down.mu.Lock()
				paths := strings.Join(down.paths, " ")
				down.mu.Unlock()
				// order 12 -> customer 12, order 1000 -> customer 100, order 7 -> customer 7
				for _, p := range []string{"/enrich/12", "/enrich/100", "/enrich/7"} {
					if !strings.Contains(paths+" ", p+" ") {
						t.Errorf("downstream saw %q, want %s among them", paths, p)
					}
				}
			})
		})
	}
}

func TestSpringMVCDownstreamDown(t *testing.T) {
	javaHome, jars := jars(t)
	t.Parallel()
	tg := start(t, javaHome, jars["spring-mvc"], map[string]string{
		"threadlab.downstream-url": "http://127.0.0.1:" + strconv.Itoa(freePort(t)),
		"threadlab.orders":         "10",
	})
	r := tg.get(t, "/order-summary/1")
	if r.status != http.StatusBadGateway || !strings.Contains(r.body, "threadlab.downstream-url") {
		t.Fatalf("with no downstream: %d %q, want 502 naming threadlab.downstream-url", r.status, r.body)
	}
}

// The production shape of seed 001: mvc against a real PostgreSQL started by
// env/postgres and the real env/downstream service.
func TestSpringMVCOnPostgres(t *testing.T) {
	javaHome, jars := jars(t)
	_, err := postgres.BinDir()
	testenv.Need(t, err, "PostgreSQL (the PostgreSQL path of the target)", "apt-get install postgresql (scripts/setup.sh does)")
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var pgLog bytes.Buffer
	pg, err := postgres.Start(ctx, &pgLog)
	if err != nil {
		t.Fatalf("%v\n%s", err, pgLog.String())
	}
	t.Cleanup(func() { pg.Stop() })
	down, err := downstream.Start(context.Background(), "127.0.0.1:0", 700*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { down.Close() })

	props := pg.Properties()
	props["spring.datasource.password"] = pg.Password // a test's command line; threadlab passes it in the environment
	props["threadlab.orders"] = "5000"
	props["threadlab.downstream-url"] = down.URL()
	tg := start(t, javaHome, jars["spring-mvc"], props)
	if log, _ := os.ReadFile(tg.log); !strings.Contains(string(log), "seeded 5000 orders, 500 customers (PostgreSQL)") {
		t.Fatalf("no seeding line for PostgreSQL in the log:\n%s", tg.logTail())
	}
	if got, err := pg.Exec(ctx, "SELECT count(*) FROM orders JOIN customers c ON c.id = orders.customer_id"); err != nil || strings.TrimSpace(got) != "5000" {
		t.Fatalf("joined rows in PostgreSQL = %q, %v; want 5000", got, err)
	}

	// During the downstream's delay, hold=true leaves the target's session
	// idle in a transaction on the server; hold=false leaves none.
	inTx := `SELECT count(*) FROM pg_stat_activity WHERE datname = 'threadlab' AND state = 'idle in transaction'`
	for _, h := range []struct {
		hold bool
		why  string
	}{
		{true, "the transaction spans the downstream call"},
		{false, "the connection went back to the pool in auto-commit before the call"},
	} {
		t.Run(fmt.Sprintf("hold=%v", h.hold), func(t *testing.T) {
			done := make(chan reply, 1)
			go func() {
				res, err := client.Get(fmt.Sprintf("%s/order-summary/4999?hold=%v", tg.base, h.hold))
				if err != nil {
					done <- reply{status: -1, body: err.Error()}
					return
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				done <- reply{status: res.StatusCode, body: string(b)}
			}()
			seen := 0
			var r reply
		poll:
			for {
				select {
				case r = <-done:
					break poll
				case <-time.After(50 * time.Millisecond):
					out, err := pg.Exec(ctx, inTx)
					if err != nil {
						t.Fatal(err)
					}
					n, _ := strconv.Atoi(strings.TrimSpace(out))
					seen = max(seen, n)
				}
			}
			if r.status != 200 {
				t.Fatalf("/order-summary/4999?hold=%v = %d %s", h.hold, r.status, r.body)
			}
			var s orderSummary
			if err := json.Unmarshal([]byte(r.body), &s); err != nil {
				t.Fatal(err)
			}
			// order 4999 -> customer (4998 mod 500)+1 = 499, enriched by the real downstream
			if s.CustomerID != 499 || s.Enrichment["customerId"] != float64(499) || s.Held != h.hold {
				t.Errorf("summary %+v", s)
			}
			if h.hold && seen < 1 || !h.hold && seen != 0 {
				t.Errorf("sessions idle in transaction during the call: %d (%s)", seen, h.why)
			}
		})
	}

	// A fresh JVM per trial against the same database must not seed again.
	tg.stop()
	again := start(t, javaHome, jars["spring-mvc"], props)
	if log, _ := os.ReadFile(again.log); !strings.Contains(string(log), "reusing seeded data: 5000 orders") {
		t.Errorf("second start did not reuse the seeded tables:\n%s", again.logTail())
	}
	if r := again.get(t, "/order-summary/1"); r.status != 200 {
		t.Errorf("after reuse: /order-summary/1 = %d %s", r.status, r.body)
	}
}

func TestSpringWebFlux(t *testing.T) {
	javaHome, jars := jars(t)
	t.Parallel()
	tg := start(t, javaHome, jars["spring-webflux"], nil)
	workBody := strconv.FormatInt(workSum(8, 3000), 10)
	rows := []struct {
		path, why   string
		status      int
		thread      *regexp.Regexp
		body        string
		minDuration time.Duration
		workThreads *regexp.Regexp // every entry of X-Work-Threads
		maxWorkers  int            // distinct work threads at most (0: any)
	}{
		{path: "/io?ms=100", why: "Mono.delay, answered for the event loop that took the request", status: 200, thread: eventLoop, body: "io:100", minDuration: 100 * time.Millisecond},
		{path: "/io-blocking?ms=100", why: "Thread.sleep on the event loop itself (seed 003)", status: 200, thread: eventLoop, body: "io-blocking:100", minDuration: 100 * time.Millisecond},
		{path: "/cpu?iterations=2000", why: "naive fromCallable runs on the event loop", status: 200, thread: eventLoop, body: shaChain(2000)},
		{path: "/cpu-offloaded?iterations=2000", why: "subscribeOn(parallel) moves the work to parallel-N", status: 200, thread: parallelThread, body: shaChain(2000)},
		{path: "/cpu-offloaded", why: "defaults to 20000 iterations", status: 200, thread: parallelThread, body: shaChain(20000)},
		{path: "/work?mode=serial&items=8&iterations=3000", why: "all items in order on the event loop", status: 200, thread: eventLoop, body: workBody, workThreads: eventLoop, maxWorkers: 1},
		{path: "/work?mode=subscribe&items=8&iterations=3000", why: "all items moved together to one parallel thread", status: 200, thread: parallelThread, body: workBody, workThreads: parallelThread, maxWorkers: 1},
		{path: "/work?mode=parallel&items=8&iterations=3000", why: "one rail per core on Schedulers.parallel()", status: 200, thread: parallelThread, body: workBody, workThreads: parallelThread},
		{path: "/work?mode=oversized&items=8&iterations=3000", why: "8 rails per core on the oversized scheduler", status: 200, thread: oversizedThread, body: workBody, workThreads: oversizedThread},
		{path: "/work?mode=oversized&items=64&iterations=10", why: "many items spread over more workers than cores", status: 200, thread: oversizedThread, body: strconv.FormatInt(workSum(64, 10), 10), workThreads: oversizedThread},
		{path: "/work?mode=parallel", why: "seed 004's defaults: 8 items x 12000", status: 200, thread: parallelThread, body: strconv.FormatInt(workSum(8, 12000), 10), workThreads: parallelThread},
		{path: "/work?mode=bogus", why: "an unknown mode is a 400 listing the modes", status: 400, thread: eventLoop},
		{path: "/cpu?iterations=-5", why: "bad input is a 400", status: 400, thread: eventLoop},
		{path: "/epoch-millis?delayInMillis=120", why: "waits without holding a thread, then answers the time", status: 200, minDuration: 120 * time.Millisecond},
		{path: MetricsPath, why: "JVM metrics for telemetry", status: 200, thread: eventLoop},
	}
	for _, row := range rows {
		t.Run(row.path, func(t *testing.T) {
			r := tg.get(t, row.path)
			if r.status != row.status {
				t.Fatalf("status %d, want %d (%s); body %q", r.status, row.status, row.why, r.body)
			}
			if row.thread != nil && !row.thread.MatchString(r.thread) {
				t.Errorf("X-Thread = %q, want %v (%s)", r.thread, row.thread, row.why)
			}
			if row.body != "" && r.body != row.body {
				t.Errorf("body %q, want %q", r.body, row.body)
			}
			if r.elapsed < row.minDuration {
				t.Errorf("answered in %s, want at least %s", r.elapsed, row.minDuration)
			}
			if row.workThreads != nil {
				workers := strings.Split(r.header.Get(WorkThreadsHeader), ",")
				for _, w := range workers {
					if !row.workThreads.MatchString(w) {
						t.Errorf("%s = %q: %q is not %v (%s)", WorkThreadsHeader, r.header.Get(WorkThreadsHeader), w, row.workThreads, row.why)
					}
				}
				if row.maxWorkers > 0 && len(workers) > row.maxWorkers {
					t.Errorf("%s = %q, want at most %d thread(s) (%s)", WorkThreadsHeader, r.header.Get(WorkThreadsHeader), row.maxWorkers, row.why)
				}
			}
		})
	}

	t.Run("oversized spreads 64 items over more threads than cores", func(t *testing.T) {
		r := tg.get(t, "/work?mode=oversized&items=64&iterations=2000")
		workers := strings.Split(r.header.Get(WorkThreadsHeader), ",")
		// Reactor hands each rail to its own worker; with 8 rails per core,
		// far more than one thread per core does the digests.
		if len(workers) < 3 {
			t.Fatalf("oversized used %d threads (%v); want more than a core's worth", len(workers), workers)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		r := tg.get(t, MetricsPath)
		for _, m := range []string{"jvm_threads_live_threads", "jvm_gc_", "jvm_memory_used_bytes", "process_cpu_usage"} {
			if !strings.Contains(r.body, m) {
				t.Errorf("%s has no %s", MetricsPath, m)
			}
		}
	})
}

// The built jars carry the stack the fingerprint reports.
func TestVersionsOfBuiltJars(t *testing.T) {
	_, jars := jars(t)
	want := map[string][]string{
		"spring-mvc":     {"spring-boot", "spring-framework", "tomcat", "hikaricp", "h2", "postgresql", "micrometer"},
		"spring-webflux": {"spring-boot", "spring-framework", "netty", "reactor", "reactor-netty", "micrometer"},
	}
	for name, keys := range want {
		v, err := Versions(jars[name])
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if v[k] == "" {
				t.Errorf("%s: no %s version in %v", name, k, v)
			}
		}
		if v["spring-boot"] != "4.0.7" {
			t.Errorf("%s: spring-boot %q, want 4.0.7 (the parent pom)", name, v["spring-boot"])
		}
	}
	if v, _ := Versions(jars["spring-webflux"]); v["tomcat"] != "" {
		t.Errorf("webflux ships Tomcat %s; it must run on Netty only", v["tomcat"])
	}
}
