package record

// CellStop is where one cell (variant x point) stopped and why, in run.json.
type CellStop struct {
	Variant string `json:"variant"`
	Point   string `json:"point"`
	Planned int    `json:"planned_forks"` // forks: the number, or min of {min, max}
	Max     int    `json:"max_forks"`
	Forks   int    `json:"forks"`         // forks with at least one valid iteration
	Runs    int    `json:"forks_started"` // target processes started, re-runs included
	Retries int    `json:"retries"`       // re-run iterations and forks, from the retry budget
	Reason  string `json:"reason"`        // "planned n reached", "decided at n=7", "max reached", "retry budget spent: ..."
}

// Buckets of WallClock.Stages (run.json's time.stages_s).
const (
	StageSetup     = "setup" // host check, fingerprint, services
	StageBuild     = "build"
	StageStarts    = "starts"
	StageWarmups   = "warm-ups"
	StageCoolDowns = "cool-downs"
	StageMeasure   = "measurement"
	StageStops     = "stops"
	StageFinishing = "finishing"
	StageOther     = "other" // inside the trials stage: writing data, evaluating claims between rounds
)

// StageOrder is the buckets in the order the terminal summary names them.
var StageOrder = []string{StageMeasure, StageStarts, StageWarmups, StageCoolDowns, StageStops, StageBuild, StageSetup, StageFinishing, StageOther}

// WallClock splits a run's wall time by what it was spent on, in seconds.
// Measured is the load the statistics use; everything else is dead time.
type WallClock struct {
	Wall     float64            `json:"wall_s"`
	Measured float64            `json:"measured_s"`
	Stages   map[string]float64 `json:"stages_s"` // build, starts, warm-ups, cool-downs, measurement, stops, finishing, other
}

// Affinity is the CPU affinity read back from the processes of one role
// (target, load generator, postgres, downstream) against what the
// manifest's pinning asked for, in run.json: one entry per distinct result,
// counting the processes that gave it.
type Affinity struct {
	Role      string `json:"role"`
	Asked     string `json:"asked"`  // the manifest's CPU list; "" when that role was not pinned
	Actual    string `json:"actual"` // Cpus_allowed_list read back, the union over the process's threads
	Processes int    `json:"processes"`
	Pids      []int  `json:"pids,omitempty"` // the first few of them
	// Mixed: the threads of a process did not all have the same mask.
	Mixed bool `json:"mixed,omitempty"`
	// Mismatch: a role was pinned and the kernel reports other CPUs.
	Mismatch bool `json:"mismatch,omitempty"`
}
