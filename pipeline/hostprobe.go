package pipeline

import (
	"context"
	"errors"
	"math"
	"net"
	"strconv"

	"github.com/threadlab/threadlab/env/remote"
	"github.com/threadlab/threadlab/store/record"
)

// probeBytes is what the throughput probe sends between two hosts: a few
// hundred milliseconds on a gigabit link, enough to leave TCP's slow start.
const probeBytes = 16 << 20

// probeNetwork measures the network between every pair of hosts before the
// first trial: 20 TCP connects from one to the other's sshd (each one round
// trip) and a bulk transfer of probeBytes, one pair after the other so
// that no two transfers share a link. A pair that fails keeps its error in
// the record; the run goes on (the round trips to the target that
// preflight requires were measured before).
func (hr *hostRun) probeNetwork(ctx context.Context, conns []*remote.Host, names, addrs []string) []record.Link {
	var out []record.Link
	for i := range conns {
		for j := i + 1; j < len(conns); j++ {
			if conns[i] == conns[j] {
				continue
			}
			out = append(out, probe(ctx, conns[i], conns[j], names[i], names[j], addrs[j]))
		}
	}
	return out
}

func probe(ctx context.Context, a, b *remote.Host, from, to, addr string) record.Link {
	l := record.Link{From: from, To: to, Bytes: probeBytes}
	port := b.SSHPort
	if port == 0 {
		port = 22
	}
	var errs []error
	ds, err := a.RTT(ctx, net.JoinHostPort(addr, strconv.Itoa(port)), 20)
	if err != nil {
		errs = append(errs, err)
	}
	l.RTT = rttSummary(from, to, ds)
	mbit, err := a.Throughput(ctx, b, addr, probeBytes)
	if err != nil {
		errs = append(errs, err)
	}
	l.MbitS = math.Round(mbit*10) / 10
	if err := errors.Join(errs...); err != nil {
		l.Problems = err.Error()
	}
	return l
}
