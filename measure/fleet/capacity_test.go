package fleet

import (
	"strings"
	"testing"
	"time"

	"github.com/threadlab/threadlab/measure/load"
)

func TestCapacity(t *testing.T) {
	req := []load.Request{{Path: "/"}}
	tuned := Limits{Ports: 64512, Files: 1 << 20, TimeWait: time.Second}
	for _, c := range []struct {
		why      string
		g        load.Group
		n        int
		lim      Limits
		held     int     // of generator 1
		newPerS  float64 // of generator 1
		ports    int
		problems []string // substrings of generator 1's problems
	}{
		{"60k keep-alive users on 3 untuned hosts: ports fit (20,000 < 28,232), nofile 1024 does not",
			load.Group{Name: "g", Model: load.Closed, Users: 60000, Duration: time.Second, Requests: req}, 3, Limits{},
			20000, 0, 20000, []string{"needs 20064 descriptors, the limit is 1024"}},
		{"seed 002's connection burst at 60k on 3 tuned hosts: 20,000 held + 20,000/0.8 s x 1 s = 45,000 ports",
			load.Group{Name: "g", Model: load.Closed, Users: 60000, ThinkMin: 800 * time.Millisecond, ThinkMax: time.Second, Duration: time.Second, NoKeepAlive: true, Requests: req}, 3, tuned,
			20000, 25000, 45000, nil},
		{"the same on 1 tuned host: 60,000 + 75,000 = 135,000 ports > 64,512",
			load.Group{Name: "g", Model: load.Closed, Users: 60000, ThinkMin: 800 * time.Millisecond, ThinkMax: time.Second, Duration: time.Second, NoKeepAlive: true, Requests: req}, 1, tuned,
			60000, 75000, 135000, []string{"needs 135000 local ports toward the target, the port range has 64512"}},
		{"an open rate with preallocated connections, kept alive: 2,000 / 2",
			load.Group{Name: "g", Model: load.Open, Rate: 2000, Preallocate: 2000, Duration: time.Second, Requests: req}, 2, tuned,
			1000, 0, 1000, nil},
		{"a burst without keep-alive, untuned: 300 + 300 x 60 s = 18,300 ports",
			load.Group{Name: "g", Model: load.Burst, Burst: 600, NoKeepAlive: true, Requests: req}, 2, Limits{Files: 4096},
			300, 300, 18300, nil},
	} {
		shares, err := Capacity(load.Plan{Target: "http://t", Groups: []load.Group{c.g}}, c.n, c.lim)
		if err != nil {
			t.Errorf("%s: %v", c.why, err)
			continue
		}
		if len(shares) != c.n {
			t.Errorf("%s: %d shares, want one per generator (%d)", c.why, len(shares), c.n)
			continue
		}
		s := shares[0]
		if s.Held != c.held || s.NewPerSec != c.newPerS || s.Ports != c.ports || s.Files != c.held+fileReserve {
			t.Errorf("%s: held %d new/s %g ports %d files %d; want %d, %g, %d, %d", c.why, s.Held, s.NewPerSec, s.Ports, s.Files, c.held, c.newPerS, c.ports, c.held+fileReserve)
		}
		if len(s.Problems) != len(c.problems) {
			t.Errorf("%s: problems %q, want %d", c.why, s.Problems, len(c.problems))
			continue
		}
		for i, p := range c.problems {
			if !strings.Contains(s.Problems[i], p) {
				t.Errorf("%s: problem %q, want it to say %q", c.why, s.Problems[i], p)
			}
		}
	}
	if _, err := Capacity(load.Plan{Target: "http://t", Groups: []load.Group{{Name: "g", Model: load.Closed, Users: 2, Duration: time.Second, Requests: req}}}, 3, Limits{}); err == nil {
		t.Errorf("2 users over 3 generators: no error, want Split's")
	}
}
