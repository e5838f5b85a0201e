package record

// SteadyFile is steady.json: the steady-state classification of every
// cell's forks (issues 10 and 20), written by the aggregate stage: per
// fork, its warm-up (rounds, length, why it stopped) and what its measured
// points were classified as, which of them the verdicts use, or that the
// fork was excluded. It is optional: runs made before it existed have none.
const SteadyFile = "steady.json"

// Steady is the content of steady.json.
type Steady struct {
	Metric string       `json:"metric"` // the primary metric the iterations were classified on
	Cells  []SteadyCell `json:"cells"`
	// Rule names the steady-state rules the file was made with, for the
	// report's Method ("" in runs made before issue 20).
	Rule string `json:"rule,omitempty"`
	// EveryIteration lists the metrics that do not warm up
	// (metric.Def.NoWarmup): their claims and summary.csv rows read every
	// valid measured iteration of every fork, the iterations and forks the
	// cells below exclude included. Absent in runs made before issue 20's
	// per-metric selection, where every metric read the steady iterations.
	EveryIteration []string `json:"every_iteration,omitempty"`
	// Own holds, for each metric with its own steady state that the run's
	// claims or preconditions read (metric.Def.OwnSteady: the target's CPU), its
	// classification on the iterations the primary left: each fork's
	// later steady start, and the forks where the metric never settled.
	// Fork values are left out (trials.csv has them). Absent in runs
	// judged before the rule.
	Own []SteadyOwn `json:"own,omitempty"`
	// FirstIteration is the run-wide first-iteration test of runs made
	// before issue 20 replaced it with per-fork selection; kept so that
	// their steady.json still reads. New runs leave it nil.
	FirstIteration *FirstIteration `json:"first_iteration,omitempty"`
}

// FirstIteration is the across-forks check of the warm-up: in how many
// forks (of every cell of the run) the first measured iteration was worse
// than the median of the fork's later iterations, and the one-sided sign
// test of that count. Per-fork changepoint detection cannot see a slow
// first iteration in a sequence of three; fifteen forks that all start
// slow can (p = 2^-15). When the test is significant (Excluded) the first
// iteration of every fork with two or more is left out, in every cell
// alike, and the run says its warm-up was too short.
type FirstIteration struct {
	Worse    int     `json:"worse"`    // forks whose first iteration was worse
	Better   int     `json:"better"`   // forks whose first iteration was better (ties count in neither)
	P        float64 `json:"p"`        // P(Bin(worse+better, 1/2) >= worse)
	Excluded bool    `json:"excluded"` // the first iteration of every fork was left out
}

// SteadyCell is the steady-state evidence of one cell (variant x point x
// measured group).
type SteadyCell struct {
	Variant string `json:"variant"`
	Point   string `json:"point"`
	Group   string `json:"group"`
	// Consistency is steady.Forks' label over the classified forks: a
	// class when all agree, "good inconsistent" or "bad inconsistent".
	Consistency string         `json:"consistency"`
	Counts      map[string]int `json:"counts"`    // classified forks per class
	Unsettled   int            `json:"unsettled"` // forks with no steady state
	Excluded    int            `json:"excluded"`  // iterations left out of the fork medians
	// Cold: the variant measures its start (measure: cold); nothing was
	// selected.
	Cold bool `json:"cold,omitempty"`
	// ExcludedForks names the forks left out of the cell because they never
	// reached a steady state; SteadyForks counts the forks the verdicts use.
	ExcludedForks []int          `json:"excluded_forks,omitempty"`
	SteadyForks   int            `json:"steady_forks"`
	Forks         []SteadyFork   `json:"forks"`
	Windows       []SteadyWindow `json:"windows,omitempty"`
	// WarmupMs is the warm-up after which every fork's warm-up rounds were
	// steady (warmup.csv); WarmupOK is false when some fork never settled
	// or there were too few rounds; WarmupNote says why, for the report.
	WarmupMs   float64 `json:"warmup_steady_after_ms"`
	WarmupOK   bool    `json:"warmup_ok"`
	WarmupNote string  `json:"warmup_note,omitempty"`
}

// SteadyFork is one fork's iteration sequence, classified.
type SteadyFork struct {
	Fork       int    `json:"fork"`
	Iterations int    `json:"iterations"`
	Class      string `json:"class"`       // flat, warmup, slowdown, no steady state; "" when not classified (too few points, or cold)
	SteadyFrom int    `json:"steady_from"` // 0-based index of the first steady iteration; -1 when none
	Excluded   int    `json:"excluded"`    // iterations left out of its median
	// Basis is what the class was found on: "iterations" (one value per
	// iteration), "seconds" (the per-second series of its windows, for a
	// timed load), "cold" (measure: cold: not classified) or "too few
	// points" (fewer than 10 of either: not classified, kept).
	Basis string `json:"basis,omitempty"`
	// Points is how many values were classified; SteadyPoint is the index
	// among them of the first steady one (-1: none).
	Points      int `json:"points,omitempty"`
	SteadyPoint int `json:"steady_point"`
	// Values are the points classified, in order (the report draws them
	// with the steady start marked); absent when not classified.
	Values []float64 `json:"values,omitempty"`
	// Dropped: the fork never reached a steady state and is left out of
	// the cell (named in the cell's ExcludedForks).
	Dropped bool `json:"dropped,omitempty"`
	// The fork's warm-up, from warmup.csv: rounds, their summed length,
	// why it stopped ("steady", "max", or "fixed" for a fixed warm-up) and
	// the stopping rule's evidence on those rounds.
	WarmupRounds   int     `json:"warmup_rounds"`
	WarmupMs       float64 `json:"warmup_ms"`
	WarmupStop     string  `json:"warmup_stop,omitempty"`
	WarmupEvidence string  `json:"warmup_evidence,omitempty"`
}

// SteadyWindow is one measured window's per-second throughput, classified.
type SteadyWindow struct {
	Trial      int    `json:"trial"`
	Fork       int    `json:"fork"`
	Iteration  int    `json:"iteration"`
	Seconds    int    `json:"seconds"`
	Class      string `json:"class"`
	SteadyFrom int    `json:"steady_from"`
}

// ReadSteady reads dir/steady.json; ok is false when the run has none.
func ReadSteady(dir string) (st Steady, ok bool, err error) {
	b, err := readOptional(dir, SteadyFile)
	if err != nil || b == nil {
		return st, false, err
	}
	if err := ReadJSON(dir, SteadyFile, &st); err != nil {
		return st, false, err
	}
	return st, true, nil
}

// SteadyOwn is one metric's own steady-state classification (Steady.Own).
type SteadyOwn struct {
	Metric string       `json:"metric"`
	Cells  []SteadyCell `json:"cells"`
}
