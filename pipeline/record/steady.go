package record

// SteadyFile is steady.json: the steady-state classification of every
// cell's forks and measured windows (issue 10), written by the aggregate
// stage. It is optional: runs made before it existed have none.
const SteadyFile = "steady.json"

// Steady is the content of steady.json.
type Steady struct {
	Metric string       `json:"metric"` // the primary metric the iterations were classified on
	Cells  []SteadyCell `json:"cells"`
	// FirstIteration is the run-wide test of the first measured iteration
	// against the later ones of its fork; nil when no fork had two
	// iterations.
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
	Forks       []SteadyFork   `json:"forks"`
	Windows     []SteadyWindow `json:"windows,omitempty"`
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
	Class      string `json:"class"`       // flat, warmup, slowdown, no steady state; "" below 3 iterations (not classified)
	SteadyFrom int    `json:"steady_from"` // 0-based index of the first steady iteration; -1 when none
	Excluded   int    `json:"excluded"`    // iterations left out of its median
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
