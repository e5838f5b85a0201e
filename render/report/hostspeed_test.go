package report

import (
	"math"
	"strings"
	"testing"

	"github.com/threadlab/threadlab/stats"
	"github.com/threadlab/threadlab/store/record"
)

// spinRun is a run of four cells, cpu-a and cpu-b whose burst wall time
// follows the host's speed probe in proportion, io-a and io-b whose wall
// time (a 300-ms wait) follows its rank but moves a twentieth as much,
// forks forks each of three windows; the probe slows by step a fork in
// the order the forks ran (fork 1 of every cell first, as interleaving
// does).
func spinRun(forks int, step float64, probed bool) *record.Run {
	var ts []record.Trial
	jitter := []float64{0.97, 1.02, 0.99, 1.03, 1.0, 0.98, 1.01}
	for f := 1; f <= forks; f++ {
		spin := 1600 * (1 + step*float64(f-1))
		for i, v := range []string{"cpu-a", "cpu-b", "io-a", "io-b"} {
			for it := 1; it <= 3; it++ {
				wall := 300 * (1 + 0.05*(spin/1600-1)) * (1 + 0.001*(jitter[(f*3+it+i)%len(jitter)]-1)) // the io cells
				if strings.HasPrefix(v, "cpu") {
					wall = 0.2 * spin * (1 + 0.005*float64(it))
				}
				t := record.Trial{Variant: v, Group: "main", Fork: f, Iteration: it, Valid: true, WallMs: wall}
				if probed {
					t.HostSpinNs = spin * (1 + 0.002*float64(it))
				}
				ts = append(ts, t)
			}
		}
		// An invalid window and another group's: neither is read.
		ts = append(ts, record.Trial{Variant: "io-a", Group: "main", Fork: f, Valid: false, WallMs: 1e6, HostSpinNs: 1e6},
			record.Trial{Variant: "io-a", Group: "background", Fork: f, Valid: true, WallMs: 1e6, HostSpinNs: 1})
	}
	return &record.Run{Meta: record.Meta{Measured: "main", Primary: "wall_ms"}, Trials: ts}
}

func spinView(r *record.Run) *runView {
	return &runView{run: r,
		checks: map[string]*stats.Check{
			"cpu-same": {Metric: "wall_ms", Compare: []string{"cpu-a", "cpu-b"}},
			"io-same":  {Metric: "wall_ms", Compare: []string{"io-a", "io-b"}},
		},
		recorded: []record.Verdict{{ID: "cpu-same"}, {ID: "io-same"}}}
}

func TestHostSpeed(t *testing.T) {
	for _, tt := range []struct {
		why       string
		run       *record.Run
		drifted   bool
		moved     string
		cpu, io   bool // the claim's metric followed the probe
		cpuWhy    string
		noteOnCPU bool
		noSection bool
	}{
		{"6 forks, the probe slows 5% a fork (25% in all): the CPU cells' wall time follows it; the I/O cells' follows its rank but moves 1%, too little to name",
			spinRun(6, 0.05, true), true, "25%", true, false, "", true, false},
		{"6 forks, 1.2% a fork: the host is steady (6% < 10%) but the CPU cells still follow it by 6%, so the card says so",
			spinRun(6, 0.012, true), false, "6%", true, false, "", true, false},
		{"4 forks a cell: 8 forks a claim are too few for the test, nothing is named",
			spinRun(4, 0.05, true), true, "15%", false, false, "fewer than 10 forks with a probe and a value", false, false},
		{"no window probed (a target on another host, a run before the column): no section, no note",
			spinRun(6, 0.05, false), false, "", false, false, "", false, true},
	} {
		v := spinView(tt.run)
		hs := v.HostSpeed()
		if tt.noSection {
			if hs != nil {
				t.Errorf("%s: section %+v, want none", tt.why, hs)
			}
		} else {
			if hs == nil {
				t.Fatalf("%s: no section", tt.why)
			}
			if hs.Drifted != tt.drifted || hs.Moved != tt.moved || len(hs.Rows) != 2 {
				t.Errorf("%s: drifted %v moved %q rows %d, want %v %q 2", tt.why, hs.Drifted, hs.Moved, len(hs.Rows), tt.drifted, tt.moved)
			} else {
				if tt.moved == "25%" && (hs.Rows[1].P != "<0.001" || hs.Rows[1].Follow != "1%") {
					t.Errorf("%s: the I/O claim p %s, moved %s; want <0.001 and 1%%: its rank follows, its size does not", tt.why, hs.Rows[1].P, hs.Rows[1].Follow)
				}
				if hs.Rows[0].Tracks != tt.cpu || hs.Rows[1].Tracks != tt.io || hs.Rows[0].Why != tt.cpuWhy {
					t.Errorf("%s: cpu followed %v (%s, tau %s p %s), io %v; want %v (%q), %v", tt.why, hs.Rows[0].Tracks, hs.Rows[0].Why, hs.Rows[0].Tau, hs.Rows[0].P, hs.Rows[1].Tracks, tt.cpu, tt.cpuWhy, tt.io)
				}
			}
		}
		note := v.spinClaimNote(v.checks["cpu-same"])
		if (note != "") != tt.noteOnCPU {
			t.Errorf("%s: the CPU claim's card note %q, want one: %v", tt.why, note, tt.noteOnCPU)
		}
		if tt.noteOnCPU && !strings.Contains(note, "slower host, larger wall time: by about") {
			t.Errorf("%s: the note %q does not say which way the metric followed", tt.why, note)
		}
		if io := v.spinClaimNote(v.checks["io-same"]); io != "" {
			t.Errorf("%s: the I/O claim's card note %q, want none", tt.why, io)
		}
		var out strings.Builder
		if err := pages.ExecuteTemplate(&out, "hostspeed", v); err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(out.String(), `<section id="host-speed">`); has == tt.noSection {
			t.Errorf("%s: section rendered %v, want %v", tt.why, has, !tt.noSection)
		}
		if tt.drifted && !strings.Contains(out.String(), "The host's speed moved during this run") {
			t.Errorf("%s: the section does not say the host moved:\n%s", tt.why, out.String())
		}
	}
}

// TestTrackOfCellRelative: a variant that is slower throughout does not
// make its metric "follow" the probe: forks are taken relative to their
// cell, so only the drift within a cell counts.
func TestTrackOfCellRelative(t *testing.T) {
	var forks []spinFork
	for f := range 12 {
		// The probe alternates fast and slow forks; the cells differ by 2x,
		// and each cell's forks vary without regard to the probe.
		spin := 1600.0 + 400*float64(f%2)
		forks = append(forks, spinFork{cell: "slow|", spin: spin, value: 800 + 10*float64((f*7)%5)},
			spinFork{cell: "fast|", spin: spin + 1, value: 400 + 5*float64((f*3)%5)})
	}
	tr := trackOf(forks)
	if tr.Tracks || math.IsNaN(tr.K.Tau) || tr.Forks != 24 {
		t.Errorf("followed %v (tau %v, p %v, %d forks); want not followed over 24 forks", tr.Tracks, tr.K.Tau, tr.K.P, tr.Forks)
	}
}
