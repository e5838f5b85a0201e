// Command benchserver is the fast server of `make bench-loadgen`: a
// single-threaded epoll loop that answers every request on a connection
// with the same small response (TechEmpower's plaintext). It does as little
// as possible per request, so that the client under test, not the server,
// is the bottleneck of the comparison.
//
// It understands just enough HTTP for a benchmark: it counts request heads
// (ends of "\r\n\r\n") and ignores bodies, so it is only fit for bodiless
// requests such as the GETs the comparison sends.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

const response = "HTTP/1.1 200 OK\r\nServer: benchserver\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!"

// conn is one client connection's state.
type conn struct {
	match int    // how many bytes of "\r\n\r\n" the last read ended with
	out   []byte // responses the socket did not take yet
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	flag.Parse()
	if err := serve(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "benchserver:", err)
		os.Exit(1)
	}
}

func serve(addr string) error {
	runtime.LockOSThread()
	tcp, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return err
	}
	lfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	unix.SetsockoptInt(lfd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	sa := &unix.SockaddrInet4{Port: tcp.Port}
	copy(sa.Addr[:], tcp.IP.To4())
	if err := unix.Bind(lfd, sa); err != nil {
		return err
	}
	if err := unix.Listen(lfd, 4096); err != nil {
		return err
	}
	got, _ := unix.Getsockname(lfd)
	fmt.Printf("listening on 127.0.0.1:%d\n", got.(*unix.SockaddrInet4).Port)
	os.Stdout.Sync()

	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, lfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(lfd)}); err != nil {
		return err
	}
	conns := map[int32]*conn{}
	events := make([]unix.EpollEvent, 256)
	in := make([]byte, 64<<10)
	out := make([]byte, 0, 64<<10)
	for {
		n, err := unix.EpollWait(ep, events, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			if fd == lfd {
				for {
					cfd, _, err := unix.Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
					if err != nil {
						break
					}
					unix.SetsockoptInt(cfd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
					conns[int32(cfd)] = &conn{}
					unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, cfd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(cfd)})
				}
				continue
			}
			c := conns[ev.Fd]
			if c == nil {
				continue
			}
			if ev.Events&unix.EPOLLOUT != 0 && len(c.out) > 0 {
				k, err := unix.Write(fd, c.out)
				if err != nil && err != unix.EAGAIN {
					closeConn(ep, fd, conns)
					continue
				}
				c.out = c.out[max(k, 0):]
				if len(c.out) == 0 {
					unix.EpollCtl(ep, unix.EPOLL_CTL_MOD, fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(fd)})
				}
			}
			if ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) == 0 {
				continue
			}
			k, err := unix.Read(fd, in)
			if k <= 0 || (err != nil && err != unix.EAGAIN) {
				if err == unix.EAGAIN {
					continue
				}
				closeConn(ep, fd, conns)
				continue
			}
			reqs := 0
			for _, b := range in[:k] {
				switch {
				case b == "\r\n\r\n"[c.match]:
					c.match++
					if c.match == 4 {
						reqs++
						c.match = 0
					}
				case b == '\r':
					c.match = 1
				default:
					c.match = 0
				}
			}
			if reqs == 0 {
				continue
			}
			out = out[:0]
			for range reqs {
				out = append(out, response...)
			}
			if len(c.out) > 0 { // still blocked: queue behind what is waiting
				c.out = append(c.out, out...)
				continue
			}
			w, err := unix.Write(fd, out)
			if err != nil && err != unix.EAGAIN {
				closeConn(ep, fd, conns)
				continue
			}
			if w = max(w, 0); w < len(out) {
				c.out = append([]byte(nil), out[w:]...)
				unix.EpollCtl(ep, unix.EPOLL_CTL_MOD, fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP, Fd: int32(fd)})
			}
		}
	}
}

func closeConn(ep, fd int, conns map[int32]*conn) {
	unix.EpollCtl(ep, unix.EPOLL_CTL_DEL, fd, nil)
	unix.Close(fd)
	delete(conns, int32(fd))
}
