// Command nethttpbaseline is the net/http side of `make bench-loadgen`: the
// load loop most Go code would write (N goroutines, one shared
// http.Client, bodies drained so connections are reused). threadlab's own
// client has to beat it by a wide margin to be worth its code.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("url", "", "target URL")
	conns := flag.Int("c", 50, "concurrent connections")
	d := flag.Duration("d", 10*time.Second, "duration")
	flag.Parse()
	if *url == "" {
		fmt.Fprintln(os.Stderr, "usage: nethttpbaseline -url URL [-c 50] [-d 10s]")
		os.Exit(2)
	}
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConns:        *conns,
		MaxIdleConnsPerHost: *conns,
		MaxConnsPerHost:     *conns,
		DisableCompression:  true,
	}}
	ctx, cancel := context.WithTimeout(context.Background(), *d)
	defer cancel()
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range *conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", *url, nil)
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil { // not the end of the run cutting a request short
						failed.Add(1)
					}
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start).Seconds()
	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"requests": ok.Load(), "errors": failed.Load(), "rps": float64(ok.Load()) / wall,
	})
}
