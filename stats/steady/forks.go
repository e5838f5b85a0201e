package steady

// Consistency is the classification of a cell's forks taken together, in
// Barrett et al.'s terms: consistent when every fork has the same class;
// "good inconsistent" when the forks mix flat and warm-up only (all reach a
// steady state the same way up to how long it took); "bad inconsistent"
// otherwise (some fork slowed down or never settled while others did not).
type Consistency struct {
	Class  Class         // the common class when consistent, else empty
	Label  string        // the class, "good inconsistent" or "bad inconsistent"
	Counts map[Class]int // forks per class
	// Unsettled counts forks with no steady state: a claim that rests on
	// them must be weakened with that reason.
	Unsettled int
}

// Forks summarises the classes of a cell's forks. An empty input has an
// empty label.
func Forks(classes []Class) Consistency {
	c := Consistency{Counts: map[Class]int{}}
	for _, k := range classes {
		c.Counts[k]++
	}
	c.Unsettled = c.Counts[NoSteadyState]
	switch {
	case len(classes) == 0:
	case len(c.Counts) == 1:
		c.Class = classes[0]
		c.Label = string(classes[0])
	case c.Counts[Flat]+c.Counts[Warmup] == len(classes):
		c.Label = "good inconsistent"
	default:
		c.Label = "bad inconsistent"
	}
	return c
}
