package load

import (
	"context"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// pacer sleeps with microsecond precision for the open model's dispatcher.
// A runtime timer is not precise enough: an idle Go process waits for timers
// in epoll_wait, whose timeout is in whole milliseconds, so at 1000 rps
// about one send in ten would leave over 1 ms late and the lateness would be
// the generator's, not the server's. A timerfd is an ordinary descriptor in
// the runtime's poller, and the kernel wakes it on time.
type pacer struct {
	f     *os.File
	fd    int
	buf   [8]byte
	timer *time.Timer // fallback when timerfd is unavailable
	stop  func() bool
}

func newPacer(ctx context.Context) *pacer {
	p := &pacer{}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err == nil {
		p.fd = fd
		p.f = os.NewFile(uintptr(fd), "pacer")
		p.stop = context.AfterFunc(ctx, func() { p.f.SetReadDeadline(longAgo) })
	} else {
		p.timer = time.NewTimer(time.Hour)
		p.timer.Stop()
	}
	return p
}

// sleep waits for d; false when the context ended first.
func (p *pacer) sleep(ctx context.Context, d time.Duration) bool {
	if p.f == nil {
		p.timer.Reset(d)
		select {
		case <-p.timer.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(p.fd, 0, &spec, nil); err != nil {
		time.Sleep(d)
		return ctx.Err() == nil
	}
	_, err := p.f.Read(p.buf[:])
	return err == nil && ctx.Err() == nil
}

func (p *pacer) close() {
	if p.f != nil {
		p.stop()
		p.f.Close()
	}
}
