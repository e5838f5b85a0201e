package record

// SkippedVariant is a variant of the manifest that did not run on this
// host, and why: the JDK it asks for is not installed, or the targets
// cannot run on it.
type SkippedVariant struct {
	Variant string `json:"variant"`
	JDK     int    `json:"jdk,omitempty"` // the feature release the variant asked for
	Reason  string `json:"reason"`
}

// VariantJDK is the JDK a variant with jdk: N ran on (issue 26: the same
// jar on JDK 21 and JDK 25), beside the run's own JDK in the fingerprint.
type VariantJDK struct {
	Variant string `json:"variant"`
	JDK     int    `json:"jdk"`     // the feature release asked for
	Version string `json:"version"` // JAVA_VERSION of the JDK found, "21.0.8"
	Home    string `json:"home"`
}
