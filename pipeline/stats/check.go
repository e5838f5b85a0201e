package stats

// Check is the machine-readable part of a claim in a manifest. It reads as
// a sentence about medians across trials:
//
//   - compare: [A, B], at_least: r   -> metric(A) / metric(B) >= r at every selected point
//   - compare: [A, B], at_most: r    -> metric(A) / metric(B) <= r at every selected point
//   - variant: V, flat_over: {k: [..]} -> metric(V) varies by at most Tolerance (default 10%)
//     across those values of sweep key k
//
// Where restricts the sweep points considered (all points when empty).
// Metric names are trials.csv columns (rps, wall_ms, p99_ms, ...). Group
// selects the request group (the measured group when empty).
type Check struct {
	Metric    string              `yaml:"metric" json:"metric"`
	Group     string              `yaml:"group,omitempty" json:"group,omitempty"`
	Variant   string              `yaml:"variant,omitempty" json:"variant,omitempty"`
	Compare   []string            `yaml:"compare,omitempty" json:"compare,omitempty"`
	Where     map[string][]string `yaml:"where,omitempty" json:"where,omitempty"`
	AtLeast   float64             `yaml:"at_least,omitempty" json:"at_least,omitempty"`
	AtMost    float64             `yaml:"at_most,omitempty" json:"at_most,omitempty"`
	FlatOver  map[string][]string `yaml:"flat_over,omitempty" json:"flat_over,omitempty"`
	Tolerance float64             `yaml:"tolerance,omitempty" json:"tolerance,omitempty"`
}
