package supervise

import (
	"bytes"
	"fmt"
	"net"
	"sync"
)

// Buffer collects a program's output: Spec.Stdout and Spec.Stderr are
// written from the supervisor's copy goroutines (or ssh's) while the caller
// may read what came so far, so every access takes the lock. The zero
// value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// FreePort asks the kernel for a free TCP port on address (127.0.0.1 for a
// program of this machine) for a program to listen on. The port is free
// when FreePort returns; the program binds it a moment later.
func FreePort(address string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(address, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port on %s: %w", address, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
