package remote

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// The network between two hosts (issue 25): a throughput probe. One host
// runs `remote-helper sink ADDRESS`, which listens on ADDRESS, prints its
// port, and for each connection reads everything, then answers one byte;
// the other runs `remote-helper push HOST:PORT BYTES`, which sends BYTES
// and prints the microseconds from its first byte to the sink's answer,
// so the figure is of data that arrived, not of data buffered locally.

// sinkHelper is `threadlab remote-helper sink ADDRESS`; it stops when its
// stdin closes.
func sinkHelper(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: threadlab remote-helper sink ADDRESS")
		return 2
	}
	l, err := net.Listen("tcp", net.JoinHostPort(args[0], "0"))
	if err != nil {
		fmt.Fprintf(stderr, "listen on %s: %v\n", args[0], err)
		return 1
	}
	fmt.Fprintln(stdout, l.Addr().(*net.TCPAddr).Port)
	go func() { io.Copy(io.Discard, stdin); l.Close() }()
	for {
		c, err := l.Accept()
		if err != nil {
			return 0
		}
		go func() {
			defer c.Close()
			c.SetDeadline(time.Now().Add(time.Minute))
			if _, err := io.Copy(io.Discard, c); err == nil {
				c.Write([]byte{1})
			}
		}()
	}
}

// pushHelper is `threadlab remote-helper push HOST:PORT BYTES`.
func pushHelper(args []string, stdout, stderr io.Writer) int {
	n := int64(0)
	if len(args) == 2 {
		n, _ = strconv.ParseInt(args[1], 10, 64)
	}
	if n <= 0 || n > 1<<30 {
		fmt.Fprintln(stderr, "usage: threadlab remote-helper push HOST:PORT BYTES (1..1073741824)")
		return 2
	}
	c, err := net.DialTimeout("tcp", args[0], 5*time.Second)
	if err != nil {
		fmt.Fprintf(stderr, "connect to %s: %v\n", args[0], err)
		return 1
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	buf := make([]byte, 64<<10)
	t0 := time.Now()
	for left := n; left > 0; {
		k, err := c.Write(buf[:min(left, int64(len(buf)))])
		if err != nil {
			fmt.Fprintf(stderr, "send to %s: %v\n", args[0], err)
			return 1
		}
		left -= int64(k)
	}
	c.(*net.TCPConn).CloseWrite()
	if _, err := io.ReadFull(c, buf[:1]); err != nil {
		fmt.Fprintf(stderr, "no answer from the sink at %s: %v\n", args[0], err)
		return 1
	}
	fmt.Fprintln(stdout, time.Since(t0).Microseconds())
	return 0
}

// Throughput sends n bytes from host h to host to (a sink on address
// there) and returns the rate in Mbit/s.
func (h *Host) Throughput(ctx context.Context, to *Host, address string, n int64) (float64, error) {
	sink, err := to.StartAgent([]string{to.Threadlab(), HelperCommand, "sink", address})
	if err != nil {
		return 0, err
	}
	defer sink.Close()
	line, err := bufio.NewReader(sink.Stdout).ReadString('\n')
	port, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil || port <= 0 {
		return 0, fmt.Errorf("host %s: the sink on %s printed %q (%v)%s", to.Name, address, line, err, indent(sink.Stderr()))
	}
	out, err := h.Run(ctx, h.Threadlab(), HelperCommand, "push", net.JoinHostPort(address, strconv.Itoa(port)), strconv.FormatInt(n, 10))
	if err != nil {
		return 0, err
	}
	us, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil || us <= 0 {
		return 0, fmt.Errorf("host %s: remote-helper push printed %q", h.Name, out)
	}
	return float64(n) * 8 / (float64(us) / 1e6) / 1e6, nil
}
