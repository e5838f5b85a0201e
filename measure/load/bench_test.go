package load

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// fastServer answers every request head with a fixed small response, from
// one goroutine per connection: as cheap a server as Go allows, so the
// benchmarks below time the client.
func fastServer(tb testing.TB) string {
	const resp = "HTTP/1.1 200 OK\r\nContent-Length: 13\r\nX-Thread: t1\r\n\r\nHello, World!"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				out := make([]byte, 0, 4096)
				match := 0
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					out = out[:0]
					for _, b := range buf[:n] {
						switch {
						case b == "\r\n\r\n"[match]:
							if match++; match == 4 {
								out = append(out, resp...)
								match = 0
							}
						case b == '\r':
							match = 1
						default:
							match = 0
						}
					}
					if _, err := c.Write(out); err != nil {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// benchGroup builds a group as Run would, without running it.
func benchGroup(tb testing.TB, url string, g Group) *groupRun {
	t, err := parseTarget(url)
	if err != nil {
		tb.Fatal(err)
	}
	var sockets atomic.Int64
	gr, err := newGroupRun(0, normalize(0, g), t, 1, &sockets)
	if err != nil {
		tb.Fatal(err)
	}
	gr.t0 = time.Now()
	gr.ctx = context.Background()
	return gr
}

// BenchmarkRoundTrip times one keep-alive request on one connection,
// recording included; it must not allocate.
func BenchmarkRoundTrip(b *testing.B) {
	for _, tc := range []struct {
		name string
		path string
	}{{"fixed", "/plaintext"}, {"template", "/item/{random 1..100000}"}} {
		b.Run(tc.name, func(b *testing.B) {
			g := benchGroup(b, fastServer(b), Group{Model: Closed, Users: 1, Duration: time.Hour,
				Requests: get(tc.path), CountHeader: "X-Thread"})
			w := g.addWorker(0)
			defer w.finish()
			w.do(g.now()) // dial outside the loop
			b.ReportAllocs()
			for b.Loop() {
				w.do(g.now())
			}
			if w.tally.flush(); g.rec.classes[classOK] != int64(b.N)+1 {
				b.Fatalf("%d ok of %d", g.rec.classes[classOK], b.N+1)
			}
		})
	}
}

// BenchmarkRoundTripParallel runs a connection per goroutine, closer to a
// closed model with many users.
func BenchmarkRoundTripParallel(b *testing.B) {
	g := benchGroup(b, fastServer(b), Group{Model: Closed, Users: 1, Duration: time.Hour, Requests: get("/")})
	var id atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		w := g.addWorker(int(id.Add(1)))
		defer w.finish()
		for pb.Next() {
			w.do(g.now())
		}
	})
}

func TestRoundTripNoAllocs(t *testing.T) {
	g := benchGroup(t, fastServer(t), Group{Model: Closed, Users: 1, Duration: time.Hour,
		Requests: get("/x/{random 1..9}"), CountHeader: "X-Thread"})
	w := g.addWorker(0)
	defer w.finish()
	w.do(g.now())
	if a := testing.AllocsPerRun(200, func() { w.do(g.now()) }); a != 0 {
		t.Errorf("a keep-alive round trip allocated %v times, want 0", a)
	}
}
