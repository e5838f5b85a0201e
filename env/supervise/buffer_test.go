package supervise

import (
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestBuffer: writes from several goroutines (a program's stdout and
// stderr copiers) while another reads; go test -race checks the locking,
// and every byte written is there at the end.
func TestBuffer(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("x"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 400) {
		t.Errorf("got %d bytes, want the 400 written", len(got))
	}
}

func TestFreePort(t *testing.T) {
	p, err := FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		t.Fatalf("port %d from FreePort cannot be bound: %v", p, err)
	}
	l.Close()
	// 192.0.2.1 (TEST-NET-1) is an address of no machine here.
	if _, err := FreePort("192.0.2.1"); err == nil || !strings.Contains(err.Error(), "find a free port on 192.0.2.1") {
		t.Errorf("an address of another host: error %v, want one naming the address", err)
	}
}
