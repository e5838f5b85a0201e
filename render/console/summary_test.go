package console

import (
	"bytes"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/store/record"
)

func TestDesign(t *testing.T) {
	spring := "variants:\n  a: {target: spring-mvc}\nload:\n  warmup: 2s\n"
	tests := []struct {
		forks      string
		iterations int
		manifest   string
		want       string
		why        string
	}{
		{"5", 4, spring, "5 forks x 4 iterations per cell (fresh JVM per fork, 2s warm-up)", "the brief's wording for a Spring experiment"},
		{"1", 1, "variants:\n  a: {command: [srv, \"{port}\"]}\n", "1 fork x 1 iteration per cell (fresh process per fork, no warm-up)", "a command target, singular, no warm-up"},
		{"4..10", 2, spring, "4..10 forks x 2 iterations per cell (fresh JVM per fork, 2s warm-up)", "a sequential design keeps its range"},
		{"3", 0, "", "3 forks x 1 iteration per cell (fresh target per fork, no warm-up)", "no manifest as run: the plain words, at least one iteration"},
	}
	for _, tt := range tests {
		if got := Design(tt.forks, tt.iterations, []byte(tt.manifest)); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.why, got, tt.want)
		}
	}
}

func TestAffinityLines(t *testing.T) {
	m := record.Meta{Affinity: []record.Affinity{
		{Role: "target", Asked: "1", Actual: "0-1", Processes: 1, Mismatch: true},
		{Role: "target", Asked: "1", Actual: "1", Processes: 29},
		{Role: "load generator", Actual: "0-1", Processes: 1, Mixed: true},
	}}
	var b bytes.Buffer
	affinityLines(&b, m)
	want := "CPU affinity, asked and read back from the kernel:\n" +
		"  target: asked 1, read back 1 in 29 processes; asked 1, read back 0-1 in 1 process (MISMATCH)\n" +
		"  load generator: asked none, read back 0-1 in 1 process (threads differ)\n"
	if b.String() != want {
		t.Errorf("got:\n%swant (the matching result first, the mismatch marked):\n%s", b.String(), want)
	}
	b.Reset()
	affinityLines(&b, record.Meta{})
	if strings.TrimSpace(b.String()) != "" {
		t.Errorf("a run without read-back prints nothing, got %q", b.String())
	}
}

func TestDeadTime(t *testing.T) {
	// The pool-sweep run: 180 s measured of 403 s; 125 s of starts is 31%, 48 s of warm-ups 12%.
	w := &record.WallClock{Wall: 403, Measured: 180, Stages: map[string]float64{
		"measurement": 180, "starts": 125, "warm-ups": 48, "cool-downs": 30, "finishing": 20, "other": 1}}
	want := "measured 180 s of 403 s wall (45%); dead time 55% (wall time outside measurement; the catalog's goal is 35% or less): starts 31%, warm-ups 12%, cool-downs 7%, finishing 5%"
	if got := DeadTime(w); got != want {
		t.Errorf("DeadTime = %q\nwant      %q (buckets under 0.5%% of the wall are left out)", got, want)
	}
	if DeadTime(nil) != "" || DeadTime(&record.WallClock{}) != "" {
		t.Errorf("no wall clock: no line")
	}
}
