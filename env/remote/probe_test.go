package remote

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"
)

// A sink and a push on loopback: the push reports the time until the sink
// had every byte, and the sink stops when its stdin closes.
func TestSinkPush(t *testing.T) {
	in, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() { done <- sinkHelper([]string{"127.0.0.1"}, in, outW, io.Discard); outW.Close() }()
	line, err := bufio.NewReader(outR).ReadString('\n')
	port, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("sink printed %q (%v)", line, err)
	}
	go io.Copy(io.Discard, outR)
	var out, errb bytes.Buffer
	if code := pushHelper([]string{"127.0.0.1:" + strconv.Itoa(port), strconv.Itoa(4 << 20)}, &out, &errb); code != 0 {
		t.Fatalf("push: exit %d: %s", code, errb.String())
	}
	if us, err := strconv.ParseInt(strings.TrimSpace(out.String()), 10, 64); err != nil || us <= 0 {
		t.Errorf("push printed %q, want the microseconds until the sink had 4 MiB", out.String())
	}
	for _, bad := range [][]string{{"127.0.0.1:1"}, {"127.0.0.1:1", "0"}, {"127.0.0.1:1", "x"}} {
		if code := pushHelper(bad, io.Discard, io.Discard); code != 2 {
			t.Errorf("push %q: exit %d, want 2 (usage)", bad, code)
		}
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Errorf("sink: exit %d after its stdin closed, want 0", code)
	}
}
