package trial

import (
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/threadlab/threadlab/experiments"
	"github.com/threadlab/threadlab/measure/load"
	"github.com/threadlab/threadlab/store/record"
)

// CheckBounds on the rows of io-bound's platform variant: the published
// 626 ms trial becomes invalid with the floor's reason, a trial whose
// shares left 100 ms apart with the spread's, and a possible one stays
// valid with its spread recorded. A reason already there is kept.
func TestCheckBounds(t *testing.T) {
	m, err := experiments.Load("../../experiments/io-bound.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	plan := load.Plan{Groups: []load.Group{{Name: m.Load.Measure, Model: load.Burst, Burst: 600, Requests: []load.Request{{Path: "/io?ms=300"}}}}}
	res := func(wall time.Duration, releases ...time.Duration) *load.Result {
		h := hdrhistogram.New(1, 60_000_000, 3)
		h.RecordValue(307_000)
		h.RecordValue(wall.Microseconds())
		g := load.GroupResult{Name: m.Load.Measure, Model: load.Burst, Requests: 600, OK: 600, Wall: wall, Latency: h}
		if len(releases) > 1 {
			g.Releases, g.Release, g.ReleaseSpread = releases, releases[0], releases[1]-releases[0]
		}
		return &load.Result{Groups: []load.GroupResult{g}}
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, c := range []struct {
		why     string
		variant int
		res     *load.Result
		before  string // a reason the row had already
		valid   bool
		reason  []string
		spread  float64
	}{
		{"the published 626 ms platform trial", 0, res(ms(626)), "", false, []string{"wall 626ms is below the 900ms floor"}, 0},
		{"platform in three waves", 0, res(ms(960), ms(500), ms(502)), "", true, nil, 2},
		{"shares 100 ms apart", 0, res(ms(1060), ms(500), ms(600)), "", false, []string{"the burst left its generators 100ms apart"}, 100},
		{"virtual has no wave floor: 626 ms is possible", 1, res(ms(626)), "", true, nil, 0},
		{"an earlier reason is kept first", 0, res(ms(626)), "host noise: 40%", false, []string{"host noise: 40%; wall 626ms"}, 0},
	} {
		rows := []record.Trial{{Group: m.Load.Measure, Valid: c.before == "", Reason: c.before}}
		CheckBounds(m, m.Variants[c.variant], plan, c.res, rows)
		r := rows[0]
		if r.Valid != c.valid || r.ReleaseSpreadMs != c.spread {
			t.Errorf("%s: valid %v spread %g ms (reason %q), want valid %v spread %g", c.why, r.Valid, r.ReleaseSpreadMs, r.Reason, c.valid, c.spread)
		}
		for _, w := range c.reason {
			if !strings.Contains(r.Reason, w) {
				t.Errorf("%s: reason %q, want it to say %q", c.why, r.Reason, w)
			}
		}
		if c.valid && r.Reason != "" {
			t.Errorf("%s: valid with reason %q", c.why, r.Reason)
		}
	}
}
